"""Derivatives at special values against JAX on the same source
(tests/special_values12_fns.py), float64 and float32.

- ``np.hypot`` with a side at +-inf: JAX's values, NaN for both sides in reverse mode
  (``[nan, 0]`` before) and 0 for both in forward mode (NaN for the infinite side
  before): JAX's ``where(inf, inf, x1 * sqrt(1 + (x2 / x1) ** 2))`` passes ``0 * inf``
  back, and its forward mode differentiates the constant ``inf``.  Where
  ``|x1| == |x2|`` JAX's Hessian is 0 (its max/min tie); s2s keeps the true one,
  checked against finite differences.
- ``np.cumprod``'s first derivatives (``jacrev``, ``jacfwd``, ``grad``): JAX's,
  NaN exactly where JAX's is NaN (``jacrev`` at ``[2, inf, 0]`` had a row ``[nan,
  2, nan]`` where JAX's is ``[inf, 2, nan]``): the rules multiply along the tree
  of products JAX's ``associative_scan`` builds (``runtime_shapes.scan_tree``), its
  cotangents summed at a shared product before they are multiplied on, not through
  a matrix of partials whose zero cotangents met infinities.
- ``np.linalg.det`` of a singular matrix: its gradient is JAX's adjugate (a
  LinAlgError on the NumPy backend before, NaN on ``backend="jax"``); its second
  derivative there: tests/test_special_values13.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import special_values12_fns as F
from support import HAVE_JAX, central_grad

import s2s

INF, NAN = np.inf, np.nan
DTYPES = [np.float64, np.float32]


def _same(got, want, dtype, where=""):
    """NaN exactly where JAX's is NaN; JAX's numbers elsewhere."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, where
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=where)
    fin = ~np.isnan(want)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(got[fin], want[fin], rtol=tol, atol=tol, err_msg=where)


def _jax():
    import jax
    from support import jax_twin

    return jax, jax_twin(F)


# ---- hypot at an infinity ----------------------------------------------------------

def test_hypot_at_an_infinity_is_jaxs() -> None:
    """JAX's numbers, written out (``test_hypot_against_jax`` asks JAX): reverse
    mode NaN for both sides, forward mode 0."""
    with np.errstate(invalid="ignore"):
        x = np.array([INF, 0.0])
        np.testing.assert_array_equal(s2s.grad(F.hypot_pair)(x), [NAN, NAN])
        np.testing.assert_array_equal(s2s.jacfwd(F.hypot_pair)(x), [0.0, 0.0])
        np.testing.assert_array_equal(s2s.grad(F.hypot_pair)(np.zeros(2)), [0.5, 0.5])


@pytest.mark.slow
def test_hypot_hessian_at_a_tie_is_the_true_one() -> None:
    """At ``|x1| == |x2|`` JAX's Hessian is 0 (its max/min tie); the true one,
    ``(I - u u^T) / r``, against central differences of the gradient."""
    x = np.array([1.0, -1.0])
    got = s2s.hessian(F.hypot_pair)(x)
    g = s2s.grad(F.hypot_pair)
    want = np.stack([central_grad(lambda v, i=i: g(v)[i], x) for i in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


HYPOT_VALUES = [0.0, -0.0, 1.0, -2.0, INF, -INF, NAN]


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_hypot_against_jax(dtype) -> None:
    """grad, jacfwd and the four second-derivative compositions at every pair of 0,
    -0, 1, -2, +-inf, NaN (the ties, where JAX's Hessian is 0, left out)."""
    jax, J = _jax()
    f, jf = F.hypot_pair, J.hypot_pair
    forms = {"grad": (s2s.grad(f), jax.grad(jf)), "jacfwd": (s2s.jacfwd(f), jax.jacfwd(jf)),
             "hessian": (s2s.hessian(f), jax.hessian(jf)),
             "jacfwd(jacfwd)": (s2s.jacfwd(s2s.jacfwd(f)), jax.jacfwd(jax.jacfwd(jf))),
             "jacrev(jacrev)": (s2s.jacrev(s2s.jacrev(f)), jax.jacrev(jax.jacrev(jf))),
             "jacrev(jacfwd)": (s2s.jacrev(s2s.jacfwd(f)), jax.jacrev(jax.jacfwd(jf)))}
    with np.errstate(all="ignore"):
        for a in HYPOT_VALUES:
            for b in HYPOT_VALUES:
                x = np.array([a, b], dtype)
                tie = abs(a) == abs(b) and np.isfinite(a) and a != 0
                for form, (ours, theirs) in forms.items():
                    if tie and form != "grad" and form != "jacfwd":
                        continue
                    _same(ours(x), theirs(x), dtype, f"{form} at {(a, b)}")


# ---- cumprod's first derivatives -----------------------------------------------------

def test_cumprod_jacobian_at_inf_and_zero_is_jaxs() -> None:
    """JAX's, written out (the sweep below asks JAX): row 1 ``[inf, 2, nan]``
    (``[nan, 2, nan]`` before)."""
    x = np.array([2.0, INF, 0.0])
    with np.errstate(invalid="ignore"):
        rev = s2s.jacrev(F.running_product)(x)
    np.testing.assert_array_equal(rev, [[NAN, 0, NAN], [INF, 2, NAN], [NAN, 0, INF]])


def _points(lengths, seed=0):
    vals = [0.0, INF, -INF, NAN, 2.0, -0.5]
    rng = np.random.default_rng(seed)
    out = [[v] for v in vals] + [[a, b] for a in vals for b in vals]
    for n in lengths:
        out += [list(rng.choice(vals, n)) for _ in range(12)]
    return out


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_cumprod_first_derivatives_against_jax(dtype) -> None:
    """jacrev and jacfwd of np.cumprod, grad of a weighted sum along an axis and
    s2s.jit(backend="jax") of jacrev, at 0, +-inf, NaN, lengths 1 to 6."""
    jax, J = _jax()
    pairs = [(s2s.jacrev(F.running_product), jax.jacrev(J.running_product)),
             (s2s.jacfwd(F.running_product), jax.jacfwd(J.running_product)),
             (s2s.jit(s2s.jacrev(F.running_product), backend="jax"),
              jax.jacrev(J.running_product))]
    rows = (s2s.grad(F.running_product_of_rows), jax.grad(J.running_product_of_rows))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in _points((3, 4, 5, 6)):
            x = np.array(p, dtype)
            for ours, theirs in pairs:
                _same(ours(x), theirs(x), dtype, f"at {p}")
            if len(p) % 2 == 0:
                _same(rows[0](x), rows[1](x), dtype, f"rows at {p}")


# ---- det of a singular matrix ------------------------------------------------------

SINGULAR = {"rank_one_2x2": [[1.0, 2.0], [2.0, 4.0]],
            "rank_two_3x3": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
            "rank_one_3x3": [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]],
            "zeros": [[0.0, 0.0], [0.0, 0.0]]}


def test_det_gradient_of_a_singular_matrix_is_the_adjugate() -> None:
    """The adjugate's transpose (JAX's, written out): LinAlgError before."""
    a = np.array(SINGULAR["rank_one_2x2"])
    np.testing.assert_allclose(s2s.grad(F.det_of)(a), [[4.0, -2.0], [-2.0, 1.0]],
                               rtol=1e-12)
    assert s2s.grad(F.det_of)(a.astype(np.float32)).dtype == np.float32


def test_det_gradient_where_det_is_not_exactly_zero() -> None:
    """float32 ``[[0.1, 0.2], [0.3, 0.6]]``: det 8e-18, not 0, and NumPy's inv raised
    (as JAX's backend gave NaN for ``[[x0, x1], [2 x0, 2 x1]]``, -m slow): singular
    by its least singular value (NumPy's matrix_rank's tolerance), the adjugate."""
    a = np.array([[0.1, 0.2], [0.3, 0.6]], np.float32)
    np.testing.assert_allclose(s2s.grad(F.det_of)(a), [[0.6, -0.3], [-0.2, 0.1]],
                               rtol=1e-5)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_det_gradient_of_singular_matrices_against_jax(dtype) -> None:
    """grad and jacfwd on the NumPy backend and s2s.jit(backend="jax"): JAX's
    adjugate, ranks n - 1 to 0; an invertible matrix unchanged."""
    jax, J = _jax()
    mats = dict(SINGULAR, invertible=[[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])
    tol = 1e-9 if dtype == np.float64 else 2e-4
    for name, a in mats.items():
        a = np.array(a, dtype)
        want = np.asarray(jax.grad(J.det_of)(a))
        for got in (s2s.grad(F.det_of)(a), s2s.jacfwd(F.det_of)(a),
                    s2s.jit(s2s.grad(F.det_of), backend="jax")(a)):
            got = np.asarray(got)
            assert got.dtype == dtype, name
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)
    x = np.array([0.3, -0.7], dtype)
    want = np.asarray(jax.grad(J.det_of_stacked_rows)(x))
    for got in (s2s.grad(F.det_of_stacked_rows)(x),
                s2s.jit(s2s.grad(F.det_of_stacked_rows), backend="jax")(x)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)
