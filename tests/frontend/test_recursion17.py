"""Issue 23: recursion over static structure (``def tsum(t): return sum(tsum(u) if
isinstance(u, tuple) else np.sum(u) for u in t)``, a function passed on to the
recursive call too).  Each recursive call is planned for its item's structure, so
the recursion ends with the nested literal's (s2s/frontend/nested_types.py); a
parameter the code took for an array is checked per call (a container there is
refused, located), and a recursion whose structure grows is refused, located.

Default tier: grad against central differences at calls 1, 3 and 10 of one
transformed object with changing values, float32, and the refusals.  Slow tier:
every transform against JAX on the same source (``jax_twin``), float64 and float32.
"""

from __future__ import annotations

import numpy as np
import pytest
import recursion17_fns as F
from support import HAVE_JAX, assert_close_to, central_grad, jax_twin

import s2s
from s2s.errors import TransformError

NAMES = ["nested_list_sum", "tuple_map_sum", "mixed_nesting"]


def _x(k: int, n: int = 5, dtype=np.float64) -> np.ndarray:
    return (np.linspace(-0.8, 1.1, n) * (1.0 + 0.1 * k) + 0.05 * k).astype(dtype)


@pytest.mark.parametrize("name", NAMES)
def test_grad_calls_1_3_10_against_central_differences(name) -> None:
    f = getattr(F, name)
    g = s2s.grad(f)
    for k in range(1, 11):
        x = _x(k)
        got = g(x)
        if k in (1, 3, 10):
            np.testing.assert_allclose(got, central_grad(f, x), rtol=1e-6, atol=1e-7)
    assert np.array_equal(x, _x(10))  # (the argument is not written)


def test_float32_and_keyword_passing() -> None:
    x = _x(2, dtype=np.float32)
    got = s2s.grad(F.tuple_map_sum)(x, s=np.float32(0.5))
    assert got.dtype == np.float32
    want = central_grad(lambda v: F.tuple_map_sum(v, 0.5), x.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def test_a_container_where_the_code_took_an_array_is_refused_per_call() -> None:
    g = s2s.grad(F.with_tree)
    for k, tree in ((1, "array"), (3, "tuple"), (10, "array")):
        x = _x(k)
        if tree == "tuple":
            with pytest.raises(TransformError) as err:
                g(x, (x, x * 2.0))
            assert "recursion17_fns.py" in str(err.value) and "`tree`" in str(err.value)
            continue
        np.testing.assert_allclose(g(x, x * k), central_grad(
            lambda v: F.with_tree(v, x * k), x), rtol=1e-6, atol=1e-7)


def test_a_recursion_whose_structure_grows_is_refused_located() -> None:
    with pytest.raises(TransformError) as err:
        s2s.grad(F.unbounded)(_x(1))
    text = str(err.value)
    assert "recursion17_fns.py" in text and "return _deeper((t,))" in text


def test_a_tree_a_loop_changes_is_refused_at_the_users_test() -> None:
    """Its structure changes at each iteration: not known when transforming, the test
    of an item is refused at the user's line, quoted as written (no s2s name)."""
    with pytest.raises(TransformError) as err:
        s2s.grad(F.loop_carried_tree)(_x(1))
    text = str(err.value)
    assert "recursion17_fns.py" in text and "isinstance(u, tuple)" in text
    assert "__s2s_" not in text


def test_a_primitive_returning_a_tuple_is_not_taken_for_an_array() -> None:
    """``x.shape`` is a tuple: its test is refused (an array's would be False: a
    wrong number), as an undecided test is."""
    with pytest.raises(TransformError) as err:
        s2s.grad(F.shape_is_a_tuple)(_x(1))
    assert "isinstance(s, tuple)" in str(err.value)


def test_python_runs_the_same_values() -> None:
    """The forward value is Python's own (emitted code calls the user's functions)."""
    x = _x(4)
    value, _ = s2s.value_and_grad(F.mixed_nesting)(x)
    assert value == pytest.approx(F.mixed_nesting(x), rel=1e-13)


# ---- slow: every transform against JAX on the same source --------------------------


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", NAMES)
def test_every_transform_against_jax(name, dtype) -> None:
    import jax

    J = jax_twin(F)
    ours, theirs = getattr(F, name), getattr(J, name)
    xs = [_x(k, dtype=dtype) for k in (1, 3, 10)]
    g = s2s.grad(ours)
    for x in xs:
        assert_close_to(g(x), jax.grad(theirs)(x), dtype)
    x = xs[0]
    t = np.cos(np.arange(x.size) + 1.0).astype(dtype)
    assert_close_to(s2s.jvp(ours, (x,), (t,)), jax.jvp(theirs, (x,), (t,)), dtype)
    assert_close_to(s2s.value_and_grad(ours)(x), jax.value_and_grad(theirs)(x), dtype)
    batch = np.stack([x, x * dtype(0.8), x * dtype(-1.1)])
    assert_close_to(s2s.vmap(s2s.grad(ours))(batch), jax.vmap(jax.grad(theirs))(batch),
                    dtype)
    assert_close_to(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)
    for backend in ("numpy", "jax"):
        jg = s2s.jit(s2s.grad(ours), backend=backend)
        for x in xs:
            assert_close_to(jg(x), jax.grad(theirs)(x), dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_special_values_and_size_one_against_jax() -> None:
    import jax

    J = jax_twin(F)
    for x in (np.array([0.3, np.nan, -0.2, 0.0]), np.array([np.inf, 0.5, 1.0, 2.0]),
              np.array([0.7, -0.4])):
        for name in NAMES:
            with np.errstate(all="ignore"):
                got = s2s.grad(getattr(F, name))(x)
            want = jax.grad(getattr(J, name))(x)
            np.testing.assert_allclose(got, np.asarray(want), rtol=1e-9, atol=1e-12,
                                       equal_nan=True)
