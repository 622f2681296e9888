"""det's gradient through ``det_cofactor`` (s2s/runtime_linalg.py): on NumPy a stack of
clearly invertible matrices takes ``det(a) * inv(a).T`` alone (no SVD), any other stack
the SVD form (JAX's adjugate at a singular matrix).  Oracles: the adjugate from a
Python loop of minors, central differences of det, and JAX (slow tier)."""

from __future__ import annotations

import warnings

import det_cofactor14_fns as F
import numpy as np
import pytest
from support import HAVE_JAX

import s2s
import s2s.runtime_linalg as RL


def cofactors(a):
    """adj(a).T by a loop of minors, each matrix of the stack on its own."""
    a = np.asarray(a, np.float64)
    out = np.zeros(a.shape)
    for idx in np.ndindex(a.shape[:-2]):
        m = a[idx]
        n = m.shape[-1]
        for i in range(n):
            for j in range(n):
                minor = np.delete(np.delete(m, i, 0), j, 1)
                out[idx + (i, j)] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return out


RNG = np.random.default_rng(14)
INVERTIBLE = RNG.normal(size=(3, 3))
RANK_ONE = np.outer([1.0, 2.0, -1.0], [0.5, -1.0, 3.0])  # adjugate 0
RANK_TWO = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])  # adjugate not 0
NEARLY = np.diag([1.0, 1.0, 1e-12])  # invertible, past the shortcut's bound
STACK = np.stack([INVERTIBLE, RANK_TWO, 2 * np.eye(3)])


def test_det_gradient_is_the_cofactor_matrix() -> None:
    """The default tier's one transform, each signature called once: an invertible
    matrix (the shortcut) and a stack of invertible, rank n - 1, rank 1 and nearly
    singular matrices (the SVD form)."""
    fn = s2s.grad(F.det_sum)
    for a in (INVERTIBLE, np.stack([INVERTIBLE, RANK_TWO, RANK_ONE, NEARLY])):
        np.testing.assert_allclose(fn(a), cofactors(a), rtol=1e-9, atol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_det_gradient_calls_and_dtypes(dtype) -> None:
    """Invertible, rank n - 1, rank 1, nearly singular, and a stack mixing them: the
    adjugate's transpose, the dtype kept; the 1st, 2nd and 10th calls agree, and a
    result shares no memory with its argument nor with a later result."""
    fn = s2s.grad(F.det_sum)
    tol = 1e-9 if dtype == np.float64 else 2e-4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, a in [("invertible", INVERTIBLE), ("rank_one", RANK_ONE),
                        ("rank_two", RANK_TWO), ("nearly", NEARLY), ("stack", STACK)]:
            a = np.array(a, dtype)
            want = cofactors(a)
            firsts = [fn(a) for _ in range(10)]
            for got in firsts[:2] + firsts[-1:]:
                assert got.dtype == dtype, name
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)
            assert not np.shares_memory(firsts[0], a)
            firsts[0][...] = 7
            np.testing.assert_allclose(fn(a), want, rtol=tol, atol=tol, err_msg=name)


@pytest.mark.slow
def test_det_jvp_and_vmap_of_grad() -> None:
    """jvp: <cof(a), v>; vmap(grad(det)) over a stack mixing invertible and singular
    matrices: each one's cofactor matrix."""
    v = RNG.normal(size=(3, 3))
    for a in (INVERTIBLE, RANK_TWO):
        _, t = s2s.jvp(F.det_of, (a,), (v,))
        np.testing.assert_allclose(t, np.sum(cofactors(a) * v), atol=1e-9)
    got = s2s.vmap(s2s.grad(F.det_of))(STACK)
    np.testing.assert_allclose(got, cofactors(STACK), atol=1e-9)


@pytest.mark.slow
def test_det_hessian_at_an_invertible_matrix() -> None:
    """det_cofactor's own JVP (det's Hessian) against central differences of the
    minors' cofactor matrix."""
    a, e = INVERTIBLE, 1e-5
    got = s2s.hessian(F.det_of)(a)
    want = np.zeros((3, 3, 3, 3))
    for k in range(3):
        for m in range(3):
            d = np.zeros((3, 3))
            d[k, m] = e
            want[:, :, k, m] = (cofactors(a + d) - cofactors(a - d)) / (2 * e)
    np.testing.assert_allclose(got, want, atol=1e-8)


def test_an_invertible_stack_takes_no_svd(monkeypatch) -> None:
    """The shortcut: a clearly invertible stack never reaches the SVD form; a singular
    one does."""
    calls = []
    svd_form = RL.cofactor_svd
    monkeypatch.setattr(RL, "cofactor_svd", lambda a, d: calls.append(1) or svd_form(a, d))
    np.testing.assert_allclose(RL.det_cofactor(STACK[[0, 2]], np.linalg.det(STACK[[0, 2]])),
                               cofactors(STACK[[0, 2]]), atol=1e-12)
    assert calls == []
    RL.det_cofactor(STACK, np.linalg.det(STACK))
    RL.det_cofactor(np.zeros((0, 3, 3)), np.zeros(0))
    assert calls == [1, 1]


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_det_derivatives_against_jax(dtype) -> None:
    """grad, jit(grad, backend="jax"), vmap(grad), the Hessian and a third derivative
    in reverse mode at invertible matrices: JAX's."""
    import jax
    from support import jax_twin

    J = jax_twin(F)
    tol = 1e-9 if dtype == np.float64 else 2e-4
    a = np.array(INVERTIBLE, dtype)
    pairs = [(s2s.grad(F.det_of), jax.grad(J.det_of), a),
             (s2s.jit(s2s.grad(F.det_of), backend="jax"), jax.grad(J.det_of), a),
             (s2s.jit(s2s.grad(F.det_of), backend="jax"), jax.grad(J.det_of),
              np.array(RANK_TWO, dtype)),
             (s2s.vmap(s2s.grad(F.det_of)), jax.vmap(jax.grad(J.det_of)),
              np.array(STACK[[0, 2]], dtype)),
             (s2s.hessian(F.det_of), jax.hessian(J.det_of), a),
             (s2s.jacrev(s2s.hessian(F.det_of)), jax.jacrev(jax.hessian(J.det_of)), a)]
    for ours, theirs, x in pairs:
        got = np.asarray(ours(x))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, np.asarray(theirs(x)), rtol=tol, atol=tol)


def test_the_shortcut_near_its_bound_is_the_svd_form() -> None:
    """One matrix's shortcut (a Frobenius-norm condition test) at condition numbers
    from 1/10 to 10 times its bound 1/(4 n eps) and on to 1/eps, float64, float32 and
    complex: where it is taken, bit for bit cofactor_svd's answer (which then does not
    flag the matrix singular), the fast path taken near the bound, and a's dtype on
    both paths (cofactor_svd made float32 float64 before)."""
    rng = np.random.default_rng(15)
    for dtype in (np.float64, np.float32, np.complex128):
        eps = np.finfo(dtype).eps
        for n in (2, 3):
            bound = 1 / (4 * n * eps)
            taken = []
            for kappa in np.geomspace(bound / 10, 1 / eps, 24):
                u = np.linalg.qr(rng.normal(size=(n, n)))[0]
                v = np.linalg.qr(rng.normal(size=(n, n)))[0]
                s = np.geomspace(1.0, 1 / kappa, n) * 10.0 ** rng.uniform(-3, 3)
                a = ((u * s) @ v.T * (np.exp(0.3j) if dtype == np.complex128 else 1)
                     ).astype(dtype)
                d = np.linalg.det(a)
                svd_form = RL.cofactor_svd(a, d)
                assert svd_form.dtype == dtype
                calls = []
                real_svd = RL.cofactor_svd
                RL.cofactor_svd = lambda a, d: calls.append(1) or real_svd(a, d)
                try:
                    got = RL.det_cofactor(a, d)
                finally:
                    RL.cofactor_svd = real_svd
                assert got.dtype == dtype
                if not calls:
                    taken.append(kappa)
                    np.testing.assert_array_equal(got, svd_form)
            assert taken and max(taken) > bound / 3, (dtype, n, taken)
            assert max(taken) < bound * 1.1, (dtype, n, taken)


@pytest.mark.slow
def test_det_gradient_code_is_the_helper_alone() -> None:
    """The seed's spread (np.expand_dims of one) times det_cofactor folds away: the
    helper's result has a's shape and dtype, a fact of the signature."""
    fn = s2s.grad(F.det_of)
    for _ in range(3):
        np.testing.assert_allclose(fn(INVERTIBLE), cofactors(INVERTIBLE), atol=1e-9)
    assert "return det_cofactor(a, np.linalg.det(a))" in fn.specialized_source
