"""Selecting and ordering elements: take, sort and their relatives.

Each output element is a copy of one input element, so the cotangent of the input is
a zero array into which each output's cotangent is added at the place it came from
(``np.add.at``, which accumulates where an element was taken more than once).
Sorting takes the permutation of a stable sort, as JAX: among equal elements the
first gets the first place.  Integer-valued relatives (argsort, searchsorted,
nonzero) carry no derivative.
"""

import re

import numpy as np

from ..runtime import take_along_axis_bar, unbroadcast
from .registry import defjvp, defprim, defvjp

defprim(
    "sort", np.sort, "(a, axis=-1, kind=None, stable=None)", family="indexing",
    note="the cotangent follows a stable sort's permutation (ties: by position), "
    "as JAX",
)


@defvjp("sort")
def sort_vjp(g, ans, a, axis=-1, kind=None, stable=None):
    if axis is None:  # sorted flattened
        order = np.argsort(a, axis=None, kind="stable")
        return np.reshape(g[np.argsort(order)], np.shape(a))
    order = np.argsort(a, axis=axis, kind="stable")
    return np.take_along_axis(g, np.argsort(order, axis=axis), axis=axis)


@defjvp("sort", "a")
def sort_jvp(a_dot, ans, a, axis=-1, kind=None, stable=None):
    if axis is None:
        return np.ravel(a_dot)[np.argsort(a, axis=None, kind="stable")]
    order = np.argsort(a, axis=axis, kind="stable")
    return np.take_along_axis(a_dot, order, axis=axis)


defprim(
    "take", np.take, "(a, indices, axis=None)", diff=("a",), family="indexing",
    methods=("take",), note="indices may repeat (their cotangents add) or be negative",
)


@defvjp("take")
def take_vjp(g, ans, a, indices, axis=None):
    if axis is None:  # indices into the flattened array
        flat_bar = np.zeros_like(np.ravel(a))
        np.add.at(flat_bar, indices, g)
        return np.reshape(flat_bar, np.shape(a))
    a_bar = np.zeros_like(a)  # add g into a[:, ..., indices] (indices on axis)
    np.add.at(a_bar, (slice(None),) * (axis % np.ndim(a)) + (indices,), g)
    return a_bar


@defjvp("take", "a")
def take_jvp(a_dot, ans, a, indices, axis=None):
    return np.take(a_dot, indices, axis=axis)


defprim(
    "take_along_axis", np.take_along_axis, "(arr, indices, axis=-1)", diff=("arr",),
    family="indexing",
)


@defvjp("take_along_axis")
def take_along_axis_vjp(g, ans, arr, indices, axis=-1):
    # g added at the places indices took from (a runtime helper with its own rules:
    # the index tuple it builds has a length only arr's rank gives)
    return take_along_axis_bar(g, indices, arr, axis)


@defjvp("take_along_axis", "arr")
def take_along_axis_jvp(arr_dot, ans, arr, indices, axis=-1):
    return np.take_along_axis(arr_dot, indices, axis=axis)


defprim(
    "compress", np.compress, "(condition, a, axis=None)", diff=("a",),
    family="indexing",
)


@defvjp("compress")
def compress_vjp(g, ans, condition, a, axis=None):
    kept = np.flatnonzero(condition)
    if axis is None:  # selected from the flattened array
        flat_bar = np.zeros_like(np.ravel(a))
        np.add.at(flat_bar, kept, g)
        return np.reshape(flat_bar, np.shape(a))
    a_bar = np.zeros_like(a)
    np.add.at(a_bar, (slice(None),) * (axis % np.ndim(a)) + (kept,), g)
    return a_bar


@defjvp("compress", "a")
def compress_jvp(a_dot, ans, condition, a, axis=None):
    return np.compress(condition, a_dot, axis=axis)


defprim("extract", np.extract, "(condition, arr)", diff=("arr",), family="indexing")


@defvjp("extract")
def extract_vjp(g, ans, condition, arr):
    flat_bar = np.zeros_like(np.ravel(arr))
    np.add.at(flat_bar, np.flatnonzero(condition), g)
    return np.reshape(flat_bar, np.shape(arr))


@defjvp("extract", "arr")
def extract_jvp(arr_dot, ans, condition, arr):
    return np.extract(condition, arr_dot)


defprim(
    "delete", np.delete, "(arr, obj, axis=None)", diff=("arr",), family="indexing",
)


@defvjp("delete")
def delete_vjp(g, ans, arr, obj, axis=None):
    if axis is None:  # deleted from the flattened array
        kept = np.delete(np.arange(np.size(arr)), obj)
        flat_bar = np.zeros_like(np.ravel(arr))
        np.add.at(flat_bar, kept, g)
        return np.reshape(flat_bar, np.shape(arr))
    kept = np.delete(np.arange(np.shape(arr)[axis]), obj)
    arr_bar = np.zeros_like(arr)
    np.add.at(arr_bar, (slice(None),) * (axis % np.ndim(arr)) + (kept,), g)
    return arr_bar


@defjvp("delete", "arr")
def delete_jvp(arr_dot, ans, arr, obj, axis=None):
    return np.delete(arr_dot, obj, axis=axis)


# ---- positions and counts: integer outputs, no derivative flows -------------------

for _name, _sig, _more in (
    ("argsort", "(a, axis=-1, kind=None, stable=None)", {"methods": ("argsort",)}),
    ("searchsorted", "(a, v, side='left', sorter=None)", {}),
    ("nonzero", "(a)", {"methods": ("nonzero",)}),
    ("flatnonzero", "(a)", {}),
    ("argwhere", "(a)", {}),
    ("unravel_index", "(indices, shape)", {}),
    ("ravel_multi_index", "(multi_index, dims, mode='raise')", {}),
):
    defprim(
        _name, getattr(np, _name), _sig, family="indexing", nondiff=True,
        note="integer positions: no derivative flows", **_more,
    )


# ---- adding into an array in place: ``np.add.at(y, index, values)`` ---------------
# Like ``y[index] += values``, except that an element the index names several times
# gets every one of its values added.  In the IR it makes a new version of ``y``, as
# ``y[index] = v`` does (see ``setitem``); emitted code adds in place, into an array
# the function allocated, and reverse mode puts the elements back as they were.


def _add_at_spelling(args, params):
    index = params["index"]
    if re.search(r":|\.\.\.|\bNone\b", index):
        index = f"np.s_[{index}]"  # slices only spell inside a subscript
    elif "," in index:
        index = f"({index})"
    return f"np.add.at({args[0]}, {index}, {args[1]})"


defprim(
    "add_at", None, "(a, values, index)", diff=("a", "values"), family="indexing",
    spelling=_add_at_spelling,
    note="np.add.at(y, index, values) on an array the function allocated: repeated "
    "indexes accumulate; values gets the cotangent at each place it was added to",
)


@defvjp("add_at")
def add_at_vjp(g, ans, a, values, index):
    return g, unbroadcast(g[index], values)


@defjvp("add_at", "a")
def add_at_jvp_a(a_dot, ans, a, values, index):
    return a_dot


@defjvp("add_at", "values")
def add_at_jvp_values(values_dot, ans, a, values, index):
    out_dot = np.zeros_like(ans)
    np.add.at(out_dot, index, values_dot)
    return out_dot
