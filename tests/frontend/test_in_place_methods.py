"""``y.sort()`` and ``y.fill(v)`` on an array the function made: the write into
``y`` they are, ``y[...] = np.sort(y)`` (``y[...] = v``), so every transform reads
them as it reads a write (issue 23; they were refused as "an expression statement is
evaluated only for its side effect").  On an argument, or on an array another name
shares, the write checks refuse them, located.  Oracle: JAX on the same mathematics
(``jnp.sort``, ``jnp.full``), float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest
from support import HAVE_JAX

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    import jax.numpy as jnp


def sorted_copy(x):
    y = x.copy()
    y.sort()
    return np.sum(y * np.arange(4.0))


def sorted_columns(x):
    m = np.outer(x, x)
    m.sort(axis=0)
    return np.sum(m * np.arange(16.0).reshape(4, 4))


def filled(x):
    y = np.zeros(4)
    y.fill(x[0])
    return np.sum(y * x)


def sorts_argument(x):
    x.sort()
    return np.sum(x)


def sorts_shared(x):
    y = x.copy()
    z = y
    y.sort()
    return np.sum(z * np.arange(4.0))


def twins():
    return {
        "sorted_copy": lambda x: jnp.sum(jnp.sort(x) * jnp.arange(4.0)),
        "sorted_columns": lambda x: jnp.sum(jnp.sort(jnp.outer(x, x), axis=0)
                                            * jnp.arange(16.0).reshape(4, 4)),
        "filled": lambda x: jnp.sum(jnp.full(4, x[0]) * x),
    }


X = np.array([0.3, 0.7, 1.1, -0.4])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["sorted_copy", "sorted_columns", "filled"])
def test_against_jax(name, dtype) -> None:
    f, jf = globals()[name], twins()[name]
    tol = dict(rtol=1e-9) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)
    for call in range(1, 4):  # values (and their order) change between calls
        x = (X * (-1.0) ** call * call).astype(dtype)
        np.testing.assert_allclose(s2s.grad(f)(x), jax.grad(jf)(x), **tol)
    xs = np.stack([X, -X, 2 * X]).astype(dtype)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(xs), jax.vmap(jax.grad(jf))(xs), **tol)
    np.testing.assert_allclose(s2s.jacfwd(f)(X), jax.jacfwd(jf)(X), rtol=1e-9)
    for backend in ("numpy", "jax"):
        np.testing.assert_allclose(s2s.jit(s2s.grad(f), backend=backend)(X),
                                   jax.grad(jf)(X), rtol=1e-9)
    before = X.copy()
    s2s.grad(f)(X)
    np.testing.assert_array_equal(X, before)  # (the caller's array untouched)


@pytest.mark.parametrize("name, says", [("sorts_argument", "is an argument"),
                                        ("sorts_shared", "shares memory with `y`")])
def test_writes_that_would_be_seen_elsewhere_are_refused(name, says) -> None:
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(globals()[name])(X)
    assert says in str(err.value) and "test_in_place_methods.py" in str(err.value)
