"""A module-level ``jax.Array`` read by a function given to ``s2s.grad`` on the NumPy
backend: the check that a gradient shares no memory with what the function can reach
walked into JAX's array type and raised an internal TypeError (its ``__weakref__``
slot); JAX's arrays are immutable and are not walked now. Values against ``jax.grad``
of the same function with the array rebound between calls, float64 and float32."""

from __future__ import annotations

import jax_free_array_fns as F
import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


@pytest.mark.every_case
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_grad_reads_a_jax_array_global(dtype, monkeypatch) -> None:
    grad = s2s.grad(F.dot_free)
    x = np.linspace(-1.0, 1.0, 3).astype(dtype)
    for call in range(1, 11):
        w = jnp.asarray((np.arange(3.0) + call).astype(dtype))
        monkeypatch.setattr(F, "W", w)
        got = grad(x * call)
        want = jax.grad(lambda v: jnp.dot(w, jnp.sin(v)))(jnp.asarray(x * call))
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-5 if dtype == np.float32 else 1e-12)
        assert got.dtype == want.dtype
        got[...] = 0.0  # the caller writes into its result: the next call is unchanged
