"""``np.take(a, indices, axis=k)``'s gradient: the cotangent's axes that come from the
positions (none for one position, two for a 2-D array of them) go back onto axis ``k``.
Before this, one position on a middle axis of a (3, 3, 3) array gave a gradient with the
other two axes swapped (a wrong number, 4.0 off JAX's) and a 2-D array of positions a
NumPy ValueError from the rule.  Checked against JAX on the same source (float64 and
float32) under grad, vmap of grad and jacrev, three calls with changing values, and on
the JAX backend."""

from __future__ import annotations

import numpy as np
import pytest
import take_axis_fns as F
from support import HAVE_JAX, jax, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

NAMES = ["one_position_square", "one_position_last", "positions_middle", "grid_last",
         "grid_first"]
X = np.random.default_rng(17).normal(size=(3, 3, 3))


@pytest.mark.parametrize("name", NAMES)
def test_grad_matches_jax_over_calls(name) -> None:
    J = jax_twin(F)
    g = s2s.grad(getattr(F, name))
    for call in range(1, 4):
        x = X * (1.0 + 0.3 * call) - 0.1 * call
        np.testing.assert_allclose(g(x), jax.grad(getattr(J, name))(x), rtol=1e-12,
                                   atol=1e-12, err_msg=f"call {call}")


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_float32_vmap_jacrev_and_the_jax_backend(name) -> None:
    J = jax_twin(F)
    ours, theirs = getattr(F, name), getattr(J, name)
    x32 = X.astype(np.float32)
    got = s2s.grad(ours)(x32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, jax.grad(theirs)(x32), rtol=2e-5, atol=1e-6)
    batch = np.stack([X, -2.0 * X])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(ours))(batch),
                               jax.vmap(jax.grad(theirs))(batch), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s2s.jacrev(ours)(X), jax.jacrev(theirs)(X), rtol=1e-12,
                               atol=1e-12)
    jj = s2s.jit(s2s.grad(ours), backend="jax")
    for call in range(3):
        np.testing.assert_allclose(jj(X + call), jax.grad(theirs)(X + call), rtol=1e-12,
                                   atol=1e-12)
