"""vmap of a loop whose accumulator starts at a Python number (``acc = 0.0``, ``acc =
0``): each example's ``acc + x[i] * w`` keeps float32 (a Python number is weakly
typed, in NumPy as in JAX), and the batched code made the start a float64 array that
promoted every sum.  ``np.zeros(())`` is a float64 array in both, and stays one.
Oracle: JAX on the same source (jax_twin), float32 and float64; vmap, vmap of grad,
jacfwd; calls 1, 3 and 10 on changing batches."""

from __future__ import annotations

import numpy as np
import pytest
import vmap_weak_fns as F
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

NAMES = ["acc_float", "acc_int", "acc_half", "acc_zeros", "acc_rows", "acc_loss"]
DTYPES = [np.float32, np.float64]
X = np.array([[0.3, -0.7, 1.2], [0.1, 0.4, -0.9], [1.5, 0.2, 0.05], [0.0, 2.0, -1.0]])
W = np.array([0.5, -1.5, 2.0, 0.25])


def same(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    tol = 2e-6 if got.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_float32_accumulators_by_hand() -> None:
    """The default tier's check: JAX's dtypes written out (float32 for a Python
    number's start, float64 for np.zeros(())), the sums by a Python loop."""
    x, w = X.astype(np.float32), np.float32(2.0)
    expected = (x[:, 0] + x[:, 1] + x[:, 2]) * w
    for fn, dtype in ((F.acc_float, np.float32), (F.acc_int, np.float32),
                      (F.acc_zeros, np.float64)):
        got = s2s.vmap(fn, in_axes=(0, None))(x, w)
        assert got.dtype == dtype, (fn.__name__, got.dtype)
        np.testing.assert_allclose(got, expected, rtol=1e-6)
        got = s2s.vmap(fn)(x, np.full(4, w))  # (w batched too)
        assert got.dtype == dtype, (fn.__name__, got.dtype)
    grads = s2s.vmap(s2s.grad(F.acc_float), in_axes=(0, None))(x, w)
    assert grads.dtype == np.float32
    np.testing.assert_array_equal(grads, np.full((4, 3), 2.0, np.float32))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", NAMES)
def test_against_jax(name, dtype) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    batched = s2s.vmap(ours)
    shared = s2s.vmap(ours, in_axes=(0, None))
    batched_grad = s2s.vmap(s2s.grad(ours, argnums=(0, 1)))
    for call in range(10):
        x, w = (X * (1.0 + 0.1 * call)).astype(dtype), (W - 0.05 * call).astype(dtype)
        got = batched(x, w), shared(x, w[0]), batched_grad(x, w)
        if call not in (0, 2, 9):
            continue
        same(got[0], jax.vmap(theirs)(x, w))
        same(got[1], jax.vmap(theirs, in_axes=(0, None))(x, w[0]))
        for g, e in zip(got[2], jax.vmap(jax.grad(theirs, argnums=(0, 1)))(x, w)):
            same(g, e)
    same(s2s.jacfwd(ours)(x[0], w[0]), jax.jacfwd(theirs)(x[0], w[0]))
