"""Reverse mode of ``np.linalg.solve``/``slogdet``/``inv`` under ``s2s.jit(backend="jax")``
solves with the forward's LU factors, transposed, as JAX's own VJPs do
(s2s/backends/jax_numpy.py ``transposes``): no second factorization of ``k.T``.
Values against ``jax.jit(jax.grad)`` of the same source on jax.numpy (float64 and
float32, calls 1 to 3), a batched solve and a solve whose right-hand side has
another dtype (both the unchanged jax.numpy path), and the compiled program's
factorizations counted against JAX's."""

from __future__ import annotations

import types

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402


def gp_nll(ell, x, y):
    sq = (x[:, None] - x[None, :]) ** 2
    k = np.exp(-0.5 * sq / ell**2) + 0.1 * np.eye(x.shape[0])
    alpha = np.linalg.solve(k, y)
    return 0.5 * (y @ alpha) + 0.5 * np.linalg.slogdet(k)[1]


def solve_matrix(a, b):
    return np.sum(np.sin(np.linalg.solve(a, b)))


def inverse(a):
    return np.sum(np.linalg.inv(a) ** 2)


def batched(a, b):
    return np.sum(np.linalg.solve(a, b[..., None]) ** 2)


def mixed(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2)


def twin(f):
    return types.FunctionType(f.__code__, {**f.__globals__, "np": jnp}, f.__name__)


def well_conditioned(rng, *shape):
    return rng.normal(size=shape) * 0.3 + 3.0 * np.eye(shape[-1])


def cases(dtype):
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 5, 12))
    return {
        "gp_nll": (gp_nll, 0, (np.asarray(0.7, dtype), x.astype(dtype),
                               (np.sin(x) + 0.1 * rng.normal(size=12)).astype(dtype))),
        "solve_matrix": (solve_matrix, (0, 1), (well_conditioned(rng, 5, 5).astype(dtype),
                                                rng.normal(size=(5, 3)).astype(dtype))),
        "inverse": (inverse, 0, (well_conditioned(rng, 4, 4).astype(dtype),)),
        "batched": (batched, (0, 1), (well_conditioned(rng, 2, 4, 4).astype(dtype),
                                      rng.normal(size=(2, 4)).astype(dtype))),
    }


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["gp_nll", "solve_matrix", "inverse", "batched"])
def test_values_match_jax(name, dtype):
    fn, argnums, args = cases(dtype)[name]
    g = s2s.jit(s2s.grad(fn, argnums=argnums), backend="jax")
    j = jax.jit(jax.grad(twin(fn), argnums=argnums))
    tol = 2e-4 if dtype == np.float32 else 1e-10
    for call in range(3):
        scaled = tuple(a * (1 + 0.01 * call) for a in args)
        for got, want in zip(jax.tree_util.tree_leaves(g(*scaled)),
                             jax.tree_util.tree_leaves(j(*scaled))):
            assert np.asarray(got).dtype == np.asarray(want).dtype
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.parametrize("name", ["gp_nll", "solve_matrix", "inverse"])
def test_one_factorization_as_in_jax(name):
    fn, argnums, args = cases(np.float64)[name]
    g = s2s.jit(s2s.grad(fn, argnums=argnums), backend="jax")
    j = jax.jit(jax.grad(twin(fn), argnums=argnums))
    g(*args)
    ours = g._jitted.lower(*args).compile().as_text().count("getrf")
    theirs = j.lower(*args).compile().as_text().count("getrf")
    assert 0 < ours <= theirs


def test_a_right_hand_side_of_another_dtype_keeps_jax_numpy_promotion():
    rng = np.random.default_rng(1)
    a = well_conditioned(rng, 4, 4).astype(np.float32)
    b = rng.normal(size=4)  # float64: the solve promotes
    g = s2s.jit(s2s.grad(mixed, argnums=(0, 1)), backend="jax")
    want = jax.jit(jax.grad(twin(mixed), argnums=(0, 1)))(a, b)
    for got, w in zip(g(a, b), want):
        assert np.asarray(got).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(got), np.asarray(w), rtol=1e-5, atol=1e-6)
