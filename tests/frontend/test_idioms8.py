"""Issue 23 leftovers: a test of an argument's Python type (``isinstance(scale,
int)``, ``type(c) is float``, ``isinstance(p, dict)``), decided per call's type;
``@staticmethod``/``@property`` overridden on a subclass of an argument's class; ``sum``
over a list argument that is empty this call; ``max``/``min`` over values and arrays;
keyword arguments; readable names of a method's derivatives.

Expected values: JAX on the same source (``jax_twin``, run op by op: ``jax.jit`` would
trace the type-tested argument and see a tracer), float64 and float32, over calls
whose values and argument types change from call to call.  ``s2s.jit`` decides a type
test by the type the caller passes, as Python does (``jax.jit`` decides it for its
tracer): there the oracle is the function itself."""

from __future__ import annotations

import idioms8_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.1])
# the scale of each call: types alternate, so a transform made for one must never run
# for another (an int is `isinstance(scale, int)`, so is True)
SCALES = [2, 2.0, 3, 2.0, True, 2, 1.5, 3, 2.0, 2]


def tol(dtype):
    return dict(rtol=1e-9, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)


def close(got, expected, dtype):
    got_leaves = jax.tree_util.tree_leaves(got)
    expected_leaves = jax.tree_util.tree_leaves(expected)
    assert len(got_leaves) == len(expected_leaves), (got, expected)
    for g, e in zip(got_leaves, expected_leaves):
        assert np.shape(g) == np.shape(e), (g, e)
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(e, np.float64),
                                   **tol(dtype))


def at(step, dtype):
    return (X + 0.1 * step).astype(dtype)


# ---- 1. type tests on arguments -------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", ["powered", "typed"])
def test_type_test_follows_each_call(name) -> None:
    """value_and_grad and s2s.jit (NumPy) over ten calls alternating int, float and
    bool: each call takes Python's branch (f(x, 2) and f(x, 2.0) differ)."""
    ours, theirs = getattr(F, name), getattr(J, name)
    vg, jitted = s2s.value_and_grad(ours), s2s.jit(ours)
    for step, scale in enumerate(SCALES):
        x = at(step, np.float64)
        close(vg(x, scale), jax.value_and_grad(theirs)(x, scale), np.float64)
        close(jitted(x, scale), ours(x, scale), np.float64)
    assert ours(X, 2) != ours(X, 2.0)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["powered", "typed"])
def test_type_test_under_every_transform(name, dtype) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    vmapped = s2s.vmap(ours, in_axes=(0, None))
    hess = s2s.hessian(ours)
    jit_jax = s2s.jit(ours, backend="jax")
    jit_grad = s2s.jit(s2s.grad(ours))
    for step, scale in enumerate(SCALES):
        x = at(step, dtype)
        close(s2s.grad(ours)(x, scale), jax.grad(theirs)(x, scale), dtype)
        close(s2s.jvp(lambda a: ours(a, scale), (x,), (np.ones_like(x),)),
              jax.jvp(lambda a: theirs(a, scale), (x,), (np.ones_like(x),)), dtype)
        _, pull = s2s.vjp(lambda a: ours(a, scale), x)
        _, jpull = jax.vjp(lambda a: theirs(a, scale), x)
        close(pull(dtype(1.0)), jpull(dtype(1.0)), dtype)
        batch = np.stack([x, 2 * x])
        close(vmapped(batch, scale), jax.vmap(theirs, in_axes=(0, None))(batch, scale),
              dtype)
        close(hess(x, scale), jax.hessian(theirs)(x, scale), dtype)
        close(jit_jax(x, scale), ours(x, scale), dtype)  # (Python's branch: see above)
        close(jit_grad(x, scale), jax.grad(theirs)(x, scale), dtype)


@pytest.mark.slow
def test_jit_on_jax_decides_the_callers_type() -> None:
    """jax.jit traces ``scale`` (a tracer is no int); s2s.jit decides for the int the
    caller passed, as Python does, and again for a float."""
    jitted = s2s.jit(F.powered, backend="jax")
    for scale in (2, 2.0, 3):
        close(jitted(X, scale), F.powered(X, scale), np.float64)
    assert "isinstance" not in s2s.source(jitted)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)])
def test_container_and_array_type_tests(dtype) -> None:
    x = X.astype(dtype)
    for y in (2.0 * x, [1.0, 2.0, 3.0], x):  # an array, a list, again an array
        close(s2s.grad(F.arrayish)(x, y), jax.grad(J.arrayish)(x, y), dtype)
    for p in ({"w": 2.0 * x}, (x, 0.5 * x), [x, x], -x, {"w": x}):
        close(s2s.grad(F.containers)(p, x), jax.grad(J.containers)(p, x), dtype)
        close(s2s.grad(F.containers, argnums=1)(p, x),
              jax.grad(J.containers, argnums=1)(p, x), dtype)


@pytest.mark.slow
def test_callee_type_tests_are_decided_per_call_site() -> None:
    x = X
    close(s2s.value_and_grad(F.calls_typed)(x), jax.value_and_grad(J.calls_typed)(x),
          np.float64)
    close(s2s.jvp(F.calls_typed, (x,), (x,)), jax.jvp(J.calls_typed, (x,), (x,)),
          np.float64)
    batch = np.stack([x, -x])
    close(s2s.vmap(s2s.grad(F.calls_typed))(batch),
          jax.vmap(jax.grad(J.calls_typed))(batch), np.float64)
    close(s2s.jit(F.calls_typed, backend="jax")(x), F.calls_typed(x), np.float64)


# ---- 5. staticmethod / property overridden on a subclass ------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", ["method_loss", "called_object", "direct_members"])
def test_subclass_overrides_are_the_objects_own(name, dtype) -> None:
    """``self.helper(x)`` and ``self.scale`` in a method the subclass inherits are the
    subclass's (jvp and vmap ran the base class's: wrong numbers)."""
    ours, theirs = getattr(F, name), getattr(J, name)
    for step, cls in enumerate(["Sub", "Base", "Sub", "Sub", "Base"]):
        x = at(step, dtype)
        w = np.asarray(1.5 + 0.1 * step, dtype)
        mine, jaxs = getattr(F, cls)(w), getattr(J, cls)(w)
        close(s2s.value_and_grad(ours)(mine, x), jax.value_and_grad(theirs)(jaxs, x), dtype)
        close(s2s.grad(ours, argnums=1)(mine, x), jax.grad(theirs, argnums=1)(jaxs, x), dtype)
        close(s2s.jvp(ours, (mine, x), (mine, x)), jax.jvp(theirs, (jaxs, x), (jaxs, x)),
              dtype)
        batch = np.stack([x, -x])
        close(s2s.vmap(ours, in_axes=(None, 0))(mine, batch),
              jax.vmap(theirs, in_axes=(None, 0))(jaxs, batch), dtype)
        close(s2s.jit(ours)(mine, x), ours(mine, x), dtype)


def test_subclass_override_under_jvp_and_vmap() -> None:
    """The default tier's regression check (main's jvp and vmap read Base.helper and
    Base.scale here): against the derivative written out."""
    w = np.asarray(1.5)
    sub, v = F.Sub(w), np.array([1.0, -2.0, 0.5])
    primal, tangent = s2s.jvp(F.method_loss, (sub, X), (F.Sub(np.asarray(0.0)), v))
    close(primal, np.sum(np.cos(X) * 3.0 * w), np.float64)
    close(tangent, np.sum(-np.sin(X) * 3.0 * w * v), np.float64)
    batch = np.stack([X, 0.5 * X])
    close(s2s.vmap(F.method_loss, in_axes=(None, 0))(sub, batch),
          np.array([np.sum(np.cos(b) * 3.0 * w) for b in batch]), np.float64)


def test_method_derivatives_have_readable_names() -> None:
    g = s2s.grad(F.called_object)
    g(F.Sub(np.asarray(1.5)), X)  # (its values: test_subclass_overrides_are_the_objects_own)
    text = s2s.source(g)
    assert "def call_vjp_self(" in text and "call_o = " in text, text
    assert "___" not in text, text


# ---- 4. sum over a list that is empty this call --------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)])
def test_sum_over_an_empty_list_is_its_start(dtype) -> None:
    vg = s2s.value_and_grad(F.empty_sum, argnums=1)
    vg0 = s2s.value_and_grad(F.empty_sum_zero, argnums=1)
    for step, n in enumerate([0, 2, 0, 1, 0]):
        x = at(step, dtype)
        xs = [x * (k + 1.0) for k in range(n)]
        close(vg(xs, x), jax.value_and_grad(J.empty_sum, argnums=1)(xs, x), dtype)
        close(vg0(xs, x), jax.value_and_grad(J.empty_sum_zero, argnums=1)(xs, x), dtype)
    close(s2s.jit(F.empty_sum)([], X), F.empty_sum([], X), np.float64)
    batch = np.stack([X, -X])
    close(s2s.vmap(F.empty_sum, in_axes=(None, 0))([], batch),
          jax.vmap(J.empty_sum, in_axes=(None, 0))([], batch), np.float64)
    close(s2s.jvp(F.empty_sum, ([], X), ([], X)), jax.jvp(J.empty_sum, ([], X), ([], X)),
          np.float64)
    assert F.empty_sum_zero([], X) == s2s.jit(F.empty_sum_zero)([], X)


@pytest.mark.slow
def test_sum_over_an_empty_list_on_jax() -> None:
    jitted = s2s.jit(s2s.grad(F.empty_sum, argnums=1), backend="jax")
    for n in (0, 2, 0):
        xs = [X * (k + 1.0) for k in range(n)]
        close(jitted(xs, X), jax.grad(J.empty_sum, argnums=1)(xs, X), np.float64)


# ---- 2. max / min ----------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", ["max_of_generator", "max_of_list", "max_tie"])
def test_max_and_min_with_pythons_semantics(name) -> None:
    """The first maximal value wins a tie, and gets the gradient, as in Python (and
    in JAX, which runs Python's max on its tracers' values)."""
    ours, theirs = getattr(F, name), getattr(J, name)
    for step in range(3):
        x = at(step, np.float64)
        close(s2s.value_and_grad(ours)(x), jax.value_and_grad(theirs)(x), np.float64)
        close(s2s.jvp(ours, (x,), (x,)), jax.jvp(theirs, (x,), (x,)), np.float64)
    close(s2s.jit(ours)(X), ours(X), np.float64)


def test_one_call_of_each_type_takes_its_branch() -> None:
    """The default tier's check: grad of f(x, 2), then f(x, 2.0), then f(x, 2), against
    the derivative of each branch written out (JAX's: the slow sweeps)."""
    g = s2s.grad(F.powered)
    for scale in (2, 2.0, 2, True):
        expected = scale * X ** (scale - 1) if isinstance(scale, int) else scale * np.cos(X)
        close(g(X, scale), expected, np.float64)


def test_max_of_arrays_raises_at_the_users_line() -> None:
    """Python's max compares whole arrays: NumPy (and JAX) raise for more than one
    element; s2s says so at the line."""
    with pytest.raises(ValueError):
        F.max_of_arrays(X)
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(F.max_of_arrays)(X)
    assert "idioms8_fns.py" in str(err.value) and "max([x, 2.0 * x])" in str(err.value)


def test_max_over_a_list_argument() -> None:
    """``max(np.sum(v) for v in xs)`` over a list argument (its length known per
    call): the first maximal item, and its gradient, as Python; no items: NumPy's
    error for a stack of none, at the line."""
    xs = [X, 2.0 * X, -X]
    g = s2s.grad(F.max_over_list_argument)
    close(g(xs), [np.zeros(3), np.ones(3), np.zeros(3)], np.float64)
    close(g([X, X]), [np.ones(3), np.zeros(3)], np.float64)  # (a tie: the first)
    with pytest.raises(s2s.TransformError) as err:
        g([])
    assert "idioms8_fns.py" in str(err.value)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_max_and_min_over_list_arguments_everywhere(dtype) -> None:
    for step, n in enumerate([3, 1, 4, 2]):
        x = at(step, dtype)
        xs = [x * (1.0 - 0.7 * k) for k in range(n)]
        for name, args in (("max_over_list_argument", (xs,)),
                           ("min_over_list_argument", (xs, x))):
            ours, theirs = getattr(F, name), getattr(J, name)
            nums = tuple(range(len(args)))
            close(s2s.value_and_grad(ours, argnums=nums)(*args),
                  jax.value_and_grad(theirs, argnums=nums)(*args), dtype)
            close(s2s.jvp(ours, args, args), jax.jvp(theirs, args, args), dtype)
            close(s2s.jit(ours)(*args), ours(*args), dtype)
            close(s2s.jit(s2s.grad(ours), backend="jax")(*args), jax.grad(theirs)(*args),
                  dtype)
            batched = [np.stack([v, -v]) for v in xs]  # (a Python loop: JAX's vmap
            loop = [ours(*([[b[i] for b in batched]] + list(args[1:])))  # refuses it)
                    for i in range(2)]
            in_axes = (0,) + (None,) * (len(args) - 1)
            close(s2s.vmap(ours, in_axes=in_axes)(batched, *args[1:]), np.stack(loop), dtype)


def test_max_of_array_items_raises_at_the_users_line() -> None:
    with pytest.raises(ValueError):
        F.max_of_array_items([X, X])
    with pytest.raises(ValueError) as err:
        s2s.grad(F.max_of_array_items)([X, X])
    assert "idioms8_fns.py" in str(err.value) and "max(v for v in xs)" in str(err.value)


# ---- 3. keyword arguments ----------------------------------------------------------------

@pytest.mark.slow
def test_keyword_arguments_pass_through() -> None:
    for k in (3, 2, 3):
        close(s2s.grad(F.with_keyword)(X, k=k), jax.grad(J.with_keyword)(X, k=k), np.float64)
        close(s2s.grad(F.with_keyword_only)(X, k=k), jax.grad(J.with_keyword_only)(X, k=k),
              np.float64)
        close(s2s.hessian(F.with_keyword)(X, k=k), jax.hessian(J.with_keyword)(X, k=k),
              np.float64)
        close(s2s.jacrev(F.with_keyword)(X, k=k), jax.jacrev(J.with_keyword)(X, k=k),
              np.float64)
        close(s2s.jit(F.with_keyword_only)(X, k=k), F.with_keyword_only(X, k=k), np.float64)


JACOBIANS = ["jacfwd", "jacrev", "hessian"]


@pytest.mark.parametrize("transform", JACOBIANS)
def test_keyword_only_arguments_to_jacobians(transform) -> None:
    """``s2s.hessian(f)(x, k=3)`` of ``def f(x, *, k=2)``: keywords passed on, not
    differentiated, as JAX does (this raised "pass them positionally")."""
    ours = getattr(s2s, transform)
    for step, k in enumerate([3, 2, 3]):  # (against the derivatives written out; JAX's:
        x = at(step, np.float64)  # the slow sweep)
        first = k * x ** (k - 1)
        expected = np.diag(k * (k - 1) * x ** (k - 2)) if transform == "hessian" else first
        close(ours(F.with_keyword_only)(x, k=k), expected, np.float64)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transform", JACOBIANS)
def test_keyword_only_arguments_everywhere(transform, dtype) -> None:
    ours, theirs = getattr(s2s, transform), getattr(jax, transform)
    y = np.array([1.2, -0.4, 0.7], dtype)
    on_numpy = s2s.jit(ours(F.vector_keyword_only))
    on_jax = s2s.jit(ours(F.with_keyword_only), backend="jax")
    for step, k in enumerate([3, 2, 3, 3]):
        x = at(step, dtype)
        expected = theirs(J.vector_keyword_only)(x, k=k, shift=0.5)
        close(ours(F.vector_keyword_only)(x, k=k, shift=0.5), expected, dtype)
        close(ours(F.vector_keyword_only)(x, k=k), theirs(J.vector_keyword_only)(x, k=k),
              dtype)
        close(ours(F.two_args_keyword_only, argnums=(0, 1))(x, y, k=k),
              theirs(J.two_args_keyword_only, argnums=(0, 1))(x, y, k=k), dtype)
        close(on_numpy(x, k=k, shift=0.5), expected, dtype)
        close(on_jax(x, k=k), theirs(J.with_keyword_only)(x, k=k), dtype)
    nested = s2s.jacfwd(s2s.jacrev(F.with_keyword_only))
    close(nested(X, k=3), jax.jacfwd(jax.jacrev(J.with_keyword_only))(X, k=3), np.float64)
