"""Rule-table entries for more NumPy functions: complex parts of real arrays,
ldexp, differences, polynomials, trapezoid, covariance, and a few linear-algebra
functions (cond, tensorinv, tensorsolve)."""

import numpy as np

import rule_fns_more as F
from rule_table import E2ECase, Row, const, nonzero, normal, uniform


def with_nans(*shape):
    """Normal values with NaN at a few fixed places (never a whole slice)."""

    def draw(r):
        x = r.normal(size=shape)
        x.flat[[i % x.size for i in (1, 6, 11)]] = np.nan
        return x

    return draw


def increasing(n):
    """Increasing knots, spaced at least 0.2 apart, around 0."""
    return lambda r: np.cumsum(r.uniform(0.2, 1.0, size=n)) - 1.5


def well_conditioned(shape, square):
    """Normal values plus 3 times the identity, seen as a square matrix."""
    return lambda r: r.normal(size=shape) + np.reshape(3.0 * np.eye(square[0]), shape)


ROWS = [
    Row("real", "matrix", (normal(2, 3),)),
    Row("conjugate", "matrix", (normal(2, 3),)),
    Row("nan_to_num", "matrix", (normal(2, 3),)),
    Row("ldexp", "broadcast", (normal(2, 3), const(np.array([1, -2, 3])))),
    Row("ldexp", "scalar_exponent", (normal(2, 3), const(3))),
    Row("unwrap", "last_axis", (normal(2, 3),)),
    Row("unwrap", "axis0_period", (normal(3, 2),), {"axis": 0, "period": 2.0}),
    Row("rollaxis", "to_front", (normal(2, 3, 4), const(2))),
    Row("rollaxis", "to_end", (normal(2, 3, 4), const(0), const(3))),
    Row("rollaxis", "negative", (normal(2, 3, 4), const(-1), const(-2))),
    Row("diagflat", "matrix", (normal(2, 3),)),
    Row("diagflat", "below", (normal(3),), {"k": -2}),
    Row("resize", "grow", (normal(2, 3), const((4, 4)))),
    Row("resize", "shrink", (normal(2, 3), const(4))),
    Row("diff", "last", (normal(2, 3, 4),)),
    Row("diff", "twice_axis0", (normal(4, 3),), {"n": 2, "axis": 0}),
    Row("ediff1d", "matrix", (normal(2, 3),)),
    Row(
        "ediff1d",
        "ends",
        (
            normal(
                4,
            ),
        ),
        {"to_begin": np.array([1.0, 2.0]), "to_end": -1.0},
    ),
    Row("nanprod", "all", (with_nans(2, 3),)),
    Row(
        "nanprod",
        "axis1_keepdims",
        (with_nans(2, 3, 4),),
        {"axis": 1, "keepdims": True},
    ),
    Row("nanprod", "tuple", (normal(2, 3, 4),), {"axis": (0, -1)}),
    Row("trapezoid", "dx", (normal(2, 5),), {"dx": 0.5}, wrt=("y",)),
    Row("trapezoid", "axis0", (normal(4, 3),), {"axis": 0}, wrt=("y",)),
    Row("trapezoid", "x_vector", (normal(2, 5), normal(5))),
    Row("trapezoid", "x_full_axis0", (normal(4, 3), normal(4, 3)), {"axis": 0}),
    Row("cov", "rows", (normal(3, 5),)),
    Row("cov", "columns_ddof0", (normal(5, 3),), {"rowvar": False, "ddof": 0}),
    Row("cov", "vector_bias", (normal(6),), {"bias": True}),
    Row("corrcoef", "rows", (normal(3, 5),)),
    Row("corrcoef", "columns", (normal(6, 3),), {"rowvar": False}),
    Row("vander", "square", (normal(3),)),
    Row("vander", "increasing_wide", (normal(3),), {"N": 5, "increasing": True}),
    Row("polyval", "matrix_x", (normal(4), normal(2, 3))),
    Row("polyval", "scalar_x", (normal(3), normal())),
    Row("polyder", "once", (normal(5),)),
    Row("polyder", "twice", (normal(5),), {"m": 2}),
    Row("polyint", "once", (normal(4),)),
    Row(
        "polyint", "twice_constants", (normal(3),), {"m": 2, "k": np.array([1.0, -2.0])}
    ),
    Row("polyadd", "longer_second", (normal(3), normal(5))),
    Row("polyadd", "longer_first", (normal(4), normal(2))),
    Row("polysub", "longer_second", (normal(3), normal(5))),
    Row("polysub", "longer_first", (normal(4), normal(2))),
    Row("linalg.cond", "square", (normal(3, 3),)),
    Row("linalg.cond", "wide_stack", (normal(2, 3, 4),)),
    Row("linalg.tensorinv", "ind2", (well_conditioned((2, 3, 6), (6, 6)),)),
    Row("linalg.tensorinv", "ind1", (well_conditioned((6, 2, 3), (6, 6)),), {"ind": 1}),
    Row(
        "linalg.tensorsolve",
        "matrix_b",
        (well_conditioned((2, 3, 2, 3), (6, 6)), normal(2, 3)),
    ),
    Row(
        "linalg.tensorsolve",
        "x_matrix",
        (well_conditioned((6, 2, 3), (6, 6)), normal(6)),
    ),
    Row("quantile", "scalar_all", (normal(2, 5), const(0.35))),
    Row(
        "quantile", "vector_axis1", (normal(2, 5, 3), uniform(0.1, 0.9)(2)), {"axis": 1}
    ),
    Row(
        "quantile",
        "q_keepdims_neg",
        (normal(3, 4), uniform(0.1, 0.9)(2)),
        {"axis": -1, "keepdims": True},
    ),
    Row(
        "quantile",
        "ties",
        (lambda r: np.array([[1.0, 2.0, 2.0, 0.5], [3.0, 3.0, 1.0, 3.0]]), const(0.5)),
        {"axis": 1},
    ),
    Row(
        "percentile", "scalar_axis0", (normal(5, 2), uniform(10.0, 90.0)()), {"axis": 0}
    ),
    Row("percentile", "vector_all", (normal(2, 3), uniform(10.0, 90.0)(3))),
    *[
        Row(name, f"{mode}_{n}_{m}", (normal(n), normal(m)), {"mode": mode})
        for name in ("convolve", "correlate")
        for mode in ("full", "same", "valid")
        for n, m in ((5, 3), (3, 4))
    ],
    Row(
        "interp",
        "matrix_x",
        (
            uniform(-2.0, 2.0)(2, 3),
            const(np.array([-1.5, -0.5, 0.0, 0.7, 1.6])),
            normal(5),
        ),
    ),
    Row(
        "interp",
        "left_right",
        (
            uniform(-2.0, 2.0)(
                4,
            ),
            increasing(5),
            normal(5),
        ),
        {"left": 0.5, "right": -1.0},
    ),
    Row(
        "interp",
        "at_knots",
        (
            const(np.array([-1.0, 0.0, 0.5, 2.0, 3.5])),
            const(np.array([-1.0, 0.0, 0.5, 2.0])),
            normal(4),
        ),
    ),
    Row("nanquantile", "scalar_all", (with_nans(2, 5), const(0.35))),
    Row(
        "nanquantile",
        "vector_axis1",
        (with_nans(2, 5, 3), uniform(0.1, 0.9)(2)),
        {"axis": 1},
    ),
    Row(
        "nanquantile",
        "q_keepdims_neg",
        (with_nans(3, 4), uniform(0.1, 0.9)(2)),
        {"axis": -1, "keepdims": True},
    ),
    Row(
        "nanpercentile",
        "scalar_axis0",
        (with_nans(5, 2), uniform(10.0, 90.0)()),
        {"axis": 0},
    ),
    Row("nanpercentile", "vector_all", (with_nans(2, 3), uniform(10.0, 90.0)(3))),
    Row("nanmedian", "all", (with_nans(2, 5),)),
    Row(
        "nanmedian",
        "axis1_keepdims",
        (with_nans(3, 4, 2),),
        {"axis": 1, "keepdims": True},
    ),
    Row(
        "nanmedian",
        "ties",
        (
            lambda r: np.array(
                [[1.0, np.nan, 2.0, 2.0, 0.5], [3.0, 3.0, np.nan, 1.0, 3.0]]
            ),
        ),
        {"axis": 1},
    ),
    Row("polymul", "longer_second", (normal(3), normal(5))),
    Row("polymul", "longer_first", (normal(4), normal(2))),
]

# modf and divmod have two results: checked end to end only (JAX's vjp needs their
# cotangent as a pair, which the directly-called table does not build).
E2E = [
    E2ECase(F.f_real, ("real",)),
    E2ECase(F.f_conjugate, ("conjugate",)),
    E2ECase(F.f_nan_to_num, ("nan_to_num",)),
    E2ECase(F.f_ldexp, ("ldexp",)),
    E2ECase(F.f_unwrap, ("unwrap",)),
    E2ECase(F.f_rollaxis, ("rollaxis",), (normal(2, 3, 4),)),
    E2ECase(F.f_diagflat, ("diagflat",)),
    E2ECase(F.f_resize, ("resize",)),
    E2ECase(F.f_diff, ("diff",), (normal(2, 3, 4),)),
    E2ECase(F.f_ediff1d, ("ediff1d",)),
    E2ECase(F.f_nanprod, ("nanprod",)),
    E2ECase(F.f_trapezoid, ("trapezoid",), (normal(3, 2),)),
    E2ECase(F.f_trapezoid_x, ("trapezoid",), (normal(3, 2), normal(3))),
    E2ECase(F.f_cov, ("cov",), (normal(2, 3),)),
    E2ECase(F.f_corrcoef, ("corrcoef",), (normal(3, 4),)),
    E2ECase(F.f_vander, ("vander",), (normal(3),)),
    E2ECase(F.f_polyval, ("polyval",), (normal(4), normal(2, 3))),
    E2ECase(F.f_polyval_x, ("polyval",)),
    E2ECase(F.f_polyder, ("polyder",), (normal(5),)),
    E2ECase(F.f_polyint, ("polyint",), (normal(3),)),
    E2ECase(F.f_polyadd, ("polyadd",), (normal(3), normal(5))),
    E2ECase(F.f_polysub, ("polysub",), (normal(3), normal(5))),
    E2ECase(F.f_cond, ("linalg.cond",), (normal(3, 4),)),
    E2ECase(F.f_tensorinv, ("linalg.tensorinv",), (normal(2, 3, 6),)),
    E2ECase(
        F.f_tensorsolve, ("linalg.tensorsolve",), (normal(2, 3, 2, 3), normal(2, 3))
    ),
    E2ECase(F.f_quantile, ("quantile",)),
    E2ECase(F.f_quantile_q, ("quantile",), (normal(2, 5), uniform(0.1, 0.9)(2))),
    E2ECase(F.f_percentile, ("percentile",)),
    E2ECase(F.f_convolve, ("convolve",), (normal(6), normal(3))),
    E2ECase(F.f_correlate, ("correlate",), (normal(6), normal(3))),
    E2ECase(F.f_interp, ("interp",), (uniform(-2.0, 2.0)(2, 3), normal(5))),
    E2ECase(F.f_interp_knots, ("interp",), (normal(4), uniform(-1.0, 1.5)(2, 3))),
    E2ECase(F.f_nanquantile, ("nanquantile",)),
    E2ECase(F.f_nanquantile_q, ("nanquantile",), (normal(2, 5), uniform(0.1, 0.9)(2))),
    E2ECase(
        F.f_nanpercentile, ("nanpercentile",), (normal(2, 3), uniform(0.1, 0.9)(2))
    ),
    E2ECase(F.f_nanmedian, ("nanmedian",)),
    E2ECase(F.f_modf, ("modf",)),
    E2ECase(F.f_divmod, ("divmod",), (normal(2, 3), nonzero(3))),
    E2ECase(F.f_polymul, ("polymul",), (normal(3), normal(3))),
]
