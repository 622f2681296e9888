"""Functions as values (issue 23, item 3): nested ``def``/``lambda`` closing over
forward values, functions passed to helpers, chosen by a static test, mapped, bound
by ``functools.partial``, callable objects, NumPy functions given to a transform, and
transforms written inside the function.  Every expected value comes from JAX on the
same source (``jax_twin``) or, for state changed between calls, from a Python loop of
finite differences; float64 and float32."""

from __future__ import annotations

import functools
import inspect
from functools import partial

import function_value_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, fd_grad, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    import jax.numpy as jnp

    J = jax_twin(F)
    for _name in ("grad", "jacfwd", "jacrev", "hessian", "value_and_grad", "jvp", "jit",
                  "vmap"):
        setattr(F, f"s2s_{_name}", getattr(s2s, _name))
        setattr(J, f"s2s_{_name}", getattr(jax, _name))

CONSTRUCTS = ["nested_def", "nested_def_late", "nested_lambda", "nested_calls_nested",
              "apply_ufunc", "apply_user", "apply_closure", "apply_twice_lambda", "choose",
              "mapped", "mapped_lambda", "partial_inside", "partial_global",
              "callable_object", "grad_inside", "grad_inside_lambda", "grad_inside_closure",
              "grad_inside_default", "jacfwd_inside", "jacrev_inside", "hessian_inside",
              "value_and_grad_inside", "jvp_inside", "jvp_inside_closure", "callee_of_all",
              "jit_inside", "nested_recursive", "nested_default", "vmap_inside",
              "vmap_inside_axes", "vmap_inside_tuple"]

X = np.array([0.3, -0.7, 1.2])
V = np.array([1.0, -2.0, 0.5])
BATCH = np.array([[0.3, -0.7, 1.2], [0.1, 0.4, -0.9]])
DTYPES = [np.float64, np.float32]


close = partial(assert_close_to, f64=1e-9, f32=2e-4, dtype_of="given")


# (vmap's probe runs the first example; a callee on the branch it did not take, `relu`
# in `choose`, is probed on arguments computed from the example's values:
# tests/frontend/test_inner_transforms.py)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", CONSTRUCTS)
def test_grad_and_value_and_grad(name, dtype) -> None:
    x = X.astype(dtype)
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.grad(ours)(x), jax.grad(theirs)(x), dtype)
    close(s2s.value_and_grad(ours)(x), jax.value_and_grad(theirs)(x), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", CONSTRUCTS)
def test_jvp_jacobians_and_jit(name, dtype) -> None:
    x, v = X.astype(dtype), V.astype(dtype)
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.jvp(ours, (x,), (v,)), jax.jvp(theirs, (x,), (v,)), dtype)
    close(s2s.jit(ours)(x), theirs(x), dtype)
    close(s2s.jacfwd(ours)(x), jax.jacfwd(theirs)(x), dtype)
    close(s2s.jacrev(ours)(x), jax.jacrev(theirs)(x), dtype)


@pytest.mark.parametrize("kind", ["relu", "other", "double"])
def test_a_function_bound_in_a_static_if_under_every_transform(kind) -> None:
    """Each path of `bound_in_if` (the constant-test `if`s pick one function when the
    argument is passed): jvp, jacfwd, jacrev and jit against JAX."""
    ours = functools.partial(F.bound_in_if, kind=kind)
    theirs = functools.partial(J.bound_in_if, kind=kind)
    close(s2s.grad(F.bound_in_if)(X, kind), jax.grad(J.bound_in_if)(X, kind), np.float64)
    close(s2s.jvp(ours, (X,), (V,)), jax.jvp(theirs, (X,), (V,)), np.float64)
    close(s2s.jit(ours)(X), theirs(X), np.float64)


@pytest.mark.parametrize("name", CONSTRUCTS)
def test_vmap(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.vmap(ours)(BATCH), jax.vmap(theirs)(BATCH), np.float64)
    close(s2s.vmap(s2s.grad(ours))(BATCH), jax.vmap(jax.grad(theirs))(BATCH), np.float64)


@pytest.mark.parametrize("kind", ["tanh", "relu", "other"])
def test_a_function_chosen_by_a_static_argument(kind) -> None:
    close(s2s.grad(F.choose)(X, kind=kind), jax.grad(J.choose)(X, kind=kind), np.float64)
    close(s2s.grad(F.bound_in_if)(X, kind=kind), jax.grad(J.bound_in_if)(X, kind=kind),
          np.float64)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_a_function_bound_on_the_path_a_value_takes(dtype) -> None:
    """`if np.sum(x) > 0: act = np.tanh` (else the earlier `act = np.sin`): JAX's grad
    cannot trace the `if`, so the oracle is JAX's grad of each path's own function
    (which the test picks), finite differences, and a Python loop for vmap; calls 1 to
    10 alternate the paths."""
    f = F.bound_on_a_value

    def path(positive):  # the same source with the test decided by the caller
        def on_path(x):
            act = jnp.tanh if positive else jnp.sin
            y = act(x) * 2.0 if positive else act(x) - x
            return jnp.sum(act(x) * y)
        return on_path

    g = s2s.grad(f)
    for call in range(10):
        x = (X * (call + 1) * 0.2 * (1 if call % 2 else -1)).astype(dtype)
        on_path = path(float(np.sum(x)) > 0)
        close(g(x), jax.grad(on_path)(x), dtype)
        close(s2s.jvp(f, (x,), (V.astype(dtype),)), jax.jvp(on_path, (x,), (V.astype(dtype),)),
              dtype)
    np.testing.assert_allclose(g(X), fd_grad(f, (X,), 0)[0], rtol=1e-6, atol=1e-8)
    batch = np.stack([X, -X, 0.5 * X])
    close(s2s.vmap(f)(batch), np.array([f(r) for r in batch]), np.float64)
    close(s2s.vmap(g)(batch), np.array([g(r) for r in batch]), np.float64)
    close(s2s.jit(f)(X), f(X), np.float64)


# ---- given directly to a transform ---------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_numpy_functions_given_to_transforms(dtype) -> None:
    x = X.astype(dtype)
    a = (np.eye(3) * 2.0 + 0.1).astype(dtype)
    close(s2s.grad(np.sum)(x), jax.grad(jnp.sum)(x), dtype)
    close(s2s.vmap(np.dot)(BATCH.astype(dtype), BATCH.astype(dtype)),
          jax.vmap(jnp.dot)(BATCH.astype(dtype), BATCH.astype(dtype)), dtype)
    close(s2s.jacfwd(np.linalg.inv)(a), jax.jacfwd(jnp.linalg.inv)(a), dtype)
    close(s2s.jacrev(np.linalg.inv)(a), jax.jacrev(jnp.linalg.inv)(a), dtype)
    close(s2s.grad(np.tanh)(dtype(0.5)), jax.grad(jnp.tanh)(dtype(0.5)), dtype)
    close(s2s.jvp(np.sin, (x,), (x,)), jax.jvp(jnp.sin, (x,), (x,)), dtype)
    close(s2s.jit(np.cos)(x), np.cos(x), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_partials_and_callable_objects_given_to_transforms(dtype) -> None:
    x, v = X.astype(dtype), V.astype(dtype)
    ours, theirs = functools.partial(F.scale, k=2.5), functools.partial(J.scale, k=2.5)
    close(s2s.grad(ours)(x), jax.grad(theirs)(x), dtype)
    close(s2s.value_and_grad(ours)(x), jax.value_and_grad(theirs)(x), dtype)
    close(s2s.jvp(ours, (x,), (v,)), jax.jvp(theirs, (x,), (v,)), dtype)
    close(s2s.jacrev(ours)(x), jax.jacrev(theirs)(x), dtype)
    close(s2s.vmap(ours)(BATCH), jax.vmap(theirs)(BATCH), np.float64)
    close(s2s.jit(ours)(x), theirs(x), dtype)
    front = functools.partial(F.scale, x)  # the array bound first, k left to the call
    close(s2s.grad(front)(dtype(3.0)), jax.grad(functools.partial(J.scale, x))(dtype(3.0)),
          dtype)
    close(s2s.grad(F.QUAD)(x), jax.grad(J.QUAD)(x), dtype)
    close(s2s.jacfwd(F.QUAD)(x), jax.jacfwd(J.QUAD)(x), dtype)


def test_a_partials_bound_array_is_read_when_the_transform_runs() -> None:
    """The bound array is the partial's object: changed in place between calls, the
    next call (first, second = specialized, tenth) reads its new values, as calling
    the partial would."""
    k = np.array([1.0, 2.0, 3.0])
    g = s2s.grad(functools.partial(F.scale, k=k))
    for call in range(1, 11):
        k[:] = [call, -call, 0.5 * call]
        expected = fd_grad(lambda x: F.scale(x, k=k), (X,), 0)[0]
        np.testing.assert_allclose(g(X), expected, rtol=1e-6, atol=1e-8)


def test_a_closure_cell_rebound_between_calls_is_read_again() -> None:
    """A nested function reading a cell of its enclosing closure: the 1st, 3rd and
    10th call see the cell's value then (Python loop of finite differences)."""
    f, set_c = F.make_closure()
    g = s2s.grad(f)
    for call in range(1, 11):
        set_c(float(call) * 0.5)
        expected = fd_grad(f, (X,), 0)[0]
        np.testing.assert_allclose(g(X), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["vmap_inside_tuple", "nested_recursive"] + [
    pytest.param(n, marks=pytest.mark.slow)  # (JAX compiles each: -m slow runs them)
    for n in ("vmap_inside", "vmap_inside_axes", "jit_inside", "nested_default")])
def test_jit_on_the_jax_backend(name) -> None:
    """s2s.jit(backend="jax") traces the function on JAX: an s2s.vmap inside is JAX's
    vmap there, an s2s.jit inside a call; against JAX's jit of the twin, and its grad."""
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.jit(ours, backend="jax")(X), jax.jit(theirs)(X), np.float64)
    close(s2s.jit(s2s.grad(ours), backend="jax")(X), jax.grad(theirs)(X), np.float64)


@pytest.mark.slow
def test_a_nested_recursive_def_with_its_depth_changing_per_call() -> None:
    """Depths 0, 1, 5, 2 ... over ten calls, each call's recursion its own: calls 1,
    2, 3 and 10 against JAX (grad; jvp at the first and last)."""
    g = s2s.grad(F.nested_recursive)
    for call, depth in enumerate((0, 1, 5, 2, 3, 0, 4, 1, 6, 2)):
        x = X * (1.0 + 0.1 * call)
        got = g(x, depth)
        if call in (0, 1, 2, 9):
            close(got, jax.grad(J.nested_recursive)(x, depth), np.float64)
        if call in (0, 9):
            close(s2s.jvp(lambda y: F.nested_recursive(y, depth), (x,), (V,)),
                  jax.jvp(lambda y: J.nested_recursive(y, depth), (x,), (V,)), np.float64)


def recursive_on_values(x):
    def inner(t):
        return inner(np.sin(t) - 1.0) if np.sum(t) > 0 else t * t

    return np.sum(inner(x))


def test_a_nested_recursive_def_whose_depth_values_decide() -> None:
    """Recursion stopped by a test on array values (JAX's grad cannot trace it):
    against finite differences at points that recurse 0, 1 and 2 times, and vmap
    against a Python loop."""
    g = s2s.grad(recursive_on_values)
    for x in (-X - 2.0, X * 0.1 + 0.4, X + 3.0):
        np.testing.assert_allclose(g(x), fd_grad(recursive_on_values, (x,), 0)[0],
                                   rtol=1e-6, atol=1e-8)
    close(s2s.jvp(recursive_on_values, (X,), (V,))[0], recursive_on_values(X), np.float64)


def recursive_reads_outer(x):
    a = np.cos(x)

    def r(y, k):
        return y * a if k == 0 else r(y, k - 1)

    return np.sum(r(x, 2))


def recursive_sorts(x):
    def r(y, k):
        if k == 0:
            y.sort()
            return y
        return r(y, k - 1)

    return np.sum(r(x, 2))


def default_then_sorts(x):
    a = np.cos(x)

    def g(y, k=a * 2.0):
        z = y * k
        z.partition(1)
        return z

    return np.sum(g(x))


def test_the_emitted_code_calls_the_lifted_function_by_its_name() -> None:
    source = s2s.source(s2s.grad(F.nested_def))
    assert "def g_vjp(y, a, g_bar)" in source, source


# ---- still refused, located at the user's line ---------------------------------------


def bound_in_loop(x):
    for _ in range(2):
        act = np.tanh
    return np.sum(act(x))


def function_used_as_array(x):
    g = np.tanh
    return np.sum(g * x)


def test_once_refused_now_transformed() -> None:
    """A function bound in a loop of a constant count (called after it), a recursive
    nested def reading the enclosing function's values, a vmap kept as a value: the
    gradient against its closed form (each is in tests/frontend/test_function_idioms.py
    against JAX, under every transform)."""
    np.testing.assert_allclose(s2s.grad(bound_in_loop)(X), 1.0 - np.tanh(X) ** 2)
    np.testing.assert_allclose(s2s.grad(recursive_reads_outer)(X),
                               np.cos(X) - X * np.sin(X))
    close(s2s.grad(F.vmap_kept_as_value)(X), jax.grad(J.vmap_kept_as_value)(X), np.float64)


@pytest.mark.parametrize("fn, words", [
    (function_used_as_array, "is a function here, used as a value"),
])
def test_refused_with_the_line(fn, words) -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)(X)
    err = str(info.value)
    assert words in err, err
    assert (__file__ in err or F.__file__ in err) and "Instead:" in err, err


def prints_in_nested_def(x):
    def g(y):
        print(y)
        return y

    return np.sum(g(x))


def sorts_in_nested_def(x):
    def g(y):
        y.sort()
        return y

    return np.sum(g(x))


def unknown_in_lambda(x):
    k = lambda y: np.no_such_function(y)  # noqa: E731
    return np.sum(k(x))


def test_a_print_in_a_nested_def_runs_once_per_call(capsys) -> None:
    """A kept statement (s2s/frontend/kept.py) inside a lifted function: it runs in the
    forward sweep, once per call, with the values (the gradient of sum(x) is ones)."""
    g = s2s.grad(prints_in_nested_def)
    for k in (1.0, 2.0, 3.0):
        np.testing.assert_array_equal(g(X * k), np.ones_like(X))
        assert capsys.readouterr().out == f"{X * k}\n"


@pytest.mark.parametrize("fn, quoted", [
    (sorts_in_nested_def, "y.sort()"),
    (recursive_sorts, "y.sort()"),
    (default_then_sorts, "z.partition(1)"),
    (unknown_in_lambda, "k = lambda y: np.no_such_function(y)"),
])
def test_an_error_inside_a_lifted_function_quotes_the_users_line(fn, quoted) -> None:
    """A nested function is lifted to a def s2s writes; its errors still name the
    user's file, line and column and quote the user's line."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)(X)
    err = str(info.value)
    lines, first = inspect.getsourcelines(fn)
    line = first + next(i for i, text in enumerate(lines) if quoted in text)
    assert f'File "{__file__}", line {line}' in err, err
    assert quoted in err and "Instead:" in err, err


@pytest.mark.parametrize("name", ["nested_def_late", "nested_default", "apply_closure",
                                  "partial_inside",
                                  "grad_inside_closure", "jvp_inside_closure", "choose"])
def test_captured_values_change_from_call_to_call(name) -> None:
    """What a nested function captures is a forward value of each call: the 1st call
    (generic code), 2nd (specialized), 3rd and 10th (the specialized fast path) each
    match JAX at their own argument."""
    g = s2s.grad(getattr(F, name))
    rng = np.random.default_rng(0)
    for call in range(1, 11):
        x = rng.normal(size=3)
        close(g(x), jax.grad(getattr(J, name))(x), np.float64)
