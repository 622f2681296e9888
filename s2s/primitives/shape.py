"""Shape manipulation and subscripts: linear maps whose VJPs move ``g`` back."""

import builtins
import operator

import numpy as np

from ..runtime import pad_sources, split_like, unbroadcast
from .registry import (
    attribute,
    call_spelling,
    defjvp,
    defprim,
    defvjp,
    is_basic_index,
    is_integer_constant,
)


def _subscript(args, params):
    return f"{args[0]}[{params['index']}]"


defprim(
    "identity", None, "(x)", family="shape",
    batch="trailing_axes", spelling=lambda args, params: args[0],
    note="a plain copy of a name: y = x",
)


@defvjp("identity")
def identity_vjp(g, ans, x):
    return g


@defjvp("identity", "x")
def identity_jvp(x_dot, ans, x):
    return x_dot


defprim(
    "getitem", operator.getitem, "(a, index)", diff=("a",), family="indexing",
    spelling=_subscript,
)


@defvjp("getitem")
def getitem_vjp(g, ans, a, index):
    a_bar = np.zeros_like(a)
    if is_basic_index(index):
        a_bar[index] += g
    else:
        np.add.at(a_bar, index, g)
    return a_bar


@defjvp("getitem", "a")
def getitem_jvp(a_dot, ans, a, index):
    return a_dot[index]


defprim(
    "reshape", np.reshape, "(a, shape)", diff=("a",), family="shape",
    methods=("reshape",),
)


@defvjp("reshape")
def reshape_vjp(g, ans, a, shape):
    return np.reshape(g, np.shape(a))


@defjvp("reshape", "a")
def reshape_jvp(a_dot, ans, a, shape):
    return np.reshape(a_dot, shape)


defprim(
    "transpose", np.transpose, "(a, axes=None)", family="shape",
    methods=("transpose",),
)


@defvjp("transpose")
def transpose_vjp(g, ans, a, axes=None):
    if axes is None:
        return np.transpose(g)
    return np.transpose(g, np.argsort(axes))


@defjvp("transpose", "a")
def transpose_jvp(a_dot, ans, a, axes=None):
    return np.transpose(a_dot, axes)


defprim("T", None, "(a)", family="shape", spelling=attribute("T"), attributes=("T",))


@defvjp("T")
def T_vjp(g, ans, a):
    return np.transpose(g)


@defjvp("T", "a")
def T_jvp(a_dot, ans, a):
    return np.transpose(a_dot)


defprim("ravel", np.ravel, "(a)", family="shape", methods=("ravel", "flatten"))


@defvjp("ravel")
def ravel_vjp(g, ans, a):
    return np.reshape(g, np.shape(a))


@defjvp("ravel", "a")
def ravel_jvp(a_dot, ans, a):
    return np.ravel(a_dot)


defprim("copy", np.copy, "(a)", family="shape", batch="trailing_axes", methods=("copy",))


@defvjp("copy")
def copy_vjp(g, ans, a):
    return g


@defjvp("copy", "a")
def copy_jvp(a_dot, ans, a):
    # a copy's tangent is a copy too: the primal copy is there because the array it
    # copies is written later, and so is that array's tangent
    return np.copy(a_dot)


# np.array / np.asarray of an array is a copy; of a list of computed values it stacks
# them, and reverse mode hands each element its slice of the cotangent (structural).
defprim("array", np.array, "(a)", family="shape")


@defvjp("array")
def array_vjp(g, ans, a):
    return g


@defjvp("array", "a")
def array_jvp(a_dot, ans, a):
    return np.array(a_dot)


# np.asarray(a, dtype=...) casts as np.astype does (see dtypes.py): a cast to an
# integer or bool dtype passes no derivative.  The cotangent keeps the output's dtype
# (a may be a list of values): the transform casts each input's cotangent at the end.
defprim("asarray", np.asarray, "(a, dtype=None)", diff=("a",), family="shape",
        batch="trailing_axes")


@defvjp("asarray")
def asarray_vjp(g, ans, a, dtype=None):
    if dtype is None:
        return g
    return g * np.isdtype(
        ans.dtype, ("real floating", "complex floating")
    )


@defjvp("asarray", "a")
def asarray_jvp(a_dot, ans, a, dtype=None):
    if dtype is None:
        return np.array(a_dot)
    return np.asarray(a_dot, dtype=ans.dtype) * np.isdtype(
        ans.dtype, ("real floating", "complex floating")
    )


defprim(
    "float", builtins.float, "(x)", family="shape",
    spelling=lambda args, params: f"float({args[0]})",
    note="a Python float of a scalar: the identity for derivatives",
)


@defvjp("float")
def float_vjp(g, ans, x):
    return g


@defjvp("float", "x")
def float_jvp(x_dot, ans, x):
    return x_dot


# ---- facts about arrays, and constructors: no derivative flows ------------------

for _attr in ("shape", "ndim", "size"):
    defprim(
        _attr, getattr(np, _attr), "(a)", family="array facts", nondiff=True,
        attributes=(_attr,), note="a fact about the array, not a value of it",
    )
defprim(
    "dtype", None, "(a)", family="array facts", spelling=attribute("dtype"),
    nondiff=True, attributes=("dtype",),
)

defprim(
    "len", builtins.len, "(obj)", family="array facts", nondiff=True,
    spelling=lambda args, params: f"len({args[0]})",
)
defprim(
    "int", builtins.int, "(x)", family="array facts", nondiff=True,
    spelling=lambda args, params: f"int({args[0]})",
)

for _name, _sig, _more in (
    ("zeros_like", "(a, dtype=None)", {"batch": "trailing_axes"}),
    ("ones_like", "(a, dtype=None)", {"batch": "trailing_axes"}),
    ("empty_like", "(prototype, dtype=None)", {"batch": "trailing_axes"}),
    ("zeros", "(shape, dtype=None)", {}),
    ("ones", "(shape, dtype=None)", {}),
    ("empty", "(shape, dtype=None)", {}),
    ("argmax", "(a, axis=None, keepdims=False)", {"methods": ("argmax",)}),
    ("argmin", "(a, axis=None, keepdims=False)", {"methods": ("argmin",)}),
    ("isnan", "(x)", {"batch": "trailing_axes"}),
    ("isfinite", "(x)", {"batch": "trailing_axes"}),
    ("arange", "(start, stop=None, step=None)", {}),
    # np.identity(n) is np.eye(n), and is spelled so in emitted code
    ("eye", "(N, M=None, k=0)", {"aliases": (np.identity,)}),
    ("tri", "(N, M=None, k=0)", {}),
    ("indices", "(dimensions, sparse=False)", {}),
):
    defprim(
        _name, getattr(np, _name), _sig, family="constructor / integer-valued",
        nondiff=True, note="integer, boolean or constant output: no derivative flows",
        **_more,
    )


# A constant array of a computed value: the value's cotangent sums the output's.
defprim(
    "full", np.full, "(shape, fill_value)", diff=("fill_value",),
    family="constructor", note="differentiable in fill_value (broadcast to shape)",
)


# (Reverse mode drops an ``unbroadcast`` returned directly by a rule with one
# differentiable operand, as it does for a binary operator's scalar partner: the
# rules below that undo broadcasting name their result first.)


@defvjp("full")
def full_vjp(g, ans, shape, fill_value):
    fill_value_bar = unbroadcast(g, fill_value)
    return fill_value_bar


@defjvp("full", "fill_value")
def full_jvp(fill_value_dot, ans, shape, fill_value):
    return np.broadcast_to(fill_value_dot, np.shape(ans))


defprim(
    "full_like", np.full_like, "(a, fill_value)", diff=("fill_value",),
    family="constructor", note="differentiable in fill_value; a gives only a shape",
)


@defvjp("full_like")
def full_like_vjp(g, ans, a, fill_value):
    fill_value_bar = unbroadcast(g, fill_value)
    return fill_value_bar


@defjvp("full_like", "fill_value")
def full_like_jvp(fill_value_dot, ans, a, fill_value):
    return np.broadcast_to(fill_value_dot, np.shape(ans))


# ---- joining and splitting: a sequence in, or several results out ---------------
# A rule's cotangent for a sequence argument is a sequence (one per element); a
# primitive with several results receives ``g`` as a tuple of their cotangents.

defprim("concatenate", np.concatenate, "(arrays, axis=0)", family="shape")


@defvjp("concatenate")
def concatenate_vjp(g, ans, arrays, axis=0):
    # one piece per array in one call (np.split by run-time ends has a count that code
    # transforming this gradient again cannot know)
    return split_like(g, arrays, axis)


@defjvp("concatenate", "arrays")
def concatenate_jvp(arrays_dot, ans, arrays, axis=0):
    return np.concatenate(arrays_dot, axis=axis)


defprim(
    "split", np.split, "(ary, indices_or_sections, axis=0)", diff=("ary",),
    family="shape", results=lambda args: args["indices_or_sections"]
    if isinstance(args.get("indices_or_sections"), int)
    else len(args["indices_or_sections"]) + 1,
)


@defvjp("split")
def split_vjp(g, ans, ary, indices_or_sections, axis=0):
    return np.concatenate(g, axis=axis)


@defjvp("split", "ary")
def split_jvp(ary_dot, ans, ary, indices_or_sections, axis=0):
    return np.split(ary_dot, indices_or_sections, axis=axis)


defprim(
    "array_split", np.array_split, "(ary, indices_or_sections, axis=0)", diff=("ary",),
    family="shape", results=lambda args: args["indices_or_sections"]
    if isinstance(args.get("indices_or_sections"), int)
    else len(args["indices_or_sections"]) + 1,
)


@defvjp("array_split")
def array_split_vjp(g, ans, ary, indices_or_sections, axis=0):
    return np.concatenate(g, axis=axis)


@defjvp("array_split", "ary")
def array_split_jvp(ary_dot, ans, ary, indices_or_sections, axis=0):
    return np.array_split(ary_dot, indices_or_sections, axis=axis)


# hsplit splits along axis 1 (axis 0 of a 1-D array), vsplit along 0, dsplit along 2
for _name in ("hsplit", "vsplit", "dsplit"):
    defprim(
        _name, getattr(np, _name), "(ary, indices_or_sections)", diff=("ary",),
        family="shape", results=lambda args: args["indices_or_sections"]
        if isinstance(args.get("indices_or_sections"), int)
        else len(args["indices_or_sections"]) + 1,
    )


@defvjp("hsplit")
def hsplit_vjp(g, ans, ary, indices_or_sections):
    return np.hstack(g)  # axis 1, or 0 for 1-D: a constant axis for what reads it next


@defjvp("hsplit", "ary")
def hsplit_jvp(ary_dot, ans, ary, indices_or_sections):
    return np.hsplit(ary_dot, indices_or_sections)


@defvjp("vsplit")
def vsplit_vjp(g, ans, ary, indices_or_sections):
    return np.concatenate(g, axis=0)


@defjvp("vsplit", "ary")
def vsplit_jvp(ary_dot, ans, ary, indices_or_sections):
    return np.vsplit(ary_dot, indices_or_sections)


@defvjp("dsplit")
def dsplit_vjp(g, ans, ary, indices_or_sections):
    return np.concatenate(g, axis=2)


@defjvp("dsplit", "ary")
def dsplit_jvp(ary_dot, ans, ary, indices_or_sections):
    return np.dsplit(ary_dot, indices_or_sections)


defprim("stack", np.stack, "(arrays, axis=0)", family="shape")


@defvjp("stack")
def stack_vjp(g, ans, arrays, axis=0):
    return np.moveaxis(g, axis, 0)  # element i is the cotangent of arrays[i]


@defjvp("stack", "arrays")
def stack_jvp(arrays_dot, ans, arrays, axis=0):
    return np.stack(arrays_dot, axis=axis)


# hstack, vstack, dstack and column_stack give their arrays a common rank, then
# concatenate: split_like cuts g along the joined axis (hstack's 1 is 0 for vectors)
# and gives each piece its array's shape back.


defprim("hstack", np.hstack, "(tup)", family="shape")


@defvjp("hstack")
def hstack_vjp(g, ans, tup):
    return split_like(g, tup, 1)


@defjvp("hstack", "tup")
def hstack_jvp(tup_dot, ans, tup):
    return np.hstack(tup_dot)


defprim("vstack", np.vstack, "(tup)", family="shape")


@defvjp("vstack")
def vstack_vjp(g, ans, tup):
    return split_like(g, tup, 0)


@defjvp("vstack", "tup")
def vstack_jvp(tup_dot, ans, tup):
    return np.vstack(tup_dot)


defprim("dstack", np.dstack, "(tup)", family="shape")


@defvjp("dstack")
def dstack_vjp(g, ans, tup):
    return split_like(g, tup, 2)


@defjvp("dstack", "tup")
def dstack_jvp(tup_dot, ans, tup):
    return np.dstack(tup_dot)


defprim("column_stack", np.column_stack, "(tup)", family="shape")


@defvjp("column_stack")
def column_stack_vjp(g, ans, tup):
    return split_like(g, tup, 1)


@defjvp("column_stack", "tup")
def column_stack_jvp(tup_dot, ans, tup):
    return np.column_stack(tup_dot)


# "append" names the structural list.append of loops; np.append is "numpy.append"
defprim(
    "numpy.append", np.append, "(arr, values, axis=None)", family="shape",
    spelling=call_spelling("np.append"),
)


@defvjp("numpy.append")
def append_vjp(g, ans, arr, values, axis=None):
    if axis is None:  # both flattened
        arr_bar = np.reshape(g[: np.size(arr)], np.shape(arr))
        return arr_bar, np.reshape(g[np.size(arr) :], np.shape(values))
    # two slices, not np.split(g, [n]): its indices are computed when the code runs, so
    # code that transforms this gradient again could not count np.split's results
    n = np.shape(arr)[axis]
    if axis == 0:
        return g[:n], g[n:]
    g_front = np.moveaxis(g, axis, 0)
    return np.moveaxis(g_front[:n], 0, axis), np.moveaxis(g_front[n:], 0, axis)


@defjvp("numpy.append", "arr")
def append_jvp_arr(arr_dot, ans, arr, values, axis=None):
    return np.append(arr_dot, np.zeros_like(values), axis=axis)


@defjvp("numpy.append", "values")
def append_jvp_values(values_dot, ans, arr, values, axis=None):
    return np.append(np.zeros_like(arr), values_dot, axis=axis)


# ---- rearranging axes: the cotangent moves back --------------------------------

defprim("squeeze", np.squeeze, "(a, axis=None)", family="shape", methods=("squeeze",))


@defvjp("squeeze")
def squeeze_vjp(g, ans, a, axis=None):
    return np.reshape(g, np.shape(a))


@defjvp("squeeze", "a")
def squeeze_jvp(a_dot, ans, a, axis=None):
    return np.squeeze(a_dot, axis=axis)


defprim("expand_dims", np.expand_dims, "(a, axis)", diff=("a",), family="shape")


@defvjp("expand_dims")
def expand_dims_vjp(g, ans, a, axis):
    return np.reshape(g, np.shape(a))


@defjvp("expand_dims", "a")
def expand_dims_jvp(a_dot, ans, a, axis):
    return np.expand_dims(a_dot, axis)


for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):
    defprim(
        _name, getattr(np, _name), "(ary)", family="shape",
        note="one array argument (several would give several results)",
    )


@defvjp("atleast_1d")
def atleast_1d_vjp(g, ans, ary):
    return np.reshape(g, np.shape(ary))


@defjvp("atleast_1d", "ary")
def atleast_1d_jvp(ary_dot, ans, ary):
    return np.atleast_1d(ary_dot)


@defvjp("atleast_2d")
def atleast_2d_vjp(g, ans, ary):
    return np.reshape(g, np.shape(ary))


@defjvp("atleast_2d", "ary")
def atleast_2d_jvp(ary_dot, ans, ary):
    return np.atleast_2d(ary_dot)


@defvjp("atleast_3d")
def atleast_3d_vjp(g, ans, ary):
    return np.reshape(g, np.shape(ary))


@defjvp("atleast_3d", "ary")
def atleast_3d_jvp(ary_dot, ans, ary):
    return np.atleast_3d(ary_dot)


defprim(
    "swapaxes", np.swapaxes, "(a, axis1, axis2)", diff=("a",), family="shape",
    methods=("swapaxes",),
)


@defvjp("swapaxes")
def swapaxes_vjp(g, ans, a, axis1, axis2):
    return np.swapaxes(g, axis1, axis2)


@defjvp("swapaxes", "a")
def swapaxes_jvp(a_dot, ans, a, axis1, axis2):
    return np.swapaxes(a_dot, axis1, axis2)


defprim(
    "moveaxis", np.moveaxis, "(a, source, destination)", diff=("a",), family="shape",
)


@defvjp("moveaxis")
def moveaxis_vjp(g, ans, a, source, destination):
    return np.moveaxis(g, destination, source)


@defjvp("moveaxis", "a")
def moveaxis_jvp(a_dot, ans, a, source, destination):
    return np.moveaxis(a_dot, source, destination)


defprim("flip", np.flip, "(m, axis=None)", family="shape")


@defvjp("flip")
def flip_vjp(g, ans, m, axis=None):
    return np.flip(g, axis)


@defjvp("flip", "m")
def flip_jvp(m_dot, ans, m, axis=None):
    return np.flip(m_dot, axis)


defprim("fliplr", np.fliplr, "(m)", family="shape")


@defvjp("fliplr")
def fliplr_vjp(g, ans, m):
    return np.fliplr(g)


@defjvp("fliplr", "m")
def fliplr_jvp(m_dot, ans, m):
    return np.fliplr(m_dot)


defprim("flipud", np.flipud, "(m)", family="shape")


@defvjp("flipud")
def flipud_vjp(g, ans, m):
    return np.flipud(g)


@defjvp("flipud", "m")
def flipud_jvp(m_dot, ans, m):
    return np.flipud(m_dot)


defprim("rot90", np.rot90, "(m, k=1, axes=(0, 1))", family="shape")


@defvjp("rot90")
def rot90_vjp(g, ans, m, k=1, axes=(0, 1)):
    return np.rot90(g, -k, axes)


@defjvp("rot90", "m")
def rot90_jvp(m_dot, ans, m, k=1, axes=(0, 1)):
    return np.rot90(m_dot, k, axes)


defprim("roll", np.roll, "(a, shift, axis=None)", diff=("a",), family="shape")


@defvjp("roll")
def roll_vjp(g, ans, a, shift, axis=None):
    if is_integer_constant(shift):
        return np.roll(g, -shift, axis=axis)
    return np.roll(g, np.negative(shift), axis=axis)


@defjvp("roll", "a")
def roll_jvp(a_dot, ans, a, shift, axis=None):
    return np.roll(a_dot, shift, axis=axis)


# ---- copies: tile, repeat, broadcast; each input's cotangent sums its copies ------

defprim(
    "broadcast_to", np.broadcast_to, "(array, shape)", diff=("array",), family="shape",
)


@defvjp("broadcast_to")
def broadcast_to_vjp(g, ans, array, shape):
    array_bar = unbroadcast(g, array)
    return array_bar


@defjvp("broadcast_to", "array")
def broadcast_to_jvp(array_dot, ans, array, shape):
    return np.broadcast_to(array_dot, shape)


defprim(
    "broadcast_arrays", np.broadcast_arrays, "(x1, x2)", family="shape", results=2,
    note="two arrays (a fixed count of results)",
)


@defvjp("broadcast_arrays")
def broadcast_arrays_vjp(g, ans, x1, x2):
    return unbroadcast(g[0], x1), unbroadcast(g[1], x2)


@defjvp("broadcast_arrays", "x1")
def broadcast_arrays_jvp_x1(x1_dot, ans, x1, x2):
    return np.broadcast_arrays(x1_dot, np.zeros_like(x2))


@defjvp("broadcast_arrays", "x2")
def broadcast_arrays_jvp_x2(x2_dot, ans, x1, x2):
    return np.broadcast_arrays(np.zeros_like(x1), x2_dot)


defprim(
    "meshgrid", np.meshgrid, "(x, y, indexing='xy', sparse=False)", family="shape",
    results=2, note="two coordinate vectors (a fixed count of results)",
)


@defvjp("meshgrid")
def meshgrid_vjp(g, ans, x, y, indexing="xy", sparse=False):
    if indexing == "xy":  # x runs along axis 1, y along axis 0
        return (
            np.reshape(np.sum(g[0], axis=0), np.shape(x)),
            np.reshape(np.sum(g[1], axis=1), np.shape(y)),
        )
    return (
        np.reshape(np.sum(g[0], axis=1), np.shape(x)),
        np.reshape(np.sum(g[1], axis=0), np.shape(y)),
    )


@defjvp("meshgrid", "x")
def meshgrid_jvp_x(x_dot, ans, x, y, indexing="xy", sparse=False):
    return np.meshgrid(x_dot, np.zeros_like(y), indexing=indexing, sparse=sparse)


@defjvp("meshgrid", "y")
def meshgrid_jvp_y(y_dot, ans, x, y, indexing="xy", sparse=False):
    return np.meshgrid(np.zeros_like(x), y_dot, indexing=indexing, sparse=sparse)


defprim("tile", np.tile, "(A, reps)", diff=("A",), family="shape")


@defvjp("tile")
def tile_vjp(g, ans, A, reps):
    # view g as (copies, length) pairs per axis, A's shape padded to g's rank
    lengths = (1,) * (np.ndim(g) - np.ndim(A)) + np.shape(A)
    # (an axis of length 0: any count of copies, none of them holds an element)
    pairs = [(n // length if length else 1, length)
             for n, length in zip(np.shape(g), lengths)]
    copies = np.reshape(g, [d for pair in pairs for d in pair])
    sums = np.sum(copies, axis=tuple(range(0, 2 * len(pairs), 2)))
    return np.reshape(sums, np.shape(A))


@defjvp("tile", "A")
def tile_jvp(A_dot, ans, A, reps):
    return np.tile(A_dot, reps)


defprim(
    "repeat", np.repeat, "(a, repeats, axis=None)", diff=("a",), family="shape",
    methods=("repeat",),
)


@defvjp("repeat")
def repeat_vjp(g, ans, a, repeats, axis=None):
    if is_integer_constant(repeats):  # consecutive runs of equal length: sum each
        # (the runs counted from a, not -1: with repeats 0, g is empty)
        if axis is None:
            runs = np.reshape(g, (np.size(a), repeats))
            return np.reshape(np.sum(runs, axis=1), np.shape(a))
        moved = np.moveaxis(g, axis, -1)
        runs = np.reshape(moved, np.shape(moved)[:-1] + (np.shape(a)[axis], repeats))
        return np.moveaxis(np.sum(runs, axis=-1), -1, axis)
    if axis is None:
        flat_bar = np.zeros_like(np.ravel(a))
        np.add.at(flat_bar, np.repeat(np.arange(np.size(a)), repeats), g)
        return np.reshape(flat_bar, np.shape(a))
    sources = np.repeat(np.arange(np.shape(a)[axis]), repeats)
    a_bar = np.zeros_like(a)
    np.add.at(a_bar, (slice(None),) * (axis % np.ndim(a)) + (sources,), g)
    return a_bar


@defjvp("repeat", "a")
def repeat_jvp(a_dot, ans, a, repeats, axis=None):
    return np.repeat(a_dot, repeats, axis=axis)


# ---- padding ---------------------------------------------------------------------

defprim(
    "pad", np.pad, "(array, pad_width, mode='constant', constant_values=0)",
    diff=("array",), family="shape",
    note="modes constant (constant_values not differentiated), edge, reflect, "
    "symmetric and wrap; other modes raise NotImplementedError when differentiated",
)


@defvjp("pad")
def pad_vjp(g, ans, array, pad_width, mode="constant", constant_values=0):
    if mode == "constant":  # cut the padding off
        widths = np.broadcast_to(pad_width, (np.ndim(array), 2))  # (before, after)
        return g[tuple([slice(lo, n - hi) for (lo, hi), n in zip(widths, np.shape(g))])]
    # every padded element copies one element of array: add its cotangent there
    array_bar = np.zeros_like(array)
    np.add.at(array_bar, pad_sources(np.shape(array), pad_width, mode), g)
    return array_bar


@defjvp("pad", "array")
def pad_jvp(array_dot, ans, array, pad_width, mode="constant", constant_values=0):
    if mode == "constant":  # the padding is constant: its tangent is 0
        return np.pad(array_dot, pad_width)
    return array_dot[pad_sources(np.shape(array), pad_width, mode)]


# ---- more rearranging and copying: rollaxis, diagflat, resize ----------------------

defprim("rollaxis", np.rollaxis, "(a, axis, start=0)", diff=("a",), family="shape",
        note="np.moveaxis(a, axis, d), d the destination NumPy computes from start")


@defvjp("rollaxis")
def rollaxis_vjp(g, ans, a, axis, start=0):
    # NumPy: a negative start counts from ndim; past the axis it lands one before
    n = np.ndim(a)
    start = start + n * (start < 0)
    return np.moveaxis(g, start - (axis % n < start), axis)


@defjvp("rollaxis", "a")
def rollaxis_jvp(a_dot, ans, a, axis, start=0):
    return np.rollaxis(a_dot, axis, start)


defprim("diagflat", np.diagflat, "(v, k=0)", diff=("v",), family="shape",
        note="linear: the cotangent is g's k-th diagonal, in v's shape")


@defvjp("diagflat")
def diagflat_vjp(g, ans, v, k=0):
    return np.reshape(np.diagonal(g, k), np.shape(v))


@defjvp("diagflat", "v")
def diagflat_jvp(v_dot, ans, v, k=0):
    return np.diagflat(v_dot, k)


defprim(
    "resize", np.resize, "(a, new_shape)", diff=("a",), family="shape",
    note="a's elements repeated cyclically: each input's cotangent sums its copies "
    "(a 0/1 matrix of which input each output element copies)",
)


@defvjp("resize")
def resize_vjp(g, ans, a, new_shape):
    copies = np.arange(np.size(ans))[:, None] % np.size(a) == np.arange(np.size(a))
    return np.reshape(np.ravel(g) @ copies, np.shape(a))


@defjvp("resize", "a")
def resize_jvp(a_dot, ans, a, new_shape):
    return np.resize(a_dot, new_shape)


# ---- differences: linear maps, transposed through their matrix ---------------------
# np.diff along an axis of length m is a (m - n, m) matrix, np.diff(np.eye(m), n,
# axis=0); its transpose is applied to g along the same axis.

defprim("diff", np.diff, "(a, n=1, axis=-1)", diff=("a",), family="shape",
        batch="along_last_axis",
        note="prepend/append are not supported; linear: g times the difference matrix")


@defvjp("diff")
def diff_vjp(g, ans, a, n=1, axis=-1):
    d = np.diff(np.eye(np.shape(a)[axis]), n=n, axis=0)
    return np.moveaxis(np.moveaxis(g, axis, -1) @ d, -1, axis)


@defjvp("diff", "a")
def diff_jvp(a_dot, ans, a, n=1, axis=-1):
    return np.diff(a_dot, n=n, axis=axis)


defprim(
    "ediff1d", np.ediff1d, "(ary, to_end=None, to_begin=None)", diff=("ary",),
    family="shape", note="differences of the flattened array; to_end and to_begin "
    "are constants (no derivative)",
)


@defvjp("ediff1d")
def ediff1d_vjp(g, ans, ary, to_end=None, to_begin=None):
    if to_begin is not None:
        g = g[np.size(to_begin):]
    if to_end is not None:
        g = g[: np.size(ary) - 1]
    d = np.diff(np.eye(np.size(ary)), axis=0)
    return np.reshape(g @ d, np.shape(ary))


@defjvp("ediff1d", "ary")
def ediff1d_jvp(ary_dot, ans, ary, to_end=None, to_begin=None):
    if to_begin is not None:
        to_begin = np.zeros_like(to_begin)
    if to_end is not None:
        to_end = np.zeros_like(to_end)
    return np.ediff1d(ary_dot, to_end=to_end, to_begin=to_begin)
