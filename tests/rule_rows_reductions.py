"""Rule-table entries for reductions beyond sum/mean/max/min/prod: spread, weighted and
NaN-skipping means, running sums and products, the median.

Special points with a JAX convention are rows of their own: ties (ptp, median,
nanmax), zeros inside running products (cumprod exact where ``ans / a`` is 0 / 0),
NaN elements (no cotangent), and zero spread (std: NaN, as JAX).
"""

import numpy as np

import rule_fns_reductions as F
from rule_table import E2ECase, Row, const, normal, uniform

AXES = {"all": None, "1": 1, "neg": -1, "tuple": (0, 2), "neg_tuple": (-1, 0)}


def with_nans(*shape):
    """Normal values with NaN at a few fixed places (never a whole slice)."""

    def draw(r):
        x = r.normal(size=shape)
        x.flat[[i % x.size for i in (1, 6, 11, 16)]] = np.nan
        return x

    return draw


def with_zeros(*shape):
    """Normal values with zeros, two of them on one slice."""

    def draw(r):
        x = r.normal(size=shape)
        x.flat[[0, 2, 5, 9]] = 0.0
        return x

    return draw


def axis_rows(name, draw=normal, axes=AXES, wrt=None):
    """One row per axis; keepdims for the first (None) and the last axis."""
    last = list(axes)[-1]
    return [
        Row(name, f"axis_{a}{'_keepdims' if keep else ''}", (draw(2, 3, 4),),
            {"axis": axis, "keepdims": keep}, wrt=wrt)
        for a, axis in axes.items()
        for keep in ((False, True) if a in ("all", last) else (False,))
    ]


FEW_AXES = {"all": None, "1": 1, "neg_tuple": (-1, 0)}


TIES = np.array([[1.0, 3.0, 3.0, 2.0], [0.5, 0.5, 2.0, 2.0], [4.0, 4.0, 4.0, 4.0]])

ROWS = (
    axis_rows("var")
    + [Row("var", "ddof1", (normal(2, 3, 4),), {"axis": (0, 1), "ddof": 1})]
    + axis_rows("std", axes={"all": None, "neg": -1, "tuple": (0, 2)})
    + [Row("std", "ddof1", (normal(2, 3, 4),), {"axis": -1, "ddof": 1}),
       Row("std", "zero_spread", (const(np.array([[1.0, 2.0], [3.0, 3.0]])),),
           {"axis": 1})]
    + axis_rows("ptp", axes=FEW_AXES)
    + [Row("ptp", "ties", (const(TIES),), {"axis": 1})]
    + axis_rows("median", axes={"all": None, "1": 1, "neg": -1})
    + [Row("median", "odd", (normal(3, 5),), {"axis": 1}),
       Row("median", "ties", (const(TIES),), {"axis": 1}),
       Row("median", "ties_all", (const(TIES),))]
    + axis_rows("average", axes={"all": None, "1": 1, "tuple": (0, 2)}, wrt=("a",))
    # weights given (positionally: a, axis, weights), differentiated with a
    + [
        Row("average", "weights_full", (normal(2, 3, 4), const(None),
                                        uniform(0.5, 2.0)(2, 3, 4))),
        Row("average", "weights_full_axis", (normal(2, 3, 4), const(-1),
                                             uniform(0.5, 2.0)(2, 3, 4))),
        Row("average", "weights_1d_axis1", (normal(2, 3, 4), const(1),
                                            uniform(0.5, 2.0)(3))),
        Row("average", "weights_1d_axis0_keepdims", (normal(2, 3, 4), const(0),
                                                     uniform(0.5, 2.0)(2)),
            {"keepdims": True}),
        Row("average", "weights_1d_last", (normal(3, 4), const(-1),
                                           uniform(0.5, 2.0)(4))),
        Row("average", "weights_vector",
            (normal(5), const(None), uniform(0.5, 2.0)(5))),
    ]
    + axis_rows("nansum", with_nans, {"all": None, "tuple": (0, 2)})
    + axis_rows("nanmean", with_nans, {"all": None, "neg": -1, "tuple": (0, 2)})
    + axis_rows("nanvar", with_nans, {"all": None, "1": 1})
    + [Row("nanvar", "ddof1", (with_nans(2, 3, 4),), {"axis": 2, "ddof": 1})]
    + axis_rows("nanstd", with_nans, {"all": None, "tuple": (0, 2)})
    + axis_rows("nanmax", with_nans, {"all": None, "1": 1, "tuple": (0, 2)})
    + [Row("nanmax", "ties", (const(np.where(TIES == 1.0, np.nan, TIES)),),
           {"axis": 1})]
    + axis_rows("nanmin", with_nans, {"all": None, "neg": -1})
    + [
        Row(name, variant, (draw,), {"axis": axis})
        for name in ("cumsum", "cumprod")
        for variant, draw, axis in (
            ("flat", normal(2, 3, 4), None), ("axis1", normal(2, 3, 4), 1),
            ("neg", normal(3, 4), -1),
        )
    ]
    + [
        Row("cumprod", "zeros_axis", (with_zeros(3, 4),), {"axis": 1}),
        Row("cumprod", "zeros_flat", (with_zeros(3, 4),)),
        Row("nancumsum", "flat", (with_nans(2, 3, 4),)),
        Row("nancumsum", "axis1", (with_nans(2, 3, 4),), {"axis": 1}),
        Row("nancumprod", "flat", (with_nans(3, 4),)),
        Row("nancumprod", "axis_neg_zeros", (with_zeros(2, 3, 4),), {"axis": -1}),
    ]
    + [  # (numpy_api11: JAX's jnp.maximum.accumulate, ties halved along the scan)
        Row(name, variant, (draw,), {"axis": axis}, jax=f"numpy.{ufunc}.accumulate")
        for name, ufunc in (("cummax", "maximum"), ("cummin", "minimum"))
        for variant, draw, axis in (
            ("axis0", normal(4, 3), 0), ("neg", normal(2, 3, 4), -1), ("ties", const(TIES), 1),
        )
    ]
    + [  # (ufunc16: JAX's jnp.logaddexp.reduce, its logsumexp)
        Row(f"{ufunc}.reduce", variant, (draw,), {"axis": axis, **more},
            jax=f"numpy.{ufunc}.reduce")
        for ufunc in ("logaddexp", "logaddexp2")
        for variant, draw, axis, more in (
            ("axis0", normal(4, 3), 0, {}), ("all", normal(2, 3, 4), None, {}),
            ("neg_keepdims", normal(2, 3, 4), -1, {"keepdims": True}),
            ("tuple", normal(2, 3, 4), (0, 2), {}),
        )
    ]
    + [
        Row(name, f"{variant}{'_initial' if initial else ''}", (draw,),
            {"axis": axis, "include_initial": initial})
        for name in ("cumulative_sum", "cumulative_prod")
        for variant, draw, axis in (
            ("vector", normal(5), None), ("axis1", normal(2, 3, 4), 1),
            ("neg", normal(2, 3, 4), -1),
        )
        for initial in ((False, True) if variant != "neg" else (True,))
    ]
)

E2E = [
    E2ECase(F.f_var, ("var",), (normal(2, 3),)),
    E2ECase(F.f_var_method_ddof, ("var",), (normal(2, 3),)),
    E2ECase(F.f_std, ("std",), (normal(2, 3),)),
    E2ECase(F.f_std_method, ("std",), (normal(2, 3, 4),)),
    E2ECase(F.f_ptp, ("ptp",), (normal(2, 3),)),
    E2ECase(F.f_median, ("median",), (normal(2, 4),)),
    E2ECase(F.f_average, ("average",), (normal(2, 3),)),
    E2ECase(F.f_average_weights, ("average",), (normal(2, 3),)),
    E2ECase(F.f_nansum, ("nansum",), (normal(2, 3),)),
    E2ECase(F.f_nanmean, ("nanmean",), (normal(2, 3),)),
    E2ECase(F.f_nanvar, ("nanvar",), (normal(2, 3),)),
    E2ECase(F.f_nanstd, ("nanstd",), (normal(2, 3),)),
    E2ECase(F.f_nanmax, ("nanmax",), (normal(2, 3),)),
    E2ECase(F.f_nanmin, ("nanmin",), (normal(2, 3),)),
    E2ECase(F.f_cumsum, ("cumsum",), (normal(2, 3),)),
    E2ECase(F.f_cumsum_method, ("cumsum",), (normal(2, 3),)),
    E2ECase(F.f_cumprod, ("cumprod",), (normal(2, 3),)),
    E2ECase(F.f_cumprod_method, ("cumprod",), (normal(2, 3),)),
    E2ECase(F.f_running_max_min, ("cummax", "cummin"), (normal(2, 3),)),
    E2ECase(F.f_logaddexp_reduce, ("logaddexp.reduce", "logaddexp2.reduce"), (normal(2, 3),)),
    E2ECase(F.f_nancumsum, ("nancumsum",), (normal(2, 3),)),
    E2ECase(F.f_nancumprod, ("nancumprod",), (normal(2, 3),)),
    E2ECase(F.f_cumulative_sum, ("cumulative_sum",), (normal(2, 3),)),
    E2ECase(F.f_cumulative_prod, ("cumulative_prod",), (normal(2, 3),)),
    E2ECase(F.f_var_axis_argument, ("var", "cumsum"), (normal(2, 3),), static=(0,)),
    E2ECase(F.f_median_axis_argument, ("median",), (normal(4, 3),), static=(0,)),
]
