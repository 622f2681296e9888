"""vmap (and jacfwd, jacrev, vmap of grad, which batch through vmap) of a function
calling a callee with a parameter left at None and with it passed: ``if k is None``
is decided per call, as JAX decides it while tracing.  Before, both calls shared one
batched callee made for the first call's path: vmap failed with NumPy's broadcast
error inside emitted code, and the rank-changing `if` was refused under jacrev (which
before that refusal gave 11 where the derivative is 7, silently).  Oracle: JAX on the
same source (jax_twin), float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest
import vmap_none_args_fns as F
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

NAMES = ["both_calls", "none_then_array", "through_a_helper"]
DTYPES = [np.float64, np.float32]
BATCH = np.array([[0.3, -0.7, 1.2], [0.1, 0.4, -0.9], [1.5, 0.2, 0.05]])


def same(got, expected, dtype):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype == dtype
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_both_calls_by_hand() -> None:
    """f = sum(2 x**2) + sum(3 x): f' = 4 x + 3, by vmap of grad, jacrev and jacfwd."""
    x = BATCH
    np.testing.assert_allclose(s2s.vmap(F.both_calls)(x),
                               np.sum(2 * x**2 + 3 * x, axis=1), rtol=1e-12)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(F.both_calls))(x), 4 * x + 3, rtol=1e-12)
    np.testing.assert_allclose(s2s.jacrev(F.both_calls)(x[0]), 4 * x[0] + 3, rtol=1e-12)
    np.testing.assert_allclose(s2s.jacfwd(F.both_calls)(x[0]), 4 * x[0] + 3, rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", NAMES)
def test_against_jax(name, dtype) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    batched, batched_grad = s2s.vmap(ours), s2s.vmap(s2s.grad(ours))
    for call in range(10):
        x = (BATCH * (1.0 - 0.15 * call)).astype(dtype)
        got = batched(x), batched_grad(x)
        if call in (0, 2, 9):
            same(got[0], jax.vmap(theirs)(x), dtype)
            same(got[1], jax.vmap(jax.grad(theirs))(x), dtype)
    same(s2s.jacrev(s2s.grad(ours))(x[0]), jax.jacrev(jax.grad(theirs))(x[0]), dtype)
    same(s2s.jacfwd(ours)(x[0]), jax.jacfwd(theirs)(x[0]), dtype)
