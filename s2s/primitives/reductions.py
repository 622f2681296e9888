"""Reductions over axes: ``axis`` may be None, an int, a negative int or a tuple.

Each VJP first puts the reduced axes back into ``g`` (unless ``keepdims`` kept them),
then broadcasts to the input's shape.  ``np.expand_dims`` counts axes against the
input's rank, which is exactly what ``axis`` refers to.
"""

from typing import Any

import numpy as np

from ..ir.nodes import KEYWORD_OPERANDS, Const, Let, Var
from ..ir.spelling import atom_text
from ..runtime import (
    cumprod_bar,
    cumprod_tangent,
    prod_of_others,
    real_only,
    unbroadcast,
    weights_along,
)
from .batching import (
    Batch,
    NoBatchRule,
    _operand_rank,
    _static,
    _with_batch,
    args_text,
    batch_rule,
    only_first_batched,
    operand,
    shifted,
)
from .registry import Refused, defjvp, deflinear, defprim, defvjp, is_integer_constant

defprim(
    "sum", np.sum, "(a, axis=None, keepdims=False)", family="reduction", batch="reducer",
    methods=("sum",),
)


@defvjp("sum")
def sum_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    return np.broadcast_to(g, np.shape(a))


deflinear("sum", "a", keywords=True)


defprim(
    "mean", np.mean, "(a, axis=None, keepdims=False)", family="reduction", batch="reducer",
    methods=("mean",),
)


@defvjp("mean")
def mean_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is None:
        return np.broadcast_to(g / np.size(a), np.shape(a))
    if not keepdims:
        g = np.expand_dims(g, axis)
    # (Python's max: a Python float count, weak in NumPy's promotion, so a float32
    # cotangent stays float32 as in JAX; no output: none reduced)
    count = np.size(a) / max(np.size(ans), 1)
    return np.broadcast_to(g / count, np.shape(a))


deflinear("mean", "a", keywords=True)


defprim(
    "max", np.max, "(a, axis=None, keepdims=False, initial=None)", family="reduction",
    batch="reducer",
    aliases=(np.amax,), methods=("max",),
    note="ties share the cotangent evenly, as JAX; a NaN max's derivative NaN, on "
    "both backends, as JAX",
)


# Ties share evenly: each winner takes g / count.  The count is summed in the output's
# dtype (a float32 gradient stays float32), and g is divided before it is spread over
# the boolean winners: XLA runs that order as fast as JAX's own rule, where
# g * winners / count ran 10 to 20% slower on 1e5 elements (tools/bench_jit.py).  It
# is spread by np.where, not share * winners: JAX's product with a boolean is 0 where
# the share is NaN or inf, and a NaN max (no winner, count 0) had the gradient 0 on the
# JAX backend where NumPy's and JAX's are NaN.
@defvjp("max")
def max_vjp(g, ans, a, axis=None, keepdims=False, initial=None):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        ans = np.expand_dims(ans, axis)
    winners = a == ans
    count = np.sum(winners * np.ones_like(ans), axis=axis, keepdims=True)
    share = g / count
    return np.where(winners, share, share * 0.0)


@defjvp("max", "a")
def max_jvp(a_dot, ans, a, axis=None, keepdims=False, initial=None):
    if axis is not None and not keepdims:
        ans = np.expand_dims(ans, axis)
    winners = a == ans
    count = np.sum(winners * np.ones_like(ans), axis=axis, keepdims=keepdims)
    return np.sum(a_dot * winners, axis=axis, keepdims=keepdims) / count


defprim(
    "min", np.min, "(a, axis=None, keepdims=False, initial=None)", family="reduction",
    batch="reducer",
    aliases=(np.amin,), methods=("min",),
    note="ties share the cotangent evenly, as JAX",
)


# The same rules as max's: the winners are the elements equal to the output.
defvjp("min")(max_vjp)
defjvp("min", "a")(max_jvp)


defprim(
    "prod", np.prod, "(a, axis=None, keepdims=False)", family="reduction", batch="reducer",
    methods=("prod",),
    note="exact at zeros: uses products of the other elements, not prod / a",
)


@defvjp("prod")
def prod_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    return g * prod_of_others(a, axis)


@defjvp("prod", "a")
def prod_jvp(a_dot, ans, a, axis=None, keepdims=False):
    return np.sum(a_dot * prod_of_others(a, axis), axis=axis, keepdims=keepdims)


# ---- spread: variance, standard deviation, peak to peak ------------------------
# count below is the number of elements reduced into each output, size(a) / size(ans),
# a NumPy float: with ddof = count (np.var of one element, ddof=1) the rule divides by
# 0 as NumPy does (inf and nan, as JAX), where a Python float raised ZeroDivisionError;
# an output of no elements (an empty axis kept) reduces none.
# The cotangent is centred again (c - mean(c), of c = a - mean(a); the tangent likewise
# a_dot - mean(a_dot)), a term that is zero for finite values and NaN where the
# reduced values hold an inf or a NaN: JAX's derivative, whose trace has the term
# (without it, var([1, inf, 2])' was [-inf, nan, -inf] where JAX gives all NaN).

defprim(
    "var", np.var, "(a, axis=None, ddof=0, keepdims=False)", family="reduction",
    batch="reducer",
    methods=("var",),
)


@defvjp("var")
def var_vjp(g, ans, a, axis=None, ddof=0, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    centered = a - np.mean(a, axis=axis, keepdims=True)
    centered = centered - np.mean(centered, axis=axis, keepdims=True)
    count = np.size(a) / np.maximum(np.size(ans), 1)
    return np.real(g) * np.conj(centered) * (2 / (count - ddof))


@defjvp("var", "a")
def var_jvp(a_dot, ans, a, axis=None, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    a_dot = a_dot - np.mean(a_dot, axis=axis, keepdims=True)
    count = np.size(a) / np.maximum(np.size(ans), 1)
    return np.sum(np.real(a_dot * np.conj(centered)), axis=axis, keepdims=keepdims) * (
        2 / (count - ddof)
    )


defprim(
    "std", np.std, "(a, axis=None, ddof=0, keepdims=False)", family="reduction",
    batch="reducer",
    methods=("std",),
    note="NaN where the deviation is 0 (the derivative of sqrt at 0), as JAX; of a "
    "complex a the mean of |a - mean|^2 (real), as var",
)


@defvjp("std")
def std_vjp(g, ans, a, axis=None, ddof=0, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        ans = np.expand_dims(ans, axis)
    centered = a - np.mean(a, axis=axis, keepdims=True)
    centered = centered - np.mean(centered, axis=axis, keepdims=True)
    count = np.size(a) / np.maximum(np.size(ans), 1)
    return np.real(g) * np.conj(centered) / ((count - ddof) * ans)


@defjvp("std", "a")
def std_jvp(a_dot, ans, a, axis=None, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    a_dot = a_dot - np.mean(a_dot, axis=axis, keepdims=True)
    count = np.size(a) / np.maximum(np.size(ans), 1)
    return np.sum(np.real(a_dot * np.conj(centered)), axis=axis, keepdims=keepdims) / (
        (count - ddof) * ans
    )


defprim(
    "ptp", np.ptp, "(a, axis=None, keepdims=False)", family="reduction", batch="reducer",
    note="max - min: ties share the cotangent evenly, as JAX; NaN where the max or "
    "min is NaN, on both backends, as JAX",
)


@defvjp("ptp")
def ptp_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    top = a == np.max(a, axis=axis, keepdims=True)
    bottom = a == np.min(a, axis=axis, keepdims=True)
    ones = np.ones_like(a)  # (0 / count, not a boolean: NaN where no element wins)
    up = np.sum(top * ones, axis=axis, keepdims=True)
    down = np.sum(bottom * ones, axis=axis, keepdims=True)
    return g * (np.where(top, 1.0 / up, 0.0 / up) - np.where(bottom, 1.0 / down, 0.0 / down))


@defjvp("ptp", "a")
def ptp_jvp(a_dot, ans, a, axis=None, keepdims=False):
    top = a == np.max(a, axis=axis, keepdims=True)
    bottom = a == np.min(a, axis=axis, keepdims=True)
    ones = np.ones_like(a)
    up = np.sum(top * ones, axis=axis, keepdims=True)
    down = np.sum(bottom * ones, axis=axis, keepdims=True)
    weights = np.where(top, 1.0 / up, 0.0 / up) - np.where(bottom, 1.0 / down, 0.0 / down)
    return np.sum(a_dot * weights, axis=axis, keepdims=keepdims)


defprim(
    "median", np.median, "(a, axis=None, keepdims=False)", family="reduction",
    batch="reducer",
    note="the middle element (the two middle ones share it, for an even count) in a "
    "stable sort: ties resolved by position, as JAX; axis None, an int or a tuple; 0 where "
    "the slice holds a NaN, as JAX",
)


@defvjp("median")
def median_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is None:
        order = np.argsort(a, axis=None, kind="stable")
        rank = np.reshape(np.argsort(order, kind="stable"), np.shape(a))
        n = np.size(a)
    else:
        if not keepdims:
            g = np.expand_dims(g, axis)
        # the axes (an int or a tuple) moved last in increasing order, as JAX merges
        # them (which ranks ties by position in that order)
        axes = sorted(k % np.ndim(a) for k in (axis if isinstance(axis, tuple) else (axis,)))
        last = list(range(-len(axes), 0))
        moved = np.moveaxis(a, axes, last)
        merged = np.reshape(moved, np.shape(moved)[: np.ndim(a) - len(axes)] + (-1,))
        rank = np.argsort(np.argsort(merged, axis=-1, kind="stable"), axis=-1)
        rank = np.moveaxis(np.reshape(rank, np.shape(moved)), last, axes)
        n = np.shape(merged)[-1]
    clean = ~np.any(np.isnan(a), axis=axis, keepdims=True)  # (a NaN's median: 0, JAX's)
    return (g / 2 * (rank == (n - 1) // 2) + g / 2 * (rank == n // 2)) * clean


@defjvp("median", "a")
def median_jvp(a_dot, ans, a, axis=None, keepdims=False):
    if axis is None:
        order = np.argsort(a, axis=None, kind="stable")
        rank = np.reshape(np.argsort(order, kind="stable"), np.shape(a))
        n = np.size(a)
    else:
        # the axes (an int or a tuple) moved last in increasing order, as JAX merges
        # them (which ranks ties by position in that order)
        axes = sorted(k % np.ndim(a) for k in (axis if isinstance(axis, tuple) else (axis,)))
        last = list(range(-len(axes), 0))
        moved = np.moveaxis(a, axes, last)
        merged = np.reshape(moved, np.shape(moved)[: np.ndim(a) - len(axes)] + (-1,))
        rank = np.argsort(np.argsort(merged, axis=-1, kind="stable"), axis=-1)
        rank = np.moveaxis(np.reshape(rank, np.shape(moved)), last, axes)
        n = np.shape(merged)[-1]
    low = np.sum(a_dot * (rank == (n - 1) // 2), axis=axis, keepdims=keepdims)
    high = np.sum(a_dot * (rank == n // 2), axis=axis, keepdims=keepdims)
    return (low + high) / 2 * ~np.any(np.isnan(a), axis=axis, keepdims=keepdims)


# ---- weighted mean --------------------------------------------------------------

defprim(
    "average", np.average, "(a, axis=None, weights=None, keepdims=False)",
    family="reduction", batch="reducer", diff=("a", "weights"),
    note="weights: None, a's shape, or 1-D along an int axis.  Reverse mode does not "
    "yet pass keyword arguments' cotangents on: np.average(x, weights=w) gives w "
    "no gradient (the rule computes it)",
)


@defvjp("average")
def average_vjp(g, ans, a, axis=None, weights=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        ans = np.expand_dims(ans, axis)
    if weights is None:
        count = np.size(a) / max(np.size(ans), 1)  # (a Python float, as mean_vjp's)
        return np.broadcast_to(g / count, np.shape(a)), None
    w = weights_along(weights, a, axis)
    total = np.sum(np.broadcast_to(w, np.shape(a)), axis=axis, keepdims=True)
    weights_bar = unbroadcast(g * (a - ans) / total, w)
    return g * w / total, np.reshape(weights_bar, np.shape(weights))


@defjvp("average", "a")
def average_jvp_a(a_dot, ans, a, axis=None, weights=None, keepdims=False):
    if weights is None:
        return np.mean(a_dot, axis=axis, keepdims=keepdims)
    w = np.broadcast_to(weights_along(weights, a, axis), np.shape(a))
    return np.sum(a_dot * w, axis=axis, keepdims=keepdims) / np.sum(
        w, axis=axis, keepdims=keepdims
    )


@defjvp("average", "weights")
def average_jvp_weights(weights_dot, ans, a, axis=None, weights=None, keepdims=False):
    if axis is not None and not keepdims:
        ans = np.expand_dims(ans, axis)
    w = np.broadcast_to(weights_along(weights, a, axis), np.shape(a))
    w_dot = weights_along(weights_dot, a, axis)
    return np.sum(w_dot * (a - ans), axis=axis, keepdims=keepdims) / np.sum(
        w, axis=axis, keepdims=keepdims
    )


# ---- reductions that skip NaN: a NaN element gets no cotangent, as JAX ---------

defprim("nansum", np.nansum, "(a, axis=None, keepdims=False)", family="reduction",
        batch="reducer")


@defvjp("nansum")
def nansum_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    return np.where(np.isnan(a), 0.0, g)


@defjvp("nansum", "a")
def nansum_jvp(a_dot, ans, a, axis=None, keepdims=False):
    return np.sum(np.where(np.isnan(a), 0.0, a_dot), axis=axis, keepdims=keepdims)


defprim("nanmean", np.nanmean, "(a, axis=None, keepdims=False)", family="reduction",
        batch="reducer")


@defvjp("nanmean")
def nanmean_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    kept = ~np.isnan(a)
    return g * kept / np.sum(kept, axis=axis, keepdims=True)


@defjvp("nanmean", "a")
def nanmean_jvp(a_dot, ans, a, axis=None, keepdims=False):
    kept = ~np.isnan(a)
    return np.sum(np.where(kept, a_dot, 0.0), axis=axis, keepdims=keepdims) / np.sum(
        kept, axis=axis, keepdims=keepdims
    )


defprim(
    "nanvar", np.nanvar, "(a, axis=None, ddof=0, keepdims=False)", family="reduction",
    batch="reducer",
)


@defvjp("nanvar")
def nanvar_vjp(g, ans, a, axis=None, ddof=0, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    kept = ~np.isnan(a)
    centered = np.where(kept, a - np.nanmean(a, axis=axis, keepdims=True), 0.0)
    return np.real(g) * np.conj(centered) * 2 / (np.sum(kept, axis=axis, keepdims=True) - ddof)


@defjvp("nanvar", "a")
def nanvar_jvp(a_dot, ans, a, axis=None, ddof=0, keepdims=False):
    kept = ~np.isnan(a)
    centered = np.where(kept, a - np.nanmean(a, axis=axis, keepdims=True), 0.0)
    return np.sum(np.real(a_dot * np.conj(centered)), axis=axis, keepdims=keepdims) * 2 / (
        np.sum(kept, axis=axis, keepdims=keepdims) - ddof
    )


defprim(
    "nanstd", np.nanstd, "(a, axis=None, ddof=0, keepdims=False)", family="reduction",
    batch="reducer",
)


@defvjp("nanstd")
def nanstd_vjp(g, ans, a, axis=None, ddof=0, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        ans = np.expand_dims(ans, axis)
    kept = ~np.isnan(a)
    centered = np.where(kept, a - np.nanmean(a, axis=axis, keepdims=True), 0.0)
    return np.real(g) * np.conj(centered) / (
        (np.sum(kept, axis=axis, keepdims=True) - ddof) * ans)


@defjvp("nanstd", "a")
def nanstd_jvp(a_dot, ans, a, axis=None, ddof=0, keepdims=False):
    kept = ~np.isnan(a)
    centered = np.where(kept, a - np.nanmean(a, axis=axis, keepdims=True), 0.0)
    return np.sum(np.real(a_dot * np.conj(centered)), axis=axis, keepdims=keepdims) / (
        (np.sum(kept, axis=axis, keepdims=keepdims) - ddof) * ans
    )


for _name, _impl in (("nanmax", np.nanmax), ("nanmin", np.nanmin)):
    defprim(
        _name, _impl, "(a, axis=None, keepdims=False)", family="reduction",
        batch="reducer", note="ties share the cotangent evenly and NaN never wins, as JAX; "
        "an all-NaN slice's derivative 0, as JAX",
    )

    @defvjp(_name)
    def nanmax_vjp(g, ans, a, axis=None, keepdims=False):
        if axis is not None and not keepdims:
            g = np.expand_dims(g, axis)
            ans = np.expand_dims(ans, axis)
        winners = a == ans
        count = np.sum(winners * np.ones_like(ans), axis=axis, keepdims=True)
        share = g / np.maximum(count, 1.0)  # (an all-NaN slice: no winner; 0, as JAX)
        return np.where(winners, share, share * 0.0)

    @defjvp(_name, "a")
    def nanmax_jvp(a_dot, ans, a, axis=None, keepdims=False):
        if axis is not None and not keepdims:
            ans = np.expand_dims(ans, axis)
        winners = a == ans
        count = np.sum(winners * np.ones_like(ans), axis=axis, keepdims=keepdims)
        total = np.sum(a_dot * winners, axis=axis, keepdims=keepdims)
        return total / np.maximum(count, 1.0)


# ---- running sums and products ----------------------------------------------------
# axis=None runs over the flattened array.  Each output element is a sum (product) of
# the inputs before it, so the cotangent of an input sums the cotangents after it.

defprim("cumsum", np.cumsum, "(a, axis=None)", family="reduction",
        batch="cumulative", methods=("cumsum",))


@defvjp("cumsum")
def cumsum_vjp(g, ans, a, axis=None):
    if axis is None:
        return np.reshape(np.flip(np.cumsum(np.flip(g))), np.shape(a))
    if is_integer_constant(axis):
        return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)
    # an axis known only when the code runs (vmap batches np.flip with a constant axis
    # only): the sums from each element on are the total less the sums before it
    return g + np.sum(g, axis=axis, keepdims=True) - np.cumsum(g, axis=axis)


deflinear("cumsum", "a", keywords=True)


defprim(
    "cumprod", np.cumprod, "(a, axis=None)", family="reduction",
    batch="cumulative", methods=("cumprod",),
    note="exact at zeros (products of the other elements, never ans / a), as JAX",
)


@defvjp("cumprod")
def cumprod_vjp(g, ans, a, axis=None):
    return cumprod_bar(g, a, axis)


@defjvp("cumprod", "a")
def cumprod_jvp(a_dot, ans, a, axis=None):
    return cumprod_tangent(a_dot, a, axis)


defprim(
    "nancumsum", np.nancumsum, "(a, axis=None)", family="reduction", batch="cumulative",
    note="NaN counts as 0 and gets no cotangent, as JAX",
)


@defvjp("nancumsum")
def nancumsum_vjp(g, ans, a, axis=None):
    if axis is None:
        reversed_sums = np.reshape(np.flip(np.cumsum(np.flip(g))), np.shape(a))
        return np.where(np.isnan(a), 0.0, reversed_sums)
    reversed_sums = np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)
    return np.where(np.isnan(a), 0.0, reversed_sums)


@defjvp("nancumsum", "a")
def nancumsum_jvp(a_dot, ans, a, axis=None):
    return np.cumsum(np.where(np.isnan(a), 0.0, a_dot), axis=axis)


defprim(
    "nancumprod", np.nancumprod, "(a, axis=None)", family="reduction", batch="cumulative",
    note="NaN counts as 1 and gets no cotangent, as JAX; exact at zeros",
)


@defvjp("nancumprod")
def nancumprod_vjp(g, ans, a, axis=None):
    a_bar = cumprod_bar(g, np.where(np.isnan(a), 1.0, a), axis)
    return np.where(np.isnan(a), 0.0, a_bar)


@defjvp("nancumprod", "a")
def nancumprod_jvp(a_dot, ans, a, axis=None):
    return cumprod_tangent(
        np.where(np.isnan(a), 0.0, a_dot), np.where(np.isnan(a), 1.0, a), axis
    )


# NumPy 2's array-API spellings: axis is required beyond 1-D, and include_initial
# puts the empty sum (0) or product (1) first, which no input reaches.
defprim(
    "cumulative_sum", np.cumulative_sum, "(x, axis=None, include_initial=False)",
    family="reduction", batch="cumulative",
)


@defvjp("cumulative_sum")
def cumulative_sum_vjp(g, ans, x, axis=None, include_initial=False):
    if include_initial:
        g = np.delete(g, 0, axis=axis)
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


deflinear("cumulative_sum", "x", keywords=True)


defprim(
    "cumulative_prod", np.cumulative_prod, "(x, axis=None, include_initial=False)",
    family="reduction", batch="cumulative", note="exact at zeros, as JAX",
)


@defvjp("cumulative_prod")
def cumulative_prod_vjp(g, ans, x, axis=None, include_initial=False):
    if include_initial:
        g = np.delete(g, 0, axis=axis)
    return cumprod_bar(g, x, axis)


@defjvp("cumulative_prod", "x")
def cumulative_prod_jvp(x_dot, ans, x, axis=None, include_initial=False):
    if include_initial:
        return np.insert(cumprod_tangent(x_dot, x, axis), 0, 0.0, axis=axis)
    return cumprod_tangent(x_dot, x, axis)


# ---- counting: no derivative flows --------------------------------------------------

defprim(
    "count_nonzero", np.count_nonzero, "(a, axis=None, keepdims=False)",
    family="reduction",
    batch="reducer", nondiff=True, note="an integer count: no derivative flows",
)

# ``np.any`` / ``np.all``: truth values, as JAX gives them no derivative (vmap's masked
# loops test them: ``while np.any(running)``)
for _name in ("any", "all"):
    defprim(
        _name, getattr(np, _name), "(a, axis=None, keepdims=False)", family="reduction",
        batch="reducer", nondiff=True, methods=(_name,), note="a truth value: no derivative flows",
    )


# ---- more reductions: products skipping NaN, the trapezoid rule, covariance ---------

defprim(
    "nanprod", np.nanprod, "(a, axis=None, keepdims=False)", family="reduction",
    batch="reducer",
    note="NaN counts as 1 and gets no cotangent, as JAX; exact at zeros",
)


@defvjp("nanprod")
def nanprod_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    others = prod_of_others(np.where(np.isnan(a), 1.0, a), axis)
    return np.where(np.isnan(a), 0.0, g * others)


@defjvp("nanprod", "a")
def nanprod_jvp(a_dot, ans, a, axis=None, keepdims=False):
    others = prod_of_others(np.where(np.isnan(a), 1.0, a), axis)
    return np.sum(np.where(np.isnan(a), 0.0, a_dot * others), axis=axis,
                  keepdims=keepdims)


# trapezoid(y, x) = sum(diff(x) * (y[1:] + y[:-1]) / 2) along axis: linear in y and
# (through diff) in x.  With x None the spacing is dx.  The neighbour sums
# y[1:] + y[:-1] are y times |D|, D the (m - 1, m) difference matrix.
defprim(
    "trapezoid", np.trapezoid, "(y, x=None, dx=1.0, axis=-1)", family="reduction",
    diff=("y", "x"),
    note="x: None, 1-D along axis, or y's shape; dx a constant.  Reverse mode does "
    "not yet pass a keyword argument's cotangent on: pass x positionally",
)


@defvjp("trapezoid")
def trapezoid_vjp(g, ans, y, x=None, dx=1.0, axis=-1):
    d = np.diff(np.eye(np.shape(y)[axis]), axis=0)
    g = np.expand_dims(g, -1)
    if x is None:
        weights = np.sum(np.abs(d), axis=0) * (0.5 * dx)
        return np.moveaxis(g * weights, -1, axis), None
    if np.ndim(x) == 1:
        steps = np.diff(x)
    else:
        steps = np.moveaxis(np.diff(x, axis=axis), axis, -1)
    y_bar = np.moveaxis(g * steps * 0.5 @ np.abs(d), -1, axis)
    x_bar = g * 0.5 * (np.moveaxis(y, axis, -1) @ np.matrix_transpose(np.abs(d))) @ d
    if np.ndim(x) == 1:
        x_bar = np.sum(np.reshape(x_bar, (-1, np.size(x))), axis=0)
    else:
        x_bar = np.moveaxis(x_bar, -1, axis)
    return y_bar, x_bar


@defjvp("trapezoid", "y")
def trapezoid_jvp_y(y_dot, ans, y, x=None, dx=1.0, axis=-1):
    return np.trapezoid(y_dot, x, dx=dx, axis=axis)


@defjvp("trapezoid", "x")
def trapezoid_jvp_x(x_dot, ans, y, x=None, dx=1.0, axis=-1):
    return np.trapezoid(y, x_dot, axis=axis)


@batch_rule("trapezoid")
def trapezoid_rule(b: Batch, s: Let) -> str:
    """Along the moved axis.  A per-example 1-D ``x`` is laid along that axis of the
    batched ``y`` (NumPy reads a 1-D ``x`` only when it is the whole argument)."""
    y, x = s.args[0], operand(s, "x")
    ry = b.rank(y)
    axis = _static(b, s, "axis", -1)
    k = axis % ry
    y_text = _with_batch(b, y)
    params = {"axis": str(k + 1)}
    if x is None or (isinstance(x, Const) and x.value is None):
        return args_text(s, [y_text] + [atom_text(a) for a in s.args[1:]], params)
    x_text = atom_text(x)
    rx = _operand_rank(b, x)  # (a constant list of points is a vector)
    if b.batched(x) and rx == 1 and ry > 1:
        x_text = f"np.reshape({x_text}, ({b.use_batch_size()},{' 1,' * k} -1"
        x_text += ", 1" * (ry - 1 - k) + "))"
    elif b.batched(x) and rx == 1:
        pass
    elif not b.batched(x) and rx == 1:
        x_text = f"np.reshape({x_text}, ({'1, ' * (k + 1)}-1{', 1' * (ry - 1 - k)}))"
    keywords = s.params.get(KEYWORD_OPERANDS, ())
    if "x" in keywords:
        return args_text(s, [y_text, x_text], params)
    if "x" in s.params:  # constant points: a parameter, spelled as one
        return args_text(s, [y_text] + [atom_text(a) for a in s.args[1:]],
                         {**params, "x": x_text})
    return args_text(s, [y_text, x_text] + [atom_text(a) for a in s.args[2:]], params)


# np.cov(m) = xc @ xc.T / (N - ddof) for x = m's variables as rows (rowvar; a 1-D m
# is one variable; with rowvar False a 2-D m is transposed unless it has one row) and
# xc = x minus its row means.  The centring needs no term of its own: xc's rows sum
# to 0, so (G + G.T) @ xc / (N - ddof) is already centred.
defprim(
    "cov", np.cov, "(m, rowvar=True, bias=False, ddof=None)", diff=("m",),
    family="reduction", note="m only (no y; fweights=, aweights= are a form)",
)


@defvjp("cov")
def cov_vjp(g, ans, m, rowvar=True, bias=False, ddof=None):
    x = np.atleast_2d(m)
    if not rowvar:
        if np.shape(x)[0] != 1:
            x = np.matrix_transpose(x)
    if ddof is None:
        ddof = 1
        if bias:
            ddof = 0
    xc = x - np.mean(x, axis=1, keepdims=True)
    gm = np.reshape(g, (np.shape(x)[0], np.shape(x)[0]))
    # c = xc xc^H / (N - ddof): of complex m, conjugate transposes
    x_bar = (gm + np.conj(np.matrix_transpose(gm))) @ np.conj(xc) / (np.shape(x)[1] - ddof)
    if not rowvar:
        if np.shape(x)[0] != np.shape(np.atleast_2d(m))[0]:
            x_bar = np.matrix_transpose(x_bar)
    return np.reshape(x_bar, np.shape(m))


@defjvp("cov", "m")
def cov_jvp(m_dot, ans, m, rowvar=True, bias=False, ddof=None):
    x = np.atleast_2d(m)
    x_dot = np.atleast_2d(m_dot)
    if not rowvar:
        if np.shape(x)[0] != 1:
            x = np.matrix_transpose(x)
            x_dot = np.matrix_transpose(x_dot)
    if ddof is None:
        ddof = 1
        if bias:
            ddof = 0
    xc = x - np.mean(x, axis=1, keepdims=True)
    xc_dot = x_dot - np.mean(x_dot, axis=1, keepdims=True)
    c_dot = xc_dot @ np.conj(np.matrix_transpose(xc))
    return np.reshape((c_dot + np.conj(np.matrix_transpose(c_dot))) / (np.shape(x)[1] - ddof),
                      np.shape(ans))


def _variables(b: Batch, s: Let, m: Any, rowvar: bool) -> str:
    """Each example's variables as rows, ``(n, k, N)``, as ``np.cov`` reads them."""
    t = atom_text(m)
    x = f"{t}[:, None, :]" if b.rank(m) == 1 else t
    if not rowvar and b.rank(m) == 2:
        x = f"(np.swapaxes({x}, 1, 2) if np.shape({x})[1] != 1 else {x})"
    return x


def _covariance(x: str, ddof: int) -> str:
    xc = f"({x} - np.mean({x}, axis=2, keepdims=True))"
    return f"({xc} @ np.swapaxes({xc}, 1, 2) / (np.shape({x})[2] - {ddof}))"


@batch_rule("cov")
def cov_rule(b: Batch, s: Let) -> str:
    """Per example ``xc @ xc.T / (N - ddof)`` with a batch in front; a 0-d example
    result (one variable) is read at ``[:, 0, 0]``."""
    only_first_batched(b, s)
    rowvar, bias = _static(b, s, "rowvar", True), _static(b, s, "bias", False)
    ddof = _static(b, s, "ddof", None)
    ddof = (0 if bias else 1) if ddof is None else ddof
    c = _covariance(_variables(b, s, s.args[0], rowvar), ddof)
    return f"{c}[:, 0, 0]" if b.out_rank(s) == 0 else c


# np.corrcoef(x) = c / sqrt(outer(d, d)), c = np.cov(x), d its diagonal.  NumPy (and
# JAX) clip the result to [-1, 1]; the clip is not differentiated (it only acts on
# rounding at the diagonal, where the derivative is 0 anyway).
defprim(
    "corrcoef", np.corrcoef, "(x, rowvar=True)", diff=("x",), family="reduction",
    note="x only (no y); the final clip to [-1, 1] is not differentiated",
)


@defvjp("corrcoef")
def corrcoef_vjp(g, ans, x, rowvar=True):
    v = real_only(np.atleast_2d(x), "np.corrcoef")
    if not rowvar:
        if np.shape(v)[0] != 1:
            v = np.matrix_transpose(v)
    k = np.shape(v)[0]
    vc = v - np.mean(v, axis=1, keepdims=True)
    c = vc @ np.matrix_transpose(vc) / (np.shape(v)[1] - 1)
    d = np.diagonal(c)
    s = np.sqrt(d)
    r = c / (s[:, None] * s)
    gm = np.reshape(g, (k, k))
    gr = gm * r
    d_bar = np.sum(gr + np.matrix_transpose(gr), axis=1) / (2.0 * d)
    c_bar = gm / (s[:, None] * s) - np.eye(k) * d_bar
    v_bar = (c_bar + np.matrix_transpose(c_bar)) @ vc / (np.shape(v)[1] - 1)
    if not rowvar:
        if np.shape(v)[0] != np.shape(np.atleast_2d(x))[0]:
            v_bar = np.matrix_transpose(v_bar)
    return np.reshape(v_bar, np.shape(x))


@defjvp("corrcoef", "x")
def corrcoef_jvp(x_dot, ans, x, rowvar=True):
    v = real_only(np.atleast_2d(x), "np.corrcoef")
    v_dot = np.atleast_2d(x_dot)
    if not rowvar:
        if np.shape(v)[0] != 1:
            v = np.matrix_transpose(v)
            v_dot = np.matrix_transpose(v_dot)
    vc = v - np.mean(v, axis=1, keepdims=True)
    vc_dot = v_dot - np.mean(v_dot, axis=1, keepdims=True)
    c = vc @ np.matrix_transpose(vc) / (np.shape(v)[1] - 1)
    c_dot = vc_dot @ np.matrix_transpose(vc)
    c_dot = (c_dot + np.matrix_transpose(c_dot)) / (np.shape(v)[1] - 1)
    d = np.diagonal(c)
    s = np.sqrt(d)
    half = np.diagonal(c_dot) / (2.0 * d)
    r_dot = (c_dot - c * (half[:, None] + half)) / (s[:, None] * s)
    return np.reshape(r_dot, np.shape(ans))


@batch_rule("corrcoef")
def corrcoef_rule(b: Batch, s: Let) -> str:
    """The batched covariance over the outer product of its diagonal's square roots,
    clipped to [-1, 1] as NumPy does."""
    only_first_batched(b, s)
    c = _covariance(_variables(b, s, s.args[0], _static(b, s, "rowvar", True)), 1)
    t = s.target
    sd = f"np.sqrt(np.diagonal({t}, axis1=1, axis2=2))"
    r = f"np.clip(({t} := {c}) / ({sd}[:, :, None] * {sd}[:, None, :]), -1, 1)"
    return f"{r}[:, 0, 0]" if b.out_rank(s) == 0 else r


# ---- quantiles with linear interpolation ---------------------------------------------
# As JAX: sort along the axis (stable: ties ranked by position), read the elements at
# floor(pos) and ceil(pos), pos = q (n - 1), and mix them with weights 1 - t and t,
# t = pos - floor(pos).  The cotangent goes to the two elements read, by those
# weights; d/dq is (high - low) (n - 1), 0 where pos is a whole number.  In the rules
# the reduced axis is moved last (flattened for axis None); `weights` is, for each q,
# the weight of each sorted position, and `take` reads it at each element's rank.

def _one_axis(args: list, kwargs: dict) -> tuple[list, dict]:
    """The quantile functions' call with an ``axis`` tuple written in it: refused at
    the call (their rules sort along one axis)."""
    axis = kwargs.get("axis", args[2] if len(args) > 2 else None)
    if isinstance(axis, Const) and isinstance(axis.value, (tuple, list)):
        raise Refused("an `axis` tuple is not supported here (the derivative's rules "
                      "sort along one axis)", "merge those axes into one first: "
                      "np.reshape(np.moveaxis(a, axes, ...), ...) with axis=-1")
    return args, kwargs


defprim(
    "quantile", np.quantile, "(a, q, axis=None, keepdims=False)", family="reduction",
    note="method 'linear' only; q 0-d or 1-D; axis None or an int; ties ranked by "
    "position (a stable sort), as JAX",
    canonical=_one_axis,
)


@defvjp("quantile")
def quantile_vjp(g, ans, a, q, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
    else:
        moved = np.moveaxis(a, axis, -1)
    n = np.shape(moved)[-1]
    rank = np.argsort(np.argsort(moved, axis=-1, kind="stable"), axis=-1)
    pos = np.expand_dims(q * (n - 1), -1)
    low = np.floor(pos)
    high = np.ceil(pos)
    sorted_at = np.arange(n)
    t = pos - low
    weights = (1.0 - t) * (sorted_at == low) + t * (sorted_at == high)
    per_element = np.take(weights, rank, axis=-1) * ~np.any(
        np.isnan(moved), axis=-1, keepdims=True)  # (a slice holding a NaN: 0, JAX's)
    g = np.reshape(g, np.shape(per_element)[:-1])
    a_bar = np.sum(np.reshape(np.expand_dims(g, -1) * per_element,
                              (-1,) + np.shape(rank)), axis=0)
    steps = (sorted_at == high) * 1.0 - (sorted_at == low)
    slope = np.tensordot(steps, np.sort(moved, axis=-1), axes=(-1, -1))
    q_bar = np.sum(np.reshape(g * slope, np.shape(q) + (-1,)), axis=-1) * (n - 1)
    if axis is None:
        return np.reshape(a_bar, np.shape(a)), q_bar
    return np.moveaxis(a_bar, -1, axis), q_bar


@defjvp("quantile", "a")
def quantile_jvp_a(a_dot, ans, a, q, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
        moved_dot = np.ravel(a_dot)
    else:
        moved = np.moveaxis(a, axis, -1)
        moved_dot = np.moveaxis(a_dot, axis, -1)
    n = np.shape(moved)[-1]
    rank = np.argsort(np.argsort(moved, axis=-1, kind="stable"), axis=-1)
    pos = np.expand_dims(q * (n - 1), -1)
    low = np.floor(pos)
    high = np.ceil(pos)
    sorted_at = np.arange(n)
    t = pos - low
    weights = (1.0 - t) * (sorted_at == low) + t * (sorted_at == high)
    clean = ~np.any(np.isnan(moved), axis=-1, keepdims=True)
    return np.reshape(np.sum(np.take(weights, rank, axis=-1) * clean * moved_dot,
                             axis=-1), np.shape(ans))


@defjvp("quantile", "q")
def quantile_jvp_q(q_dot, ans, a, q, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
    else:
        moved = np.moveaxis(a, axis, -1)
    n = np.shape(moved)[-1]
    pos = np.expand_dims(q * (n - 1), -1)
    sorted_at = np.arange(n)
    steps = (sorted_at == np.ceil(pos)) * 1.0 - (sorted_at == np.floor(pos))
    slope = np.tensordot(steps, np.sort(moved, axis=-1), axes=(-1, -1)) * (n - 1)
    # slope: q's axes first; reversed, they come last and meet q_dot's
    return np.reshape(np.transpose(np.transpose(slope) * q_dot), np.shape(ans))


defprim(
    "percentile", np.percentile, "(a, q, axis=None, keepdims=False)",
    family="reduction",
    note="np.quantile at q / 100: method 'linear' only; q 0-d or 1-D; axis None or "
    "an int; ties ranked by position, as JAX",
    canonical=_one_axis,
)


@defvjp("percentile")
def percentile_vjp(g, ans, a, q, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
    else:
        moved = np.moveaxis(a, axis, -1)
    n = np.shape(moved)[-1]
    rank = np.argsort(np.argsort(moved, axis=-1, kind="stable"), axis=-1)
    pos = np.expand_dims(q / 100.0 * (n - 1), -1)
    low = np.floor(pos)
    high = np.ceil(pos)
    sorted_at = np.arange(n)
    t = pos - low
    weights = (1.0 - t) * (sorted_at == low) + t * (sorted_at == high)
    per_element = np.take(weights, rank, axis=-1) * ~np.any(
        np.isnan(moved), axis=-1, keepdims=True)  # (a slice holding a NaN: 0, JAX's)
    g = np.reshape(g, np.shape(per_element)[:-1])
    a_bar = np.sum(np.reshape(np.expand_dims(g, -1) * per_element,
                              (-1,) + np.shape(rank)), axis=0)
    steps = (sorted_at == high) * 1.0 - (sorted_at == low)
    slope = np.tensordot(steps, np.sort(moved, axis=-1), axes=(-1, -1))
    q_bar = np.sum(np.reshape(g * slope, np.shape(q) + (-1,)), axis=-1)
    q_bar = q_bar * ((n - 1) / 100.0)
    if axis is None:
        return np.reshape(a_bar, np.shape(a)), q_bar
    return np.moveaxis(a_bar, -1, axis), q_bar


@defjvp("percentile", "a")
def percentile_jvp_a(a_dot, ans, a, q, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
        moved_dot = np.ravel(a_dot)
    else:
        moved = np.moveaxis(a, axis, -1)
        moved_dot = np.moveaxis(a_dot, axis, -1)
    n = np.shape(moved)[-1]
    rank = np.argsort(np.argsort(moved, axis=-1, kind="stable"), axis=-1)
    pos = np.expand_dims(q / 100.0 * (n - 1), -1)
    low = np.floor(pos)
    high = np.ceil(pos)
    sorted_at = np.arange(n)
    t = pos - low
    weights = (1.0 - t) * (sorted_at == low) + t * (sorted_at == high)
    clean = ~np.any(np.isnan(moved), axis=-1, keepdims=True)
    return np.reshape(np.sum(np.take(weights, rank, axis=-1) * clean * moved_dot,
                             axis=-1), np.shape(ans))


@defjvp("percentile", "q")
def percentile_jvp_q(q_dot, ans, a, q, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
    else:
        moved = np.moveaxis(a, axis, -1)
    n = np.shape(moved)[-1]
    pos = np.expand_dims(q / 100.0 * (n - 1), -1)
    sorted_at = np.arange(n)
    steps = (sorted_at == np.ceil(pos)) * 1.0 - (sorted_at == np.floor(pos))
    slope = np.tensordot(steps, np.sort(moved, axis=-1), axes=(-1, -1))
    slope = slope * ((n - 1) / 100.0)
    # slope: q's axes first; reversed, they come last and meet q_dot's
    return np.reshape(np.transpose(np.transpose(slope) * q_dot), np.shape(ans))


# ---- quantiles skipping NaN -------------------------------------------------------
# As JAX: NaN sorts last, and each slice reads positions q (count - 1), count its
# non-NaN elements; NaN elements get no cotangent.  Here each element's weight is
# computed from its rank directly (rank == low, rank == high), with pos of shape
# q's + the slice's (an outer product, np.tensordot(q, count - 1, axes=0)).

defprim(
    "nanquantile", np.nanquantile, "(a, q, axis=None, keepdims=False)",
    family="reduction",
    note="method 'linear' only; q 0-d or 1-D; axis None or an int; NaN skipped and "
    "given no cotangent; ties ranked by position, as JAX",
    canonical=_one_axis,
)


@defvjp("nanquantile")
def nanquantile_vjp(g, ans, a, q, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
    else:
        moved = np.moveaxis(a, axis, -1)
    kept = np.logical_not(np.isnan(moved))
    count = np.sum(kept, axis=-1, keepdims=True)
    rank = np.argsort(np.argsort(moved, axis=-1, kind="stable"), axis=-1)
    pos = np.tensordot(q, count - 1, axes=0)
    low = np.floor(pos)
    high = np.ceil(pos)
    weights = (1.0 - (pos - low)) * (rank == low) + (pos - low) * (rank == high)
    g = np.reshape(g, np.shape(weights)[:-1])
    a_bar = np.sum(np.reshape(np.expand_dims(g, -1) * weights, (-1,) + np.shape(rank)),
                   axis=0)
    steps = (rank == high) * 1.0 - (rank == low)
    slope = np.sum(steps * np.where(kept, moved, 0.0) * (count - 1), axis=-1)
    q_bar = np.sum(np.reshape(g * slope, np.shape(q) + (-1,)), axis=-1)
    if axis is None:
        return np.reshape(a_bar, np.shape(a)), q_bar
    return np.moveaxis(a_bar, -1, axis), q_bar


@defjvp("nanquantile", "a")
def nanquantile_jvp_a(a_dot, ans, a, q, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
        moved_dot = np.ravel(a_dot)
    else:
        moved = np.moveaxis(a, axis, -1)
        moved_dot = np.moveaxis(a_dot, axis, -1)
    count = np.sum(np.logical_not(np.isnan(moved)), axis=-1, keepdims=True)
    rank = np.argsort(np.argsort(moved, axis=-1, kind="stable"), axis=-1)
    pos = np.tensordot(q, count - 1, axes=0)
    low = np.floor(pos)
    high = np.ceil(pos)
    weights = (1.0 - (pos - low)) * (rank == low) + (pos - low) * (rank == high)
    kept_dot = np.where(np.isnan(moved), 0.0, moved_dot)
    return np.reshape(np.sum(weights * kept_dot, axis=-1), np.shape(ans))


@defjvp("nanquantile", "q")
def nanquantile_jvp_q(q_dot, ans, a, q, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
    else:
        moved = np.moveaxis(a, axis, -1)
    kept = np.logical_not(np.isnan(moved))
    count = np.sum(kept, axis=-1, keepdims=True)
    rank = np.argsort(np.argsort(moved, axis=-1, kind="stable"), axis=-1)
    pos = np.tensordot(q, count - 1, axes=0)
    steps = (rank == np.ceil(pos)) * 1.0 - (rank == np.floor(pos))
    slope = np.sum(steps * np.where(kept, moved, 0.0) * (count - 1), axis=-1)
    # slope: q's axes first; reversed, they come last and meet q_dot's
    return np.reshape(np.transpose(np.transpose(slope) * q_dot), np.shape(ans))


defprim(
    "nanpercentile", np.nanpercentile, "(a, q, axis=None, keepdims=False)",
    family="reduction",
    note="np.nanquantile at q / 100 (method 'linear'; q 0-d or 1-D; axis None or an "
    "int); NaN skipped and given no cotangent, as JAX",
    canonical=_one_axis,
)


@defvjp("nanpercentile")
def nanpercentile_vjp(g, ans, a, q, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
    else:
        moved = np.moveaxis(a, axis, -1)
    kept = np.logical_not(np.isnan(moved))
    count = np.sum(kept, axis=-1, keepdims=True)
    rank = np.argsort(np.argsort(moved, axis=-1, kind="stable"), axis=-1)
    pos = np.tensordot(q / 100.0, count - 1, axes=0)
    low = np.floor(pos)
    high = np.ceil(pos)
    weights = (1.0 - (pos - low)) * (rank == low) + (pos - low) * (rank == high)
    g = np.reshape(g, np.shape(weights)[:-1])
    a_bar = np.sum(np.reshape(np.expand_dims(g, -1) * weights, (-1,) + np.shape(rank)),
                   axis=0)
    steps = (rank == high) * 1.0 - (rank == low)
    slope = np.sum(steps * np.where(kept, moved, 0.0), axis=-1, keepdims=True)
    slope = np.sum(slope * ((count - 1) / 100.0), axis=-1)
    q_bar = np.sum(np.reshape(g * slope, np.shape(q) + (-1,)), axis=-1)
    if axis is None:
        return np.reshape(a_bar, np.shape(a)), q_bar
    return np.moveaxis(a_bar, -1, axis), q_bar


@defjvp("nanpercentile", "a")
def nanpercentile_jvp_a(a_dot, ans, a, q, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
        moved_dot = np.ravel(a_dot)
    else:
        moved = np.moveaxis(a, axis, -1)
        moved_dot = np.moveaxis(a_dot, axis, -1)
    count = np.sum(np.logical_not(np.isnan(moved)), axis=-1, keepdims=True)
    rank = np.argsort(np.argsort(moved, axis=-1, kind="stable"), axis=-1)
    pos = np.tensordot(q / 100.0, count - 1, axes=0)
    low = np.floor(pos)
    high = np.ceil(pos)
    weights = (1.0 - (pos - low)) * (rank == low) + (pos - low) * (rank == high)
    kept_dot = np.where(np.isnan(moved), 0.0, moved_dot)
    return np.reshape(np.sum(weights * kept_dot, axis=-1), np.shape(ans))


@defjvp("nanpercentile", "q")
def nanpercentile_jvp_q(q_dot, ans, a, q, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
    else:
        moved = np.moveaxis(a, axis, -1)
    kept = np.logical_not(np.isnan(moved))
    count = np.sum(kept, axis=-1, keepdims=True)
    rank = np.argsort(np.argsort(moved, axis=-1, kind="stable"), axis=-1)
    pos = np.tensordot(q / 100.0, count - 1, axes=0)
    steps = (rank == np.ceil(pos)) * 1.0 - (rank == np.floor(pos))
    slope = np.sum(steps * np.where(kept, moved, 0.0), axis=-1, keepdims=True)
    slope = np.sum(slope * ((count - 1) / 100.0), axis=-1)
    # slope: q's axes first; reversed, they come last and meet q_dot's
    return np.reshape(np.transpose(np.transpose(slope) * q_dot), np.shape(ans))


@batch_rule("quantile", "percentile", "nanquantile", "nanpercentile")
def quantile_rule(b: Batch, s: Let) -> str:
    """Over the moved axis (every per-example axis for None); NumPy puts q's axis
    first, so a 1-D q's axis is moved behind the batch axis."""
    a, q = s.args[0], s.args[1]
    if b.batched(q):
        raise NoBatchRule(f"np.{s.prim} with q that differs per example",
                          "use the same q for every example")
    text = args_text(s, [_with_batch(b, a), atom_text(q)],
                     {"axis": shifted(_static(b, s, "axis"), b.rank(a))})
    import numpy as np

    q_rank = b.rank(q) if isinstance(q, Var) else int(np.ndim(q.value))
    return f"np.moveaxis({text}, 0, 1)" if q_rank else text


defprim(
    "nanmedian", np.nanmedian, "(a, axis=None, keepdims=False)", family="reduction",
    batch="reducer",
    note="np.nanquantile at 0.5: the middle non-NaN element (the two middle ones share "
    "it); NaN gets no cotangent (an all-NaN slice: 0); ties ranked by position, as "
    "JAX; axis None or an int",
)


@defvjp("nanmedian")
def nanmedian_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
    else:
        moved = np.moveaxis(a, axis, -1)
    count = np.sum(np.logical_not(np.isnan(moved)), axis=-1, keepdims=True)
    rank = np.argsort(np.argsort(moved, axis=-1, kind="stable"), axis=-1)
    weights = (0.5 * (rank == (count - 1) // 2) + 0.5 * (rank == count // 2)) * (
        count > 0)  # (an all-NaN slice: 0, JAX's)
    g = np.reshape(g, np.shape(weights)[:-1])
    a_bar = np.expand_dims(g, -1) * weights
    if axis is None:
        return np.reshape(a_bar, np.shape(a))
    return np.moveaxis(a_bar, -1, axis)


@defjvp("nanmedian", "a")
def nanmedian_jvp(a_dot, ans, a, axis=None, keepdims=False):
    if axis is None:
        moved = np.ravel(a)
        moved_dot = np.ravel(a_dot)
    else:
        moved = np.moveaxis(a, axis, -1)
        moved_dot = np.moveaxis(a_dot, axis, -1)
    count = np.sum(np.logical_not(np.isnan(moved)), axis=-1, keepdims=True)
    rank = np.argsort(np.argsort(moved, axis=-1, kind="stable"), axis=-1)
    weights = (0.5 * (rank == (count - 1) // 2) + 0.5 * (rank == count // 2)) * (
        count > 0)  # (an all-NaN slice: 0, JAX's)
    kept_dot = np.where(np.isnan(moved), 0.0, moved_dot)
    return np.reshape(np.sum(weights * kept_dot, axis=-1), np.shape(ans))
