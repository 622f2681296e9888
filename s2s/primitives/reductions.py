"""Reductions over axes: ``axis`` may be None, an int, a negative int or a tuple.

Each VJP first puts the reduced axes back into ``g`` (unless ``keepdims`` kept them),
then broadcasts to the input's shape.  ``np.expand_dims`` counts axes against the
input's rank, which is exactly what ``axis`` refers to.
"""

import numpy as np

from ..runtime import prod_of_others
from .registry import defjvp, defprim, defvjp

defprim(
    "sum", np.sum, "(a, axis=None, keepdims=False)", family="reduction",
    methods=("sum",),
)


@defvjp("sum")
def sum_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    return np.broadcast_to(g, np.shape(a))


@defjvp("sum", "a")
def sum_jvp(a_dot, ans, a, axis=None, keepdims=False):
    return np.sum(a_dot, axis=axis, keepdims=keepdims)


defprim(
    "mean", np.mean, "(a, axis=None, keepdims=False)", family="reduction",
    methods=("mean",),
)


@defvjp("mean")
def mean_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is None:
        return np.broadcast_to(g / np.size(a), np.shape(a))
    if not keepdims:
        g = np.expand_dims(g, axis)
    return np.broadcast_to(g / (np.size(a) / np.size(ans)), np.shape(a))


@defjvp("mean", "a")
def mean_jvp(a_dot, ans, a, axis=None, keepdims=False):
    return np.mean(a_dot, axis=axis, keepdims=keepdims)


defprim(
    "max", np.max, "(a, axis=None, keepdims=False)", family="reduction",
    aliases=(np.amax,), methods=("max",),
    note="ties share the cotangent evenly, as JAX",
)


@defvjp("max")
def max_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        ans = np.expand_dims(ans, axis)
    winners = a == ans
    return g * winners / np.sum(winners, axis=axis, keepdims=True)


@defjvp("max", "a")
def max_jvp(a_dot, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        ans = np.expand_dims(ans, axis)
    winners = a == ans
    return np.sum(a_dot * winners, axis=axis, keepdims=keepdims) / np.sum(
        winners, axis=axis, keepdims=keepdims
    )


defprim(
    "min", np.min, "(a, axis=None, keepdims=False)", family="reduction",
    aliases=(np.amin,), methods=("min",),
    note="ties share the cotangent evenly, as JAX",
)


@defvjp("min")
def min_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        ans = np.expand_dims(ans, axis)
    winners = a == ans
    return g * winners / np.sum(winners, axis=axis, keepdims=True)


@defjvp("min", "a")
def min_jvp(a_dot, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        ans = np.expand_dims(ans, axis)
    winners = a == ans
    return np.sum(a_dot * winners, axis=axis, keepdims=keepdims) / np.sum(
        winners, axis=axis, keepdims=keepdims
    )


defprim(
    "prod", np.prod, "(a, axis=None, keepdims=False)", family="reduction",
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
