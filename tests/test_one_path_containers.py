"""A container bound on one path of an `if`, with a later `if` on the same test that
never names it: the normalizer gave the container a None on the other path (a dead
join) and reverse mode refused it ("holds a container and is None on another path").
The gradient is checked against JAX on both paths, the path changing between calls."""

from __future__ import annotations

import numpy as np
import pytest

import s2s
from support import HAVE_JAX, jax, jnp


def f(x):
    t = np.sum(x) > 0
    if t:
        y = x * 2.0
    else:
        pair = (np.sin(x), np.cos(x))
        y = pair[0] * pair[1]
    if t:
        z = y * 3.0
    else:
        z = y
    return np.sum(z * x)


def f_jax(x):
    t = jnp.sum(x) > 0
    y = jnp.where(t, x * 2.0, jnp.sin(x) * jnp.cos(x))
    z = jnp.where(t, y * 3.0, y)
    return jnp.sum(z * x)


@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_grad_of_a_container_bound_on_one_path(dtype, rtol) -> None:
    g = s2s.grad(f)
    base = np.array([-0.5, 0.2, -0.9], dtype)
    for k in range(10):  # the second call specializes; the path changes every call
        x = (base if k % 2 else -base) * dtype(1.0 + 0.1 * k)
        got = g(x)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, jax.grad(f_jax)(x), rtol=rtol)
        got[:] = np.nan  # writing into a result changes no later one
