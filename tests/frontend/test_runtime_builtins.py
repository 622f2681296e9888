"""Python's built-ins over values known only when the function runs (issue 23, item 5):
``round(total)``, ``round(v, 1)``; ``any(x > 0)``, ``all(v > c for v in x)``;
``max(items, key=f)``, ``min(a, b, c, key=np.abs)``.

Every expected value comes from JAX on the same source (``jax_twin``), in float64 and
float32, over ten calls whose values take each path in turn (the second call is the one
s2s specializes): grad, value_and_grad, jvp, jacfwd, jacrev, hessian, vmap (against a
Python loop of JAX's gradients: JAX itself cannot `vmap` a Python `if` on a value) and
``s2s.jit`` on NumPy.  Under ``s2s.jit(backend="jax")`` the value-dependent test is JAX's
error, as under ``jax.jit``."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import runtime_builtin_fns as F  # (pytest puts this directory on sys.path)
from support import HAVE_JAX, assert_close_to, jax_twin

import s2s
from s2s.errors import TransformError

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

# points on each side of every test the functions make (signs, magnitudes, a tie)
POINTS = [np.array(p) for p in ([0.3, -0.7, 1.2], [-0.3, -0.7, -1.2], [0.3, -2.7, 0.2],
                                [0.5, -0.5, 0.1], [1.4, 0.6, -0.9], [-0.2, -1.5, 0.8])]
NAMES = ["rounds_a_total", "rounds_to_places", "any_positive", "all_rows_above",
         "all_below_as_value", "largest_magnitude", "smallest_by_numpy_key",
         "largest_by_own_key", "ties_keep_the_first"]
SLOW = {"rounds_to_places", "all_below_as_value", "smallest_by_numpy_key"}

close = partial(assert_close_to, f64=1e-9, f32=3e-4)


def calls(dtype):
    """Ten calls cycling through the points (each path, in both orders)."""
    return [POINTS[k % len(POINTS)].astype(dtype) for k in range(10)]


def cases():
    for name in NAMES:
        for dtype in (np.float64, np.float32):
            marks = [pytest.mark.slow] if name in SLOW or dtype == np.float32 else []
            yield pytest.param(name, dtype, id=f"{name}-{np.dtype(dtype).name}", marks=marks)


@pytest.mark.parametrize("name, dtype", list(cases()))
def test_against_jax(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    grad, vg = s2s.grad(ours), s2s.value_and_grad(ours)
    jac_fwd, jac_rev, hess = s2s.jacfwd(ours), s2s.jacrev(ours), s2s.hessian(ours)
    jitted = s2s.jit(ours)
    for k, x in enumerate(calls(dtype)):
        close(grad(x), jax.grad(theirs)(x), dtype)
        close(jitted(x), theirs(x), dtype, check_dtype=False)
        if k % 3 == 0:  # (the 1st, 4th, 7th and 10th calls)
            close(vg(x), jax.value_and_grad(theirs)(x), dtype)
            v = (x[::-1] * 0.5 + 0.25).astype(dtype)
            close(s2s.jvp(ours, (x,), (v,)), jax.jvp(theirs, (x,), (v,)), dtype)
            close(jac_fwd(x), jax.jacfwd(theirs)(x), dtype)
            close(jac_rev(x), jax.jacrev(theirs)(x), dtype)
            close(hess(x), jax.hessian(theirs)(x), dtype)
    batch = np.stack(calls(dtype)[:6])
    close(s2s.vmap(ours)(batch), np.stack([theirs(x) for x in batch]).astype(dtype), dtype)
    close(s2s.vmap(grad)(batch), np.stack([jax.grad(theirs)(x) for x in batch]), dtype)


def test_as_a_callee():
    def outer(x):
        return F.largest_magnitude(x) + F.any_positive(x * 2.0)

    def outer_jax(x):
        return J.largest_magnitude(x) + J.any_positive(x * 2.0)

    for x in calls(np.float64):
        close(s2s.grad(outer)(x), jax.grad(outer_jax)(x))


def test_jax_jit_refusal_is_located_at_the_users_if():
    """The JAX backend runs your function's own code lowered (`if` -> `lax.cond`);
    JAX's refusal of `any` of a traced array named the lowered line (`<s2s:...>`)."""
    with pytest.raises(s2s.TransformError) as err:
        s2s.jit(F.any_positive, backend="jax")(POINTS[0])
    assert err.value.loc.file == F.__file__ and err.value.loc.text.strip() == "if any(x > 0):"
    assert "<s2s:" not in str(err.value) and "Python `if`" in str(err.value)


@pytest.mark.slow
def test_under_jax_jit():
    # a Python `if` on a traced value: JAX's own refusal under jax.jit
    with pytest.raises(Exception, match="TracerBoolConversionError"):
        s2s.jit(F.any_positive, backend="jax")(POINTS[0])
    # round has no test on a value: it runs under jax.jit, and its derivative is zero
    on_jax = s2s.jit(s2s.grad(F.rounds_a_total), backend="jax")
    for x in calls(np.float64)[:3]:
        close(on_jax(x), jax.grad(J.rounds_a_total)(x))


def test_dtypes_follow_jax_in_float32():
    x = POINTS[0].astype(np.float32)
    for name in ("rounds_a_total", "any_positive", "largest_magnitude"):
        assert s2s.grad(getattr(F, name))(x).dtype == np.float32


def test_the_first_maximal_item_wins_a_tie():
    x = np.array([0.5, -0.5, 0.1])  # a * a == b * b: Python's max keeps `a`
    close(s2s.grad(F.ties_keep_the_first)(x), jax.grad(J.ties_keep_the_first)(x))
    assert s2s.grad(F.ties_keep_the_first)(x)[0] == 3.0


def keyed_by_value(x):
    d = {"a": x[0], "b": x[1]}
    return d[max(d, key=lambda k: d[k])]


def max_of_array_rows(x):
    return np.sum(max(x, key=np.sum))


@pytest.mark.parametrize("fn, says", [(keyed_by_value, "constant key"),
                                      (max_of_array_rows, "known when the function")])
def test_what_stays_refused_is_located(fn, says):
    with pytest.raises(TransformError, match=says) as err:
        s2s.grad(fn)(np.ones((2, 3)))
    assert "test_runtime_builtins.py" in str(err.value)


def test_no_empty_backward_loop_is_emitted():
    """The generator's rows carry no derivative: the gradient has no loop over them."""
    text = s2s.grad(F.all_rows_above).source
    assert "reversed(range" not in text and "pass" not in text, text


def test_a_filtered_sum_that_keeps_no_item_is_pythons_0():
    """With some items kept it runs (against JAX); with none, Python's sum is 0, and
    so is s2s's since the twelfth pass (`np.sum(np.stack(items), axis=0) if
    len(items) else 0`; before: a located EmptyStackError naming `sum`)."""
    g = s2s.grad(F.sums_the_positive)
    x = POINTS[0]
    close(g(x), jax.grad(J.sums_the_positive)(x))
    close(g(-np.abs(x)), jax.grad(J.sums_the_positive)(-np.abs(x)))
    assert s2s.jit(F.sums_the_positive)(-np.abs(x)) == np.sum(-np.abs(x))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_math_prod_of_a_shape_is_its_size(dtype):
    """`math.prod(x.shape)` is `x.size`, a Python int (float32 stays float32, as in
    JAX); `math.prod((2, 3))` a constant spelled as written.  Refused before."""
    for name in ("mean_by_prod", "prod_of_a_named_shape"):
        ours, theirs = getattr(F, name), getattr(J, name)
        grad = s2s.grad(ours)
        for shape in [(3,), (2, 3), (3,), (1, 4)]:  # (shapes change between calls)
            x = (np.arange(np.prod(shape)).reshape(shape) / 5 - 0.3).astype(dtype)
            close(grad(x), jax.grad(theirs)(x), dtype)
        batch = np.stack([x, 2 * x])
        close(s2s.vmap(grad)(batch), jax.vmap(jax.grad(theirs))(batch), dtype)
        close(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)
