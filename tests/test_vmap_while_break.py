"""vmap of the gradient of a `while` loop that breaks on a value: the loop's test is
also the flag its rewritten `break` clears, so the IR listed the pair twice among
the loop's carried values, and vmap stacked the test twice (an (n, n) mask: a raw
NumPy error, or silently an (n, n, ...) result with every row wrong).  Against
central finite differences of the plain function, example by example (JAX's grad
refuses a Python `if` on a traced value), float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest
from support import fd_grad

import s2s


def breaks_on_a_value(x):
    y = x
    k = 0
    while k < 10:
        y = np.sin(y) * 1.5
        if np.sum(y) > 2.0:
            break
        k = k + 1
    return np.sum(y ** 2)


def breaks_with_a_scalar(x, scale):
    y = x * scale
    k = 0
    while k < 6:
        y = np.tanh(y) + 0.3 * y
        if np.max(y) > 1.0:
            break
        k = k + 1
    return np.sum(y * x)


XS = np.array([[0.3, 0.2, 0.1], [1.0, 0.9, 0.8], [0.1, -0.2, 0.0], [2.0, 1.0, 0.5]])


def _fd_rows(f, xs, *rest):
    return np.stack([fd_grad(f, (x, *rest), 0)[0] for x in xs])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_vmap_of_grad(dtype) -> None:
    xs = XS.astype(dtype)
    want = _fd_rows(breaks_on_a_value, XS)
    g = s2s.vmap(s2s.grad(breaks_on_a_value))
    tol = dict(rtol=1e-6, atol=1e-7) if dtype == np.float64 else dict(rtol=2e-3, atol=2e-3)
    for _ in range(3):
        got = g(xs)
        assert got.shape == xs.shape and got.dtype == dtype
        np.testing.assert_allclose(got, want, **tol)
    np.testing.assert_allclose(s2s.vmap(breaks_on_a_value)(xs),
                               [breaks_on_a_value(x) for x in XS], **tol)


def test_vmap_of_grad_other_argument_unbatched() -> None:
    g = s2s.vmap(s2s.grad(breaks_with_a_scalar), in_axes=(0, None))
    for scale in (0.5, 2.0):
        want = _fd_rows(breaks_with_a_scalar, XS, scale)
        np.testing.assert_allclose(g(XS, scale), want, rtol=1e-6, atol=1e-7)


def test_one_example_and_jacobians() -> None:
    np.testing.assert_allclose(s2s.vmap(s2s.grad(breaks_on_a_value))(XS[1:2]),
                               _fd_rows(breaks_on_a_value, XS[1:2]), rtol=1e-6, atol=1e-7)
    x = XS[0]
    want = fd_grad(breaks_on_a_value, (x,), 0)[0]
    np.testing.assert_allclose(s2s.jacrev(breaks_on_a_value)(x), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(s2s.jacfwd(breaks_on_a_value)(x), want, rtol=1e-6, atol=1e-7)
