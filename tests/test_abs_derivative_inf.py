"""abs' at +-inf (and 0, -0.0, NaN): JAX's select(x >= 0, g, -g) gives 1 at +inf, -1 at
-inf (and -1 at NaN); s2s's conj(x) / |x| gave NaN at both infinities.  Neighbours that
already agreed (fabs, copysign, sign * x, maximum/minimum with 0, clip, the 1-norm) are
checked too.  Oracle: JAX on the same source (jax_twin), float64 and float32; grad,
jvp, vmap of grad, and the Hessian (abs'' = 0)."""

from __future__ import annotations

import abs_inf_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([np.inf, -np.inf, 0.0, -0.0, 2.0, -3.0, np.nan, 1e-30])
V = np.array([1.0, 2.0, -1.0, 0.5, 3.0, -2.0, 1.0, 4.0])
DTYPES = [np.float64, np.float32]
ABS = ["np_abs", "builtin_abs", "absolute_times_x"]
NEIGHBOURS = ["fabs", "copysign", "sign_times_x", "maximum_zero", "minimum_zero", "clip",
              "norm_one"]


def same(got, expected, dtype):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype == dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype == np.float32 else 1e-12)


def check(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    x, v = X.astype(dtype), V.astype(dtype)
    with np.errstate(all="ignore"):
        same(s2s.grad(ours)(x), jax.grad(theirs)(x), dtype)
        got = s2s.jvp(ours, (x,), (v,))
        expected = jax.jvp(theirs, (x,), (v,))
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-6)
        rows = x[:, None]  # (each point an example of its own)
        same(s2s.vmap(s2s.grad(ours))(rows), jax.vmap(jax.grad(theirs))(rows), dtype)


# JAX's abs' at X (its select(x >= 0, 1, -1), as jax.grad(jnp.abs) gives at each point)
SIGNS = np.array([1.0, -1.0, 1.0, 1.0, 1.0, -1.0, -1.0, 1.0])


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_abs_at_infinities_by_hand(dtype) -> None:
    """The default tier's check, JAX's values written out: grad, jvp, vmap of grad."""
    x, v = X.astype(dtype), V.astype(dtype)
    with np.errstate(all="ignore"):
        got = s2s.grad(F.builtin_abs)(x)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, SIGNS)
        np.testing.assert_array_equal(s2s.grad(F.np_abs)(x), 2.0 * SIGNS)
        assert s2s.jvp(F.builtin_abs, (x,), (v,))[1] == np.sum(SIGNS * V)
        got = s2s.vmap(s2s.grad(F.np_abs))(x[:, None])
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, 2.0 * SIGNS[:, None])


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", ABS)
def test_abs_against_jax(name, dtype) -> None:
    check(name, dtype)


def test_abs_second_derivative_is_zero() -> None:
    x = np.array([np.inf, -np.inf, 2.0, -3.0])
    np.testing.assert_array_equal(s2s.hessian(F.builtin_abs)(x), np.zeros((4, 4)))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", NEIGHBOURS)
def test_neighbours(name, dtype) -> None:
    check(name, dtype)
