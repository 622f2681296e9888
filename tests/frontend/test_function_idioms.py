"""Functions bound where Python binds them (issue 23, item 3, the constructs left
refused before): a nested ``def``/``lambda`` bound in a loop body (over a constant
count and over ``range(n)``), a function bound in one branch reading what only that
branch computed, a recursive nested ``def`` reading the enclosing function's values,
``h = s2s.vmap(g)`` kept as a value, tuple and dict ``in_axes``, a vmapped ``g``
returning a tuple through a name, an empty batch, and objects: a callable object and
an object's method called inside the function, ``self.other(...)`` and ``self(x)`` in
a method given to a transform.

Every expected value comes from JAX on the same source (``jax_twin``), or, where JAX
cannot run it (an ``if`` on a traced value), from finite differences and a Python
loop; float64 and float32."""

from __future__ import annotations

import inspect
from functools import partial

import function_idiom_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, fd_grad, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)
    F.s2s_vmap, J.s2s_vmap = s2s.vmap, jax.vmap

CONSTRUCTS = ["lambda_in_loop", "def_in_loop", "lambda_in_while",
              "bound_in_loop_called_after", "bound_in_a_branch",
              "bound_and_called_in_a_branch", "recursive_closure", "vmap_kept_as_value",
              "vmap_tuple_axes", "vmap_dict_axes", "vmap_returns_a_named_tuple",
              "calls_an_object", "calls_a_method", "calls_a_subclass_method",
              "callee_of_all"]

# (the callee of all of them compiles every construct's JAX twin: -m slow runs it)
HEAVY = [pytest.param(n, marks=pytest.mark.slow) if n == "callee_of_all" else n
         for n in CONSTRUCTS]

X = np.array([0.3, -0.7, 1.2])
V = np.array([1.0, -2.0, 0.5])
BATCH = np.array([[0.3, -0.7, 1.2], [0.1, 0.4, -0.9]])
DTYPES = [np.float64, np.float32]


close = partial(assert_close_to, f64=1e-9, f32=2e-4, dtype_of="expected-arrays")


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", CONSTRUCTS)
def test_grad_value_and_grad_and_vjp(name, dtype) -> None:
    x = X.astype(dtype)
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.grad(ours)(x), jax.grad(theirs)(x), dtype)
    close(s2s.value_and_grad(ours)(x), jax.value_and_grad(theirs)(x), dtype)
    out, pullback = s2s.vjp(ours, x)
    their_out, their_pullback = jax.vjp(theirs, x)
    close(out, their_out, dtype)
    close(pullback(np.ones_like(out)), their_pullback(np.ones_like(their_out)), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", HEAVY)
def test_jvp_jacobians_and_jit(name, dtype) -> None:
    x, v = X.astype(dtype), V.astype(dtype)
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.jvp(ours, (x,), (v,)), jax.jvp(theirs, (x,), (v,)), dtype)
    close(s2s.jit(ours)(x), theirs(x), dtype)
    # (a float32 argument meeting a float64 constant, W or self.w: jacrev and the
    # Hessian in the argument's dtype, jacfwd in the output's, as JAX: dtypes_down)
    close(s2s.jacfwd(ours)(x), jax.jacfwd(theirs)(x), dtype)
    close(s2s.jacrev(ours)(x), jax.jacrev(theirs)(x), dtype)
    close(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("name", HEAVY)
def test_vmap(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.vmap(ours)(BATCH), jax.vmap(theirs)(BATCH), np.float64)
    close(s2s.vmap(s2s.grad(ours))(BATCH), jax.vmap(jax.grad(theirs))(BATCH), np.float64)


@pytest.mark.parametrize("name", ["lambda_in_loop", "vmap_dict_axes"] + [
    pytest.param(n, marks=pytest.mark.slow)  # (JAX compiles each: -m slow runs them)
    for n in ("def_in_loop", "recursive_closure", "vmap_kept_as_value", "vmap_tuple_axes",
              "vmap_returns_a_named_tuple", "calls_an_object", "calls_a_method",
              "bound_in_a_branch")])
def test_jit_on_the_jax_backend(name) -> None:
    """s2s.jit(backend="jax"): an s2s.vmap inside (kept as a value too) is JAX's vmap
    there; against JAX's jit of the twin, and its grad."""
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.jit(ours, backend="jax")(X), jax.jit(theirs)(X), np.float64)
    close(s2s.jit(s2s.grad(ours), backend="jax")(X), jax.grad(theirs)(X), np.float64)


# ---- 1. over a run-time trip count, and values changing between calls ----------------


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)],
                         ids=["f64", "f32"])
def test_a_def_in_a_loop_over_range_n(dtype) -> None:
    """``for k in range(n): def g(y): ...`` with ``n`` an argument (run-time for s2s):
    calls 1 to 10 change ``n`` (0 and 1 too) and ``x``; grad, jvp and vmap against
    JAX (which unrolls the Python int)."""
    g = s2s.grad(F.def_in_loop)
    for call, n in enumerate((3, 0, 1, 5, 2, 3, 0, 4, 1, 10)):
        x = (X * (1.0 + 0.1 * call)).astype(dtype)
        close(g(x, n), jax.grad(J.def_in_loop)(x, n), dtype)
        if call in (0, 1, 2, 9):
            v = V.astype(dtype)
            close(s2s.jvp(lambda y, n=n: F.def_in_loop(y, n), (x,), (v,)),
                  jax.jvp(lambda y, n=n: J.def_in_loop(y, n), (x,), (v,)), dtype)
            close(s2s.vmap(g, in_axes=(0, None))(BATCH.astype(dtype), n),
                  jax.vmap(jax.grad(J.def_in_loop), in_axes=(0, None))(
                      BATCH.astype(dtype), n), dtype)


def test_a_recursive_closure_with_its_depth_changing_per_call() -> None:
    g = s2s.grad(F.recursive_closure)
    for call, depth in enumerate((0, 1, 5, 2, 3, 0, 4, 1, 6, 2)):
        x = X * (1.0 + 0.1 * call)
        close(g(x, depth), jax.grad(J.recursive_closure)(x, depth), np.float64)
    source = s2s.grad(F.recursive_closure).source
    assert "def r_vjp" in source, source
    # (its statements are located at the user's lines: the comments quote them)
    assert "# return y * a if k == 0 else r(np.sin(y) * a, k - 1)" in source, source
    assert "# a = np.cos(x)\n        y_bar" not in source, source


# ---- 2. a function bound on the path a run-time test takes ---------------------------


def branch_on_a_value(x):
    if np.sum(x) > 0:
        w = 2.0 * x
        act = lambda v: v * w  # noqa: E731
    else:
        act = np.sin
    return np.sum(act(x) * x)


def called_on_the_path_only(x):
    y = np.cos(x)
    if np.sum(x) > 0:
        u = np.exp(x)

        def act(v):
            return v / u

        y = act(y)
    return np.sum(y * x)


@pytest.mark.parametrize("fn", [branch_on_a_value, called_on_the_path_only])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_a_function_bound_on_one_path_of_a_run_time_test(fn, dtype) -> None:
    """JAX's grad cannot trace the `if`: against finite differences (float64) at
    points on each path (calls 1 to 10 alternate them), jvp against the gradient,
    jit against the function."""
    g = s2s.grad(fn)
    for call in range(10):
        x = X * (call + 1) * 0.3 * (1 if call % 2 else -1)
        expected = fd_grad(fn, (x,), 0)[0]
        got = g(x.astype(dtype))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == np.float64
                                   else 2e-3, atol=1e-6 if dtype == np.float64 else 2e-3)
        if call in (0, 1, 9):
            _, t = s2s.jvp(fn, (x,), (V,))
            np.testing.assert_allclose(t, expected @ V, rtol=1e-5, atol=1e-6)
            close(s2s.jit(fn)(x), fn(x), np.float64)
    # (jacfwd/jacrev batch through vmap, whose probe runs one point: a function on
    # the path it did not take is batched on arguments computed from its values)
    for x in (X, -X):
        expected = fd_grad(fn, (x,), 0)[0]
        for jac in (s2s.jacfwd, s2s.jacrev):
            np.testing.assert_allclose(jac(fn)(x), expected, rtol=1e-5, atol=1e-6)


def test_under_vmap_a_run_time_choice_of_functions_is_a_loop_of_examples() -> None:
    """Under vmap the test is batched: both paths' calls run and np.where selects per
    example (JAX's vmap cannot trace the `if` at all): against a Python loop."""
    batch = np.concatenate([BATCH, -BATCH])
    for fn in (branch_on_a_value, called_on_the_path_only):
        close(s2s.vmap(fn)(batch), np.stack([fn(x) for x in batch]), np.float64)
        close(s2s.vmap(s2s.grad(fn))(batch), np.stack([s2s.grad(fn)(x) for x in batch]),
              np.float64)


# ---- 6. an empty batch -------------------------------------------------------------


@pytest.mark.parametrize("dtype, rows", [
    (np.float64, 1), pytest.param(np.float32, 4, marks=pytest.mark.slow),
    pytest.param(np.float32, 1, marks=pytest.mark.slow),
    pytest.param(np.float64, 4, marks=pytest.mark.slow)], ids=["f64-1", "f32-4", "f32-1", "f64-4"])
def test_a_batch_of_one_and_of_several(dtype, rows) -> None:
    x, v = X.astype(dtype), V.astype(dtype)
    m = (np.arange(rows * 3).reshape(rows, 3) * 0.1 - 0.4).astype(dtype)
    ours, theirs = F.vmap_over_rows, J.vmap_over_rows
    close(ours(x, m), theirs(x, m), dtype)  # (s2s.vmap itself, run as Python)
    close(s2s.grad(ours)(x, m), jax.grad(theirs)(x, m), dtype)
    close(s2s.jvp(lambda y: ours(y, m), (x,), (v,)),
          jax.jvp(lambda y: theirs(y, m), (x,), (v,)), dtype)
    close(s2s.jit(ours)(x, m), theirs(x, m), dtype)
    close(s2s.jacrev(ours)(x, m), jax.jacrev(theirs)(x, m), dtype)
    batch = BATCH.astype(dtype)
    close(s2s.vmap(s2s.grad(ours), in_axes=(0, None))(batch, m),
          jax.vmap(jax.grad(theirs), in_axes=(0, None))(batch, m), dtype)
    pairs, their_pairs = F.vmap_pairs_over_rows, J.vmap_pairs_over_rows
    close(s2s.grad(pairs)(x, m), jax.grad(their_pairs)(x, m), dtype)
    columns = m.T
    close(s2s.jacfwd(F.vmap_over_columns)(x, columns),
          jax.jacfwd(J.vmap_over_columns)(x, columns), dtype)


# (an empty batch: zeros of g's output shape, as jax.vmap's, under every transform;
# tests/frontend/test_inner_transforms.py)


def test_s2s_vmap_of_an_empty_batch() -> None:
    """The transform itself, given a batch of size 0 (its rank probe runs a row of
    zeros), as jax.vmap."""
    empty = np.zeros((0, 3))
    close(s2s.vmap(F.scaled)(empty), jax.vmap(J.scaled)(empty), np.float64)
    close(s2s.vmap(s2s.grad(lambda y: np.sum(F.scaled(y))))(empty),
          jax.vmap(jax.grad(lambda y: np.sum(J.scaled(y))))(empty), np.float64)


# ---- 7, 8. objects whose attributes change between calls -----------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_attributes_of_self_changed_between_calls(dtype) -> None:
    """``self.w`` is read at each call (the 1st: generic code; the 2nd: specialized;
    the 3rd and 10th: the fast path), whether the object is called inside the
    function or given to the transform; against JAX with the twin's object given the
    same values."""
    inside = s2s.grad(F.calls_a_method)
    given = s2s.grad(F.NET.loss)
    called = s2s.grad(F.calls_an_object)
    saved = F.NET.w, F.NET.scale, J.NET.w, J.NET.scale
    try:
        for call in range(1, 11):
            w = np.array([call, -0.5 * call, 1.0 / call])
            F.NET.w, J.NET.w = w.astype(dtype), w.astype(dtype)
            F.NET.scale = J.NET.scale = 0.25 * call
            x = (X * (1.0 + 0.05 * call)).astype(dtype)
            close(inside(x), jax.grad(J.calls_a_method)(x), dtype)
            close(given(x), jax.grad(J.NET.loss)(x), dtype)
            close(called(x), jax.grad(J.calls_an_object)(x), dtype)
    finally:
        F.NET.w, F.NET.scale, J.NET.w, J.NET.scale = saved


def test_a_method_given_to_a_transform_reads_the_objects_own_methods() -> None:
    """``self.features(x)`` in ``Net.loss`` given to a transform with a ``Net``: it is
    ``Net.features``; with a ``Wider`` (which overrides it), ``Net.loss`` is
    transformed for ``Wider``, whose ``features`` it calls, as Python and JAX do
    (test_function_values_more.py tests it further)."""
    close(s2s.grad(F.NET.loss)(X), jax.grad(J.NET.loss)(X), np.float64)
    close(s2s.jvp(F.NET.loss, (X,), (V,)), jax.jvp(J.NET.loss, (X,), (V,)), np.float64)
    close(s2s.grad(F.WIDER.loss)(X), jax.grad(J.WIDER.loss)(X), np.float64)
    close(s2s.jvp(F.WIDER.loss, (X,), (V,)), jax.jvp(J.WIDER.loss, (X,), (V,)), np.float64)
    close(s2s.vjp(F.WIDER.loss, X)[1](1.0), jax.vjp(J.WIDER.loss, X)[1](1.0), np.float64)


# ---- still refused, located (functions bound in loops read after them or before their
# binding, a recursive closure used as a value: test_function_values_more.py) ---------


def apply(f, x):
    return f(x)


def kept_vmap_passed_on(x):
    """(passed on, a vmap of a function reading ``a`` runs, ``a`` passed along:
    tests/frontend/test_inner_transforms_more.py)"""
    a = np.cos(x)
    h = F.s2s_vmap(lambda r: r * a)
    return np.sum(apply(h, np.outer(x, x)))


def recursive_closure_sorts(x):
    a = np.cos(x)

    def r(y, k):
        if k == 0:
            z = y * a
            z.partition(1)
            return z
        return r(y, k - 1)

    return np.sum(r(x, 2))


def test_a_kept_vmap_reading_values_passed_on() -> None:
    """Once refused: the vmap's ``g`` reads ``a``, which ``apply`` receives too."""
    close(kept_vmap_passed_on(X), np.sum(np.outer(X, X) * np.cos(X)), np.float64)
    np.testing.assert_allclose(s2s.grad(kept_vmap_passed_on)(X),
                               fd_grad(kept_vmap_passed_on, (X,), 0)[0], rtol=1e-6)


@pytest.mark.parametrize("fn, args, quoted, words", [
    (recursive_closure_sorts, (X,), "z.partition(1)", "side effect"),
])
def test_refused_with_the_users_line(fn, args, quoted, words) -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)(*args)
    err = str(info.value)
    lines, first = inspect.getsourcelines(fn)
    line = first + next(i for i, text in enumerate(lines) if quoted in text)
    assert words in err, err
    assert f'File "{__file__}", line {line}' in err and quoted in err, err
    assert "Instead:" in err, err
