"""A transform of an ``s2s.jit`` function (``s2s.grad(s2s.jit(f))``) is the
transform of ``f``, as ``jax.grad(jax.jit(f))`` is: refused before as "``__call__``
is not a function s2s can transform".  Against JAX, float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest
from support import HAVE_JAX

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")


def f(x, k=2.0):
    return np.sum(np.sin(x) ** 2 * x) * k


def f_jax(x, k=2.0):
    import jax.numpy as jnp

    return jnp.sum(jnp.sin(x) ** 2 * x) * k


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_transforms_of_a_jitted_function(backend, dtype) -> None:
    import jax

    x = np.array([0.3, -0.7, 1.2], dtype)
    tol = dict(rtol=1e-9) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-6)
    jitted = s2s.jit(f, backend=backend)
    expected = jax.grad(jax.jit(f_jax))(x)
    got = s2s.grad(jitted)(x)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expected, **tol)
    np.testing.assert_allclose(s2s.hessian(jitted)(x), jax.hessian(f_jax)(x), **tol)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(jitted))(np.stack([x, 2 * x])),
                               jax.vmap(jax.grad(f_jax))(np.stack([x, 2 * x])), **tol)
    np.testing.assert_allclose(s2s.jit(s2s.grad(jitted))(x), expected, **tol)
    static = s2s.jit(f, backend=backend, static_argnums=1)
    np.testing.assert_allclose(s2s.grad(static)(x, 3.0), jax.grad(f_jax)(x, 3.0), **tol)
