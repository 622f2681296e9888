"""Derivatives at special values (0, inf, -inf, NaN) against JAX on the same source
(tests/special_values11_fns.py), float64 and float32.

- ``functools.reduce(operator.mul, x)`` over an array: its Hessian at ``[inf, 0]``
  is JAX's ``[[0, 1], [1, 0]]`` (a NaN row before: the fold's loop carried the seed's
  zero tangent in as an array of zeros, and ``0 * inf`` is NaN; JAX unrolls the loop
  and never multiplies it).  The fold's first and last calls are now written out of
  its loop (``frontend/reduces.py``): second derivatives in all four compositions
  are JAX's, NaN exactly where JAX's.
- ``np.logaddexp`` (and ``logaddexp2``) with an operand at +inf: that operand's
  derivative is 1 (JAX's; ``exp(inf - inf)``, NaN, before), the other operand's 0,
  the limit, where JAX's rule gives 1 for a finite one (it replaces the inf in the
  result by 0: a documented difference, pinned with JAX at a large finite point as
  the oracle).
- ``np.max``/``np.min``/``np.ptp`` with a NaN on the JAX backend: NaN, as JAX and
  s2s's NumPy backend (0 before: the rules spread the cotangent by a product with
  the boolean winners, and JAX's product of a boolean and an inf is 0); an all-NaN
  ``np.nanmax``: 0, JAX's (NaN before).
- ``np.median``/``np.quantile``/``np.percentile`` of a slice holding a NaN: the
  derivative 0, JAX's (a one-hot at the sorted position before); an all-NaN
  ``np.nanmedian``: 0 (``[0.5, 0, ...]`` before).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import special_values11_fns as F
from support import HAVE_JAX

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    from support import jax_twin

    J = jax_twin(F)

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


def _seconds(name):
    f, jf = getattr(F, name), getattr(J, name)
    return {"hessian": (s2s.hessian(f), jax.hessian(jf)),
            "jacrev(grad)": (s2s.jacrev(s2s.grad(f)), jax.jacrev(jax.grad(jf))),
            "jacfwd(grad)": (s2s.jacfwd(s2s.grad(f)), jax.jacfwd(jax.grad(jf))),
            "jacfwd(jacfwd)": (s2s.jacfwd(s2s.jacfwd(f)), jax.jacfwd(jax.jacfwd(jf))),
            "grad": (s2s.grad(f), jax.grad(jf))}


# ---- a product folded over an array ----------------------------------------------

@pytest.mark.slow
def test_product_fold_hessian_at_inf_and_zero() -> None:
    """The reported case: JAX's ``[[0, 1], [1, 0]]`` (written out: the sweeps below
    ask JAX)."""
    with np.errstate(invalid="ignore"):
        got = s2s.hessian(F.product_fold)(np.array([INF, 0.0]))
    np.testing.assert_array_equal(got, [[0.0, 1.0], [1.0, 0.0]])


@pytest.mark.slow
def test_product_fold_hessian_over_calls() -> None:
    """The 1st, 3rd and 10th calls of one object at ``[inf, 0]``, finite points
    between, float64 and float32."""
    h = s2s.hessian(F.product_fold)
    for call in range(1, 11):
        for dtype in DTYPES:
            x = np.array([INF, 0.0] if call in (1, 3, 10) else [0.5 * call, -2.0], dtype)
            with np.errstate(invalid="ignore"):
                got = h(x)
            want = [[0.0, 1.0], [1.0, 0.0]]
            np.testing.assert_allclose(got, want, rtol=0, atol=0)
            assert got.dtype == dtype


FOLD_POINTS = [[INF, 0.0], [0.0, INF], [INF, 2.0], [-INF, 0.0], [2.0, INF, 0.0],
               [INF, 0.0, 2.0], [0.0, 2.0, INF], [1.5, 0.0, INF, -2.0], [3.0],
               [0.5, -3.0, 2.0, 1.25, -0.75], [NAN, 0.0]]


@pytest.mark.slow
@pytest.mark.parametrize("name, dtype", [
    ("product_fold", np.float64), ("product_fold", np.float32),
    ("product_fold_from_one", np.float64), ("product_fold_of_a_lambda", np.float32)])
def test_product_fold_second_derivatives(name, dtype) -> None:
    """grad and the four second-derivative compositions at zeros, infinities and a
    NaN, lengths 1 to 5 (each length's calls out of the loop and in it)."""
    pairs = _seconds(name)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in FOLD_POINTS:
            x = np.array(p, dtype)
            for form, (ours, theirs) in pairs.items():
                _same(ours(x), theirs(x), dtype, f"{name} {form} at {p}")


@pytest.mark.slow
def test_product_fold_gradient_is_linear_in_length() -> None:
    """Its reverse loop still adds each item's cotangent in place (no fresh array per
    iteration): 4,000 items take about as long per item as 1,000."""
    import time

    g = s2s.grad(F.product_fold)
    g(np.ones(3))
    per = []
    for n in (1000, 4000):
        x = np.ones(n)
        t = time.perf_counter()
        g(x)
        per.append((time.perf_counter() - t) / n)
    assert per[1] < 3 * per[0]


# ---- logaddexp with an operand at +inf -------------------------------------------

def test_logaddexp_at_plus_inf() -> None:
    """The operand at +inf: 1 (NaN before); the other: 0, the limit of
    ``exp(x2 - ans)``, as JAX's gradient at a large finite point; both at +inf: 1
    and 1, JAX's (float32 under -m slow, below)."""
    g = s2s.grad(F.log_sum_exp_pair)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(g(np.array([INF, 0.0])), [1.0, 0.0])
        np.testing.assert_array_equal(g(np.array([-3.0, INF])), [0.0, 1.0])
        np.testing.assert_array_equal(g(np.array([INF, -INF])), [1.0, 0.0])
        np.testing.assert_array_equal(g(np.array([INF, INF])), [1.0, 1.0])


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_logaddexp_against_jax(dtype) -> None:
    """grad, hessian, s2s.jit on both backends: JAX's values at the infinities where
    JAX's rule is the limit; where JAX gives 1 for a finite operand beside +inf
    (its rule replaces the inf in the result by 0), the limit, JAX's gradient at
    ``1e30`` in place of the inf."""
    big = 1e30
    for name in ("log_sum_exp_pair", "log_sum_exp2_pair", "log_sum_exp_against"):
        f, jf = getattr(F, name), getattr(J, name)
        ours = [s2s.grad(f), s2s.jit(s2s.grad(f)), s2s.jit(s2s.grad(f), backend="jax")]
        for p in ([INF, 0.0], [0.0, INF], [INF, -INF], [-INF, 2.0], [INF, INF],
                  [-INF, -INF], [NAN, 1.0], [3.0, -2.0]):
            x = np.array(p, dtype)
            limit = np.where(np.isposinf(x) & ~np.isposinf(x[::-1]), big, x).astype(dtype)
            finite_other = np.isposinf(x).sum() == 1 and np.isfinite(x).any()
            want = jax.grad(jf)(limit if finite_other else x)
            for t in ours:
                with np.errstate(all="ignore"):
                    _same(t(x), want, dtype, f"{name} at {p}")
            with np.errstate(all="ignore"):
                h = s2s.hessian(f)(x)
            if not finite_other and np.isfinite(x).all():
                _same(h, jax.hessian(jf)(x), dtype, f"{name} hessian at {p}")
            elif finite_other and name != "log_sum_exp_against":  # the limit's: 0
                np.testing.assert_array_equal(h, np.zeros_like(h))


# ---- max, min, ptp with a NaN: the JAX backend's gradient --------------------------

REDUCERS = ["largest", "smallest", "largest_by_amax", "spread", "spread_of_columns",
            "largest_of_rows", "largest_ignoring_nan"]
NAN_POINTS = [[1.0, NAN, 2.0, 0.0], [NAN, NAN, 0.0, 1.0], [INF, 1.0, NAN, -INF],
              [NAN, NAN, NAN, NAN], [2.0, 2.0, 1.0, 2.0]]


def test_max_and_ptp_of_a_nan_on_the_jax_backend() -> None:
    """``s2s.jit(s2s.grad(f), backend="jax")`` of ``np.max``/``np.ptp`` at a NaN:
    NaN, as s2s's NumPy backend and ``jax.grad`` (written out here; the sweep below
    asks JAX); it was 0, silently: JAX's product of a boolean and an inf is 0."""
    x = np.array([1.0, NAN, 2.0])
    for name in ("largest", "spread"):
        with np.errstate(invalid="ignore", divide="ignore"):
            got = s2s.jit(s2s.grad(getattr(F, name)), backend="jax")(x)
        assert np.isnan(got).all(), (name, got)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_reducers_at_nan_against_jax(dtype) -> None:
    """grad on both backends, jvp, jacfwd and hessian of max, min, amax, ptp (over
    all and along an axis) and nanmax with NaNs (an all-NaN nanmax: 0, JAX's),
    infinities and ties: JAX's, NaN exactly where JAX's."""
    for name in REDUCERS:
        f, jf = getattr(F, name), getattr(J, name)
        for p in NAN_POINTS:
            x = np.array(p, dtype)
            v = np.cos(np.arange(x.size)).astype(dtype)
            pairs = [(s2s.grad(f)(x), jax.grad(jf)(x)),
                     (s2s.jit(s2s.grad(f))(x), jax.grad(jf)(x)),
                     (s2s.jit(s2s.grad(f), backend="jax")(x), jax.grad(jf)(x)),
                     (s2s.jvp(f, (x,), (v,))[1], jax.jvp(jf, (x,), (v,))[1]),
                     (s2s.jacfwd(f)(x), jax.jacfwd(jf)(x)),
                     (s2s.hessian(f)(x), jax.hessian(jf)(x))]
            for k, (got, want) in enumerate(pairs):
                _same(got, want, dtype, f"{name} form {k} at {p}")


# ---- median, quantile, percentile with a NaN --------------------------------------

ORDER_STATS = ["middle", "middle_of_rows", "quantiles", "percentile_of_columns",
               "middle_ignoring_nan", "middle_of_rows_ignoring_nan"]


def test_median_of_a_nan() -> None:
    """``np.median`` of a vector holding a NaN is NaN; its gradient is JAX's 0 (it was
    a one-hot at the sorted position, a number for a NaN-valued function); an all-NaN
    ``np.nanmedian`` likewise (it was ``[0.5, 0, 0]``)."""
    x = np.array([1.0, NAN, 2.0])
    np.testing.assert_array_equal(s2s.grad(F.middle)(x), [0.0, 0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = s2s.grad(F.middle_ignoring_nan)(np.array([NAN, NAN, NAN]))
    np.testing.assert_array_equal(got, [0.0, 0.0, 0.0])


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_order_statistics_at_nan_against_jax(dtype) -> None:
    """grad on both backends, jvp, jacfwd and hessian of median, quantile,
    percentile and nanmedian (over all and along an axis) at NaNs, infinities and
    ties: JAX's."""
    for name in ORDER_STATS:
        f, jf = getattr(F, name), getattr(J, name)
        for p in NAN_POINTS:
            x = np.array(p, dtype)
            v = np.cos(np.arange(x.size)).astype(dtype)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pairs = [(s2s.grad(f)(x), jax.grad(jf)(x)),
                         (s2s.jit(s2s.grad(f))(x), jax.grad(jf)(x)),
                         (s2s.jit(s2s.grad(f), backend="jax")(x), jax.grad(jf)(x)),
                         (s2s.jvp(f, (x,), (v,))[1], jax.jvp(jf, (x,), (v,))[1]),
                         (s2s.jacfwd(f)(x), jax.jacfwd(jf)(x)),
                         (s2s.hessian(f)(x), jax.hessian(jf)(x))]
            for k, (got, want) in enumerate(pairs):
                _same(got, want, dtype, f"{name} form {k} at {p}")
