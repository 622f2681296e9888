"""Derivatives at special values against JAX on the same source
(tests/special_values13_fns.py), float64 and float32.

- ``np.linalg.det``'s second derivative at a singular matrix: the true one (JAX's
  where JAX's is finite; NaN before, sound12's marker).  The rule writes out the
  cofactor matrix's own derivative from the SVD (``d cof(s)[k] = diag(pairs @
  diag(k)) - pairs * k.T``, ``pairs`` the products of the singular values other than
  two), exact at any rank; a third derivative there is NaN, not a wrong number.
- ``jacfwd(jacfwd(np.cumprod))``: JAX's (NaN at ``[inf, 0]`` where JAX's is finite):
  its second rule (``runtime.cumprod_tangent2``) walks JAX's tree of products with
  the elements' own second-order coefficient left out, as JAX's symbolic zero, not
  a jet's 0 times inf.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import special_values13_fns as F
from support import HAVE_JAX

import s2s

DTYPES = [np.float64, np.float32]


def _jax():
    import jax
    from support import jax_twin

    return jax, jax_twin(F)


def _quiet():
    warnings.simplefilter("ignore")
    return np.errstate(all="ignore")


# ---- det's second derivative at a singular matrix -----------------------------------

# d2 det / da_ij da_kl of a 2 x 2 matrix: 1 for (00, 11), -1 for (01, 10), constant
DET2_HESSIAN = [[[[0, 0], [0, 1]], [[0, 0], [-1, 0]]],
                [[[0, -1], [0, 0]], [[1, 0], [0, 0]]]]


def test_det_hessian_at_a_singular_matrix_is_the_true_one() -> None:
    """det's Hessian of a 2 x 2 matrix is constant; at ``[[1, 2], [2, 4]]`` it was NaN
    (JAX's is this one)."""
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_allclose(s2s.hessian(F.det_of)(a), DET2_HESSIAN, atol=1e-12)


SINGULAR = {"rank_one_2x2": [[1.0, 2.0], [2.0, 4.0]],
            "rank_two_3x3": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
            "rank_one_3x3": [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]],
            "zeros_2x2": [[0.0, 0.0], [0.0, 0.0]],
            "zeros_3x3": np.zeros((3, 3)).tolist(),
            "zero_1x1": [[0.0]]}
INVERTIBLE = {"invertible_3x3": [[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]]}
# rank 2 of 4 (n - 2): JAX's Hessian is NaN there (its LU); s2s's the true one
RANK_TWO_4X4 = (np.outer([1.0, 2.0, 3.0, 4.0], [1.0, 0.0, 2.0, 1.0])
                + np.outer([0.0, 1.0, 1.0, 2.0], [3.0, 1.0, 0.0, 1.0]))


SECOND_FORMS = {"hessian": s2s.hessian,
                "jacfwd(jacfwd)": lambda f: s2s.jacfwd(s2s.jacfwd(f)),
                "jacrev(jacrev)": lambda f: s2s.jacrev(s2s.jacrev(f)),
                "jacrev(jacfwd)": lambda f: s2s.jacrev(s2s.jacfwd(f)),
                "jit(hessian, jax)": lambda f: s2s.jit(s2s.hessian(f), backend="jax")}


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_det_second_derivatives_against_jax(dtype) -> None:
    """Four second-derivative compositions and s2s.jit(hessian, backend="jax") at
    ranks n - 1 to 0 and at an invertible matrix: JAX's (NaN before at the singular
    ones); the Hessian of ``det(stack([x, 2 x]))``, 0 as JAX's (probe 5).  JAX's
    four compositions agree there; jax.hessian is the oracle for all."""
    jax, J = _jax()
    tol = 1e-9 if dtype == np.float64 else 2e-4
    mats = dict(SINGULAR, **INVERTIBLE)
    cases = [(F.det_of, J.det_of, name, a) for name, a in mats.items()]
    cases.append((F.det_of_stacked_rows, J.det_of_stacked_rows, "stacked", [0.3, -0.7]))
    with _quiet():
        for f, jf, name, a in cases:
            a = np.array(a, dtype)
            want = np.asarray(jax.hessian(jf)(a))
            for form, ours in SECOND_FORMS.items():
                got = np.asarray(ours(f)(a))
                assert got.dtype == dtype, (name, form)
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol,
                                           err_msg=f"{form} at {name}")


@pytest.mark.slow
def test_det_hessian_where_jaxs_is_nan_is_the_true_one() -> None:
    """At a rank 2 matrix of 4 x 4 JAX's Hessian is NaN; s2s's is the true one,
    against central differences of det itself (exact for its quadratic terms)."""
    a = RANK_TWO_4X4
    with _quiet():
        got = s2s.hessian(F.det_of)(a).reshape(16, 16)
    e, v0 = 1e-3, a.ravel()
    want = np.zeros((16, 16))
    for i in range(16):
        for j in range(16):
            di, dj = np.eye(16)[i] * e, np.eye(16)[j] * e
            f = [np.linalg.det((v0 + si * di + sj * dj).reshape(4, 4))
                 for si, sj in ((1, 1), (1, -1), (-1, 1), (-1, -1))]
            want[i, j] = (f[0] - f[1] - f[2] + f[3]) / (4 * e * e)
    np.testing.assert_allclose(got, want, atol=1e-8)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_det_third_derivative_is_jaxs_or_nan_at_a_singular_matrix() -> None:
    """The cofactor matrix's written-out derivative has no exact derivative of its own
    at a singular matrix: a third derivative there is NaN (not the 0 that the linear
    term alone would give, a wrong number for n >= 3); at an invertible matrix JAX's,
    and an invertible matrix of the same stack keeps its own."""
    jax, J = _jax()
    third = s2s.jacfwd(s2s.hessian(F.det_of))
    with _quiet():
        for name in ("rank_two_3x3", "rank_one_3x3", "zeros_3x3"):
            assert np.isnan(third(np.array(SINGULAR[name]))).all(), name
        a = np.array(INVERTIBLE["invertible_3x3"])
        np.testing.assert_allclose(third(a), jax.jacfwd(jax.hessian(J.det_of))(a),
                                   atol=1e-12)
        stack = np.stack([np.eye(2), np.array(SINGULAR["rank_one_2x2"])])
        h = s2s.hessian(lambda m: np.sum(np.linalg.det(m)))(stack)
    np.testing.assert_allclose(h[0, :, :, 0], DET2_HESSIAN, atol=1e-12)
    np.testing.assert_allclose(h[1, :, :, 1], DET2_HESSIAN, atol=1e-12)
    np.testing.assert_array_equal(h[0, :, :, 1], np.zeros((2, 2, 2, 2)))


# ---- cumprod's second derivatives in forward mode ------------------------------------

def test_cumprod_forward_hessian_at_inf_and_zero_is_jaxs() -> None:
    """jacfwd(jacfwd(np.cumprod)) at ``[inf, 0]``: JAX's, written out (its second
    row NaN before: the jet's 0 coefficient of t1 t2 times inf)."""
    with _quiet():
        got = s2s.jacfwd(s2s.jacfwd(F.running_product))(np.array([np.inf, 0.0]))
    np.testing.assert_array_equal(got, [[[0, 0], [0, 0]], [[0, 1], [1, 0]]])


def _points(seed=0):
    vals = [0.0, np.inf, -np.inf, np.nan, 2.0, -0.5]
    rng = np.random.default_rng(seed)
    out = [[a, b] for a in vals for b in vals]
    return out + [list(rng.choice(vals, n)) for n in (1, 3, 4) for _ in range(10)]


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_cumprod_second_derivatives_against_jax(dtype) -> None:
    """jacfwd(jacfwd) of np.cumprod and jacfwd(grad) of a product along rows, each
    against JAX's same composition (JAX's own differ in their NaNs), at 0, +-inf,
    NaN, -0.5, 2, lengths 1 to 4 (42 of these 66 points mismatched before); the
    three with reverse mode at lengths 1 and 2 (at 3 or more they still differ at 5
    to 7 of 30 points, as before: cumprod_bar's jets); vmap of jacfwd(jacfwd); third
    derivatives at ordinary points."""
    jax, J = _jax()
    f, jf = F.running_product, J.running_product
    pairs = [(s2s.jacfwd(s2s.jacfwd(f)), jax.jacfwd(jax.jacfwd(jf))),
             (s2s.jacrev(s2s.jacrev(f)), jax.jacrev(jax.jacrev(jf))),
             (s2s.jacrev(s2s.jacfwd(f)), jax.jacrev(jax.jacfwd(jf))),
             (s2s.jacfwd(s2s.jacrev(f)), jax.jacfwd(jax.jacrev(jf))),
             (s2s.jacfwd(s2s.grad(F.running_product_of_rows)),
              jax.jacfwd(jax.grad(J.running_product_of_rows)))]
    tol = 1e-12 if dtype == np.float64 else 1e-5
    with _quiet():
        for p in _points():
            x = np.array(p, dtype)
            for k, (ours, theirs) in enumerate(pairs):
                if k == 4 and len(p) % 2 or k in (1, 2, 3) and len(p) > 2:
                    continue  # (reverse mode at 3 or more: not yet JAX's, the report)
                got, want = np.asarray(ours(x)), np.asarray(theirs(x))
                assert got.dtype == dtype, p
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want), f"{k} {p}")
                fin = ~np.isnan(want)
                np.testing.assert_allclose(got[fin], want[fin], rtol=tol, atol=tol,
                                           err_msg=f"{k} at {p}")
        xs = np.array([[np.inf, 0.0, 2.0], [1.5, -0.5, 3.0]], dtype)
        got = s2s.vmap(s2s.jacfwd(s2s.jacfwd(f)))(xs)
        want = jax.vmap(jax.jacfwd(jax.jacfwd(jf)))(xs)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        fin = ~np.isnan(want)
        np.testing.assert_allclose(got[fin], np.asarray(want)[fin], rtol=tol, atol=tol)
        x = np.array([1.5, -0.5, 3.0, 0.7], dtype)
        for third, jthird in ((s2s.jacfwd(s2s.jacfwd(s2s.jacfwd(f))),
                               jax.jacfwd(jax.jacfwd(jax.jacfwd(jf)))),
                              (s2s.jacrev(s2s.jacfwd(s2s.jacfwd(f))),
                               jax.jacrev(jax.jacfwd(jax.jacfwd(jf))))):
            np.testing.assert_allclose(third(x), jthird(x), rtol=tol, atol=tol)
