"""``y[idx] = v`` and ``y[idx] += v`` with an integer-array index that names an
element more than once.  NumPy keeps the last of the writes to one element (``+=``
reads ``y[idx]`` once, then writes: the last sum wins, nothing accumulates), so only
that write's value reaches the result.  Reverse mode gave every write the element's
cotangent (as if the writes accumulated): silently wrong gradients.  JAX is not the
oracle here (``.at[].set`` leaves the order of repeated writes unspecified, and
``+=`` lowers to an accumulating ``.at[].add``): central differences and a Python
loop that performs the writes one by one are."""

from __future__ import annotations

import numpy as np
import pytest
from support import HAVE_JAX

import s2s


def assigned(x):
    y = np.zeros(3, dtype=x.dtype)
    y[[0, 0, 2]] = x[:3] * 2.0
    return np.sum(y * np.arange(1.0, 4.0))


def added(x):
    y = x.copy()
    y[[0, 0, 1]] += x[:3] ** 2
    return np.sum(y**2)


def by_argument(x, idx):
    y = np.tanh(x)
    y[idx] = x[: len(idx)] ** 3
    return np.sum(y * x)


def rows(x):
    m = np.outer(x, x)
    m[[1, 1, 0], [2, 2, 1]] = np.sin(x[:3])
    return np.sum(m**2)


def loop_oracle(name, x, idx=None):
    """The writes one at a time, in order (what NumPy's assignment keeps)."""
    if name == "assigned":
        y = np.zeros(3)
        for k, i in enumerate([0, 0, 2]):
            y[i] = 2.0 * x[k]
        return float(np.sum(y * np.arange(1.0, 4.0)))
    if name == "added":
        y, before = x.copy(), x.copy()
        for k, i in enumerate([0, 0, 1]):
            y[i] = before[i] + x[k] ** 2
        return float(np.sum(y**2))
    if name == "by_argument":
        y = np.tanh(x)
        for k, i in enumerate(idx):
            y[i] = x[k] ** 3
        return float(np.sum(y * x))
    m = np.outer(x, x)
    for k, (i, j) in enumerate(zip([1, 1, 0], [2, 2, 1])):
        m[i, j] = np.sin(x[k])
    return float(np.sum(m**2))


def central(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


X = np.array([0.3, 0.7, 1.1, -0.4])
IDX = np.array([2, 0, 2, 3])
CASES = [("assigned", ()), ("added", ()), ("by_argument", (IDX,)), ("rows", ())]


@pytest.mark.parametrize("name, rest", CASES, ids=[c[0] for c in CASES])
def test_forward_matches_the_loop_and_gradients_match_differences(name, rest) -> None:
    f = globals()[name]
    oracle = (lambda x: loop_oracle(name, x, *rest))
    np.testing.assert_allclose(f(X, *rest), oracle(X), rtol=1e-12)
    want = central(oracle, X)
    np.testing.assert_allclose(s2s.grad(f)(X, *rest), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jacrev(f)(X, *rest), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jacfwd(f)(X, *rest), want, rtol=1e-6, atol=1e-8)
    xs = np.stack([X, 0.5 * X, -X])
    got = s2s.vmap(s2s.grad(f), in_axes=(0,) + (None,) * len(rest))(xs, *rest)
    np.testing.assert_allclose(got, np.stack([central(oracle, r) for r in xs]), rtol=1e-6,
                               atol=1e-8)
    g32 = s2s.grad(f)(X.astype(np.float32), *rest)
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, want, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("name, rest", CASES, ids=[c[0] for c in CASES])
def test_hessian_and_jit(name, rest) -> None:
    f = globals()[name]
    oracle = (lambda x: loop_oracle(name, x, *rest))
    hess = np.stack([central(lambda z, i=i: central(oracle, z, 1e-5)[i], X, 1e-4)
                     for i in range(X.size)])
    np.testing.assert_allclose(s2s.hessian(f)(X, *rest), hess, rtol=1e-4, atol=1e-4)
    backends = ("numpy", "jax") if HAVE_JAX else ("numpy",)
    for backend in backends:
        g = s2s.jit(s2s.grad(f), backend=backend)
        for _ in range(3):
            np.testing.assert_allclose(g(X, *rest), central(oracle, X), rtol=1e-6, atol=1e-8)


def test_indexes_change_between_calls() -> None:
    """a repeated index on some calls, none on others: each call's own winners."""
    g = s2s.grad(by_argument)
    for call in range(10):
        idx = np.array([call % 4, (call * 3) % 4, call % 4])
        x = X * (1.0 + 0.1 * call)
        want = central(lambda z: loop_oracle("by_argument", z, idx), x)
        np.testing.assert_allclose(g(x, idx), want, rtol=1e-6, atol=1e-8)
