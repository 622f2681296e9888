"""Shape manipulation and subscripts: linear maps whose VJPs move ``g`` back."""

import builtins
import operator
from typing import Any

import numpy as np

from ..ir.nodes import KEYWORD_OPERANDS, Const, Index, Let, Slice, Var
from ..ir.spelling import atom_text
from ..runtime import pad_sources, unbroadcast
from .batching import (
    PER_EXAMPLE_COUNT,
    Batch,
    NoBatchRule,
    _batched_shape,
    _built_items,
    _is_mask,
    _per_axis_pairs,
    _per_example_index,
    _with_batch,
    align,
    along,
    args_text,
    axis_arg,
    batch_rule,
    const_dims,
    flat,
    getitem_rule,
    holds_tuple,
    only_first_batched,
    operand,
    refuse_batched,
    repeated,
    shifted,
    static,
)
from .registry import (
    attribute,
    defjvp,
    deflinear,
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


deflinear("identity", "x")


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


@batch_rule("getitem")
def getitem_batched_rule(b: Batch, s: Let) -> str:
    """``x[idx]`` with positions that differ per example: example ``i`` reads row
    ``i`` at its own positions, ``x[np.arange(n)[:, None], idx]``; an unbatched ``x``
    is read at the batch of positions, ``x[idx]``.  A tuple of index arrays is
    unpacked after the batch axis.  Everything else as ``getitem_rule``."""
    x = s.args[0]
    index: Index = s.params["index"]
    batched_index = [a for a in index.atoms() if isinstance(a, Var) and b.batched(a)]
    if not batched_index:
        if b.batched(x) and len(index.items) == 1 and holds_tuple(b, index.items[0]):
            return f"{atom_text(x)}[:, *{atom_text(index.items[0])}]"
        return getitem_rule(b, s)
    if any(_is_mask(b, a) for a in batched_index):
        raise NoBatchRule(f"a mask that differs per example: {PER_EXAMPLE_COUNT}",
                          "keep the shape instead: np.where(mask, x, 0)")
    if not b.batched(x) and any(isinstance(i, Slice) for i in index.items):
        # (`m[:, j]`, `m` the same for every example: read from its copy per example)
        return f"{repeated(b, atom_text(x))}[{_per_example_index(b, index, True)}]"
    return f"{atom_text(x)}[{_per_example_index(b, index, b.batched(x))}]"


defprim(
    "reshape", np.reshape, "(a, shape)", diff=("a",), family="shape",
    methods=("reshape",),
)


@defvjp("reshape")
def reshape_vjp(g, ans, a, shape):
    return np.reshape(g, np.shape(a))


deflinear("reshape", "a")


@batch_rule("reshape")
def reshape_rule(b: Batch, s: Let) -> str:
    only_first_batched(b, s)
    shape = operand(s, "shape")
    n = b.use_batch_size()
    if isinstance(shape, Const):
        dims = const_dims(shape.value)
        text = "(" + ", ".join([n] + [str(d) for d in dims]) + ")"
    elif isinstance(shape, tuple):
        text = "(" + ", ".join([n] + [atom_text(d) for d in shape]) + ")"
    else:
        text = f"({n}, *{atom_text(shape)})"
    return f"np.reshape({atom_text(s.args[0])}, {text})"


defprim(
    "transpose", np.transpose, "(a, axes=None)", family="shape",
    methods=("transpose",),
)


@defvjp("transpose")
def transpose_vjp(g, ans, a, axes=None):
    if axes is None:
        return np.transpose(g)
    return np.transpose(g, np.argsort(axes))


deflinear("transpose", "a")


defprim("T", None, "(a)", family="shape", spelling=attribute("T"), attributes=("T",))


@defvjp("T")
def T_vjp(g, ans, a):
    return np.transpose(g)


@defjvp("T", "a")
def T_jvp(a_dot, ans, a):
    return np.transpose(a_dot)


@batch_rule("transpose", "T")
def transpose_rule(b: Batch, s: Let) -> str:
    only_first_batched(b, s)
    r = b.rank(s.args[0])
    p = operand(s, "axes")
    if isinstance(p, Var):  # a permutation known when the code runs
        return f"np.transpose({atom_text(s.args[0])}, (0, *batch_axes({p.name}, {r})))"
    axes = static(s, "axes")
    if axes is None:
        perm = (0,) + tuple(range(r, 0, -1))
    else:
        perm = (0,) + tuple((a % r) + 1 for a in axes)
    return f"np.transpose({atom_text(s.args[0])}, {perm})"


defprim("ravel", np.ravel, "(a)", family="shape", methods=("ravel", "flatten"))


@defvjp("ravel")
def ravel_vjp(g, ans, a):
    return np.reshape(g, np.shape(a))


deflinear("ravel", "a")


@batch_rule("ravel")
def ravel_rule(b: Batch, s: Let) -> str:
    return f"np.reshape({atom_text(s.args[0])}, ({b.use_batch_size()}, -1))"


defprim("copy", np.copy, "(a)", family="shape", batch="trailing_axes", methods=("copy",))


@defvjp("copy")
def copy_vjp(g, ans, a):
    return g


deflinear("copy", "a")


# np.array / np.asarray of an array is a copy; of a list of computed values it stacks
# them, and reverse mode hands each element its slice of the cotangent (structural).
defprim("array", np.array, "(a)", family="shape")


@defvjp("array")
def array_vjp(g, ans, a):
    return g


deflinear("array", "a")


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


@batch_rule("float")
def float_rule(b: Batch, s: Let) -> str:
    return f"np.asarray({atom_text(s.args[0])}, dtype=float)"


defprim(
    "complex", builtins.complex, "(real, imag=0.0)", diff=("real", "imag"), family="shape",
    spelling=lambda args, params: f"complex({', '.join(args + list(params.values()))})",
    note="a Python complex of two real scalars: real + 1j * imag",
)


@defvjp("complex")
def complex_vjp(g, ans, real, imag=0.0):
    return unbroadcast(g, real), unbroadcast(1j * g, imag)


@defjvp("complex", "real")
def complex_real_jvp(real_dot, ans, real, imag=0.0):
    return real_dot * (1 + 0j)


@defjvp("complex", "imag")
def complex_imag_jvp(imag_dot, ans, real, imag=0.0):
    return imag_dot * 1j


@batch_rule("complex")
def complex_rule(b: Batch, s: Let) -> str:
    parts = [atom_text(a) for a in s.args] + [atom_text(a) for a in s.params.values()]
    return f"({parts[0]} + 0j)" if len(parts) == 1 else f"({parts[0]} + 1j * {parts[1]})"


# ---- facts about arrays, and constructors: no derivative flows ------------------

for _attr in ("shape", "ndim", "size"):
    defprim(
        _attr, getattr(np, _attr), "(a)", family="array facts", nondiff=True,
        attributes=(_attr,), note="a fact about the array, not a value of it",
    )


@batch_rule("shape")
def shape_rule(b: Batch, s: Let) -> str:
    items = _built_items(b, s.args[0])
    if items:  # np.shape([y, 2.0]): the array NumPy makes of the items, per example
        return f"({len(items)}, *np.shape({_with_batch(b, items[0])})[1:])"
    return f"np.shape({atom_text(s.args[0])})[1:]"


@batch_rule("ndim")
def ndim_rule(b: Batch, s: Let) -> str:
    return f"np.ndim({atom_text(s.args[0])}) - 1"


@batch_rule("size")
def size_rule(b: Batch, s: Let) -> str:
    items = _built_items(b, s.args[0])
    if items:  # np.size([y, 2.0]) per example
        n = b.use_batch_size()
        return f"{len(items)} * (np.size({_with_batch(b, items[0])}) // {n})"
    return f"np.size({atom_text(s.args[0])}) // {b.use_batch_size()}"


defprim(
    "dtype", None, "(a)", family="array facts", spelling=attribute("dtype"),
    nondiff=True, attributes=("dtype",),
)


@batch_rule("dtype")
def dtype_rule(b: Batch, s: Let) -> str:
    return f"{atom_text(s.args[0])}.dtype"


defprim(
    "len", builtins.len, "(obj)", family="array facts", nondiff=True,
    spelling=lambda args, params: f"len({args[0]})",
)


@batch_rule("len")
def len_rule(b: Batch, s: Let) -> str:
    return f"np.shape({atom_text(s.args[0])})[1]"


defprim(
    "int", builtins.int, "(x)", family="array facts", nondiff=True,
    spelling=lambda args, params: f"int({args[0]})",
)


@batch_rule("int")
def int_rule(b: Batch, s: Let) -> str:
    raise NoBatchRule("int() of a batched value: each example gives its own Python int",
                      "keep integers (loop bounds, indexes) out of the batched values")


for _name, _sig, _more in (
    ("zeros_like", "(a, dtype=None)", {"batch": "trailing_axes"}),
    ("ones_like", "(a, dtype=None)", {"batch": "trailing_axes"}),
    ("empty_like", "(prototype, dtype=None)", {"batch": "trailing_axes"}),
    ("zeros", "(shape, dtype=None)", {}),
    ("ones", "(shape, dtype=None)", {}),
    ("empty", "(shape, dtype=None)", {}),
    ("argmax", "(a, axis=None, keepdims=False)",
     {"methods": ("argmax",), "batch": "along_axis"}),
    ("argmin", "(a, axis=None, keepdims=False)",
     {"methods": ("argmin",), "batch": "along_axis"}),
    ("isnan", "(x)", {"batch": "trailing_axes"}),
    ("isfinite", "(x)", {"batch": "trailing_axes"}),
    ("arange", "(start, stop=None, step=None, dtype=None)", {}),
    # np.identity(n) is np.eye(n), and is spelled so in emitted code
    ("eye", "(N, M=None, k=0, dtype=None)", {"aliases": (np.identity,)}),
    ("tri", "(N, M=None, k=0, dtype=None)", {}),
    # window functions of a length (constants: signal processing's frames)
    ("hamming", "(M)", {}),
    ("hanning", "(M)", {}),
    ("blackman", "(M)", {}),
    ("bartlett", "(M)", {}),
    ("kaiser", "(M, beta)", {}),
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


@batch_rule("full")
def full_rule(b: Batch, s: Let) -> str:
    """A batch of arrays of the given shape, each filled with its example's value."""
    shape, fill = s.args
    if b.batched(shape):
        raise NoBatchRule("np.full with a shape that differs per example")
    return f"np.full({_batched_shape(b, shape)}, {align(b, fill, b.out_rank(s))})"


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
    # a real a's result is real: a complex fill_value's tangent gives its real part
    return unbroadcast(np.broadcast_to(fill_value_dot, np.shape(ans)), ans)


@batch_rule("full_like")
def full_like_rule(b: Batch, s: Let) -> str:
    """Shaped (and typed) like ``a``'s example, filled with its example's value."""
    a, fill = s.args
    return f"np.full_like({_with_batch(b, a)}, {align(b, fill, b.rank(a))})"


# ---- rearranging axes: the cotangent moves back --------------------------------

defprim("squeeze", np.squeeze, "(a, axis=None)", family="shape", methods=("squeeze",))


@defvjp("squeeze")
def squeeze_vjp(g, ans, a, axis=None):
    return np.reshape(g, np.shape(a))


deflinear("squeeze", "a", keywords=True)


@batch_rule("squeeze")
def squeeze_rule(b: Batch, s: Let) -> str:
    only_first_batched(b, s)
    axis = static(s, "axis")
    x = atom_text(s.args[0])
    if axis is None:  # every per-example axis of length 1, never the batch axis
        return (f"np.reshape({x}, ({b.use_batch_size()},) + tuple(n for n in "
                f"np.shape({x})[1:] if n != 1))")
    return f"np.squeeze({x}, axis={shifted(axis, b.rank(s.args[0]))})"


defprim("expand_dims", np.expand_dims, "(a, axis)", diff=("a",), family="shape")


@defvjp("expand_dims")
def expand_dims_vjp(g, ans, a, axis):
    return np.reshape(g, np.shape(a))


deflinear("expand_dims", "a")


@batch_rule("expand_dims")
def expand_dims_rule(b: Batch, s: Let) -> str:
    only_first_batched(b, s)
    axis = axis_arg(b, s, "axis", b.out_rank(s))
    return f"np.expand_dims({atom_text(s.args[0])}, {axis})"


for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):
    defprim(
        _name, getattr(np, _name), "(ary)", family="shape",
        note="one array argument (several would give several results)",
    )


@defvjp("atleast_1d")
def atleast_1d_vjp(g, ans, ary):
    return np.reshape(g, np.shape(ary))


deflinear("atleast_1d", "ary")


@defvjp("atleast_2d")
def atleast_2d_vjp(g, ans, ary):
    return np.reshape(g, np.shape(ary))


deflinear("atleast_2d", "ary")


@defvjp("atleast_3d")
def atleast_3d_vjp(g, ans, ary):
    return np.reshape(g, np.shape(ary))


deflinear("atleast_3d", "ary")


@batch_rule("atleast_1d", "atleast_2d", "atleast_3d")
def atleast_rule(b: Batch, s: Let) -> str:
    """The axes NumPy adds to one example, added after the batch axis."""
    x = atom_text(s.args[0])
    rank = b.rank(s.args[0])
    added = {
        "atleast_1d": {0: "[:, None]"},
        "atleast_2d": {0: "[:, None, None]", 1: "[:, None, :]"},
        "atleast_3d": {0: "[:, None, None, None]", 1: "[:, None, :, None]",
                       2: "[..., None]"},
    }[s.prim]
    return x + added.get(rank, "")


defprim(
    "swapaxes", np.swapaxes, "(a, axis1, axis2)", diff=("a",), family="shape",
    methods=("swapaxes",),
)


@defvjp("swapaxes")
def swapaxes_vjp(g, ans, a, axis1, axis2):
    return np.swapaxes(g, axis1, axis2)


deflinear("swapaxes", "a")


@batch_rule("swapaxes")
def swapaxes_rule(b: Batch, s: Let) -> str:
    only_first_batched(b, s)
    r = b.rank(s.args[0])
    a1, a2 = axis_arg(b, s, "axis1", r), axis_arg(b, s, "axis2", r)
    return f"np.swapaxes({atom_text(s.args[0])}, {a1}, {a2})"


defprim(
    "moveaxis", np.moveaxis, "(a, source, destination)", diff=("a",), family="shape",
)


@defvjp("moveaxis")
def moveaxis_vjp(g, ans, a, source, destination):
    return np.moveaxis(g, destination, source)


deflinear("moveaxis", "a")


@batch_rule("moveaxis")
def moveaxis_rule(b: Batch, s: Let) -> str:
    only_first_batched(b, s)
    r = b.rank(s.args[0])
    src, dst = axis_arg(b, s, "source", r), axis_arg(b, s, "destination", r)
    return f"np.moveaxis({atom_text(s.args[0])}, {src}, {dst})"


defprim("flip", np.flip, "(m, axis=None)", family="shape", batch="along_axis")


@defvjp("flip")
def flip_vjp(g, ans, m, axis=None):
    return np.flip(g, axis)


deflinear("flip", "m")


defprim("fliplr", np.fliplr, "(m)", family="shape")


@defvjp("fliplr")
def fliplr_vjp(g, ans, m):
    return np.fliplr(g)


deflinear("fliplr", "m")


defprim("flipud", np.flipud, "(m)", family="shape")


@defvjp("flipud")
def flipud_vjp(g, ans, m):
    return np.flipud(g)


deflinear("flipud", "m")


@batch_rule("fliplr", "flipud")
def flip_named_rule(b: Batch, s: Let) -> str:
    """``fliplr`` reverses axis 1, ``flipud`` axis 0: ``np.flip`` one axis further."""
    return f"np.flip({atom_text(s.args[0])}, axis={2 if s.prim == 'fliplr' else 1})"


defprim("rot90", np.rot90, "(m, k=1, axes=(0, 1))", family="shape")


@defvjp("rot90")
def rot90_vjp(g, ans, m, k=1, axes=(0, 1)):
    return np.rot90(g, -k, axes)


deflinear("rot90", "m")


@batch_rule("rot90")
def rot90_rule(b: Batch, s: Let) -> str:
    """Rotate each example in the plane of its ``axes``, moved past the batch axis."""
    only_first_batched(b, s)
    rank = b.rank(s.args[0])
    a0, a1 = static(s, "axes", (0, 1))
    return args_text(s, [atom_text(s.args[0])],
                     {"axes": str((a0 % rank + 1, a1 % rank + 1))})


defprim("roll", np.roll, "(a, shift, axis=None)", diff=("a",), family="shape")


@defvjp("roll")
def roll_vjp(g, ans, a, shift, axis=None):
    if is_integer_constant(shift):
        return np.roll(g, -shift, axis=axis)
    return np.roll(g, np.negative(shift), axis=axis)


deflinear("roll", "a", keywords=True)


@batch_rule("roll")
def roll_rule(b: Batch, s: Let) -> str:
    """Roll along the moved axes; without an axis, each example rolls flattened."""
    only_first_batched(b, s)
    a, shift = s.args
    x = atom_text(a)
    return along(b, s, None, b.rank(a),
                 lambda ax: f"np.roll({x}, {atom_text(shift)}, axis={ax})",
                 lambda: f"np.reshape(np.roll({flat(b, a)}, {atom_text(shift)}, "
                         f"axis=1), np.shape({x}))")


# ---- copies: tile, repeat, broadcast; each input's cotangent sums its copies ------

defprim(
    "broadcast_to", np.broadcast_to, "(array, shape)", diff=("array",), family="shape",
)


@defvjp("broadcast_to")
def broadcast_to_vjp(g, ans, array, shape):
    array_bar = unbroadcast(g, array)
    return array_bar


deflinear("broadcast_to", "array")


@batch_rule("broadcast_to")
def broadcast_to_rule(b: Batch, s: Let) -> str:
    only_first_batched(b, s)
    shape = operand(s, "shape")
    if isinstance(shape, Const):
        dims = const_dims(shape.value)
        target = "(" + ", ".join([b.use_batch_size()] + [str(d) for d in dims]) + ")"
        rank = len(dims)
    else:
        target = f"({b.use_batch_size()}, *{atom_text(shape)})"
        rank = b.out_rank(s)
    return f"np.broadcast_to({align(b, s.args[0], rank)}, {target})"


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


@batch_rule("broadcast_arrays")
def broadcast_arrays_rule(b: Batch, s: Let) -> str:
    """Batched operands lined up to the larger rank after the batch axis; NumPy then
    broadcasts the unbatched one over the batch."""
    rank = max(b.rank(a) for a in s.args)
    return f"np.broadcast_arrays({', '.join(align(b, a, rank) for a in s.args)})"


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


@batch_rule("meshgrid")
def meshgrid_rule(b: Batch, s: Let) -> str:
    """Each example's coordinate vectors (flattened) laid along the grid's axes, after
    the batch axis: ``x`` along the last axis and ``y`` along the first with
    ``indexing="xy"``, the other way round with ``"ij"``."""
    x, y = s.args
    indexing, sparse = static(s, "indexing", "xy"), static(s, "sparse", False)
    n = b.use_batch_size()
    x_shape, y_shape = ("1, -1", "-1, 1") if indexing == "xy" else ("-1, 1", "1, -1")

    def laid(atom: Any, shape: str) -> str:
        if b.batched(atom) or not sparse:
            prefix = f"{n}, " if b.batched(atom) else ""
            return f"np.reshape({atom_text(atom)}, ({prefix}{shape}))"
        return f"np.reshape({_with_batch(b, atom)}, ({n}, {shape}))"

    xs, ys = laid(x, x_shape), laid(y, y_shape)
    if sparse:
        return f"({xs}, {ys})"
    return f"np.broadcast_arrays({xs}, {ys})"


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


deflinear("tile", "A")


@batch_rule("tile")
def tile_rule(b: Batch, s: Let) -> str:
    """NumPy lines ``A`` and ``reps`` up from the right; the batch axis is then
    tiled once."""
    only_first_batched(b, s)
    a = s.args[0]
    reps = static(s, "reps")
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    rank = max(b.rank(a), len(reps))
    reps = (1,) * (rank - len(reps)) + reps
    return f"np.tile({align(b, a, rank)}, {(1,) + reps})"


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
    a_bar = np.zeros_like(np.moveaxis(a, axis, 0))  # (the axis first)
    np.add.at(a_bar, sources, np.moveaxis(g, axis, 0))
    return np.moveaxis(a_bar, 0, axis)


deflinear("repeat", "a", keywords=True)


@batch_rule("repeat")
def repeat_rule(b: Batch, s: Let) -> str:
    """Repeat along the moved axis; without one, each example's flattened elements."""
    a, counts = s.args
    if b.batched(counts):
        raise NoBatchRule("np.repeat with repeat counts that differ per example: each "
                          "example's result would have its own length",
                          "repeat by counts that are the same for every example")
    x, c = atom_text(a), atom_text(counts)
    return along(b, s, None, b.rank(a),
                 lambda ax: f"np.repeat({x}, {c}, axis={ax})",
                 lambda: f"np.repeat({flat(b, a)}, {c}, axis=1)")


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


@batch_rule("pad")
def pad_rule(b: Batch, s: Let) -> str:
    """Pad each example's axes; the batch axis gets no padding."""
    refuse_batched(b, s, ("pad_width", "constant_values"),
                   "np.pad with widths or values that differ per example",
                   "pad by widths and values that are the same for every example")
    rank = b.rank(s.args[0])
    params = {k: atom_text(v) for k, v in s.params.items()
              if k not in ("pad_width", KEYWORD_OPERANDS)}
    values = operand(s, "constant_values")
    scalar = isinstance(values, Const) and np.ndim(values.value) == 0
    if values is not None and not scalar:
        params["constant_values"] = _per_axis_pairs(values, rank)
    widths = _per_axis_pairs(operand(s, "pad_width"), rank)
    keywords = "".join(f", {k}={v}" for k, v in params.items())
    return f"np.pad({atom_text(s.args[0])}, {widths}{keywords})"


# ---- more rearranging and copying: rollaxis, diagflat, resize ----------------------

defprim("rollaxis", np.rollaxis, "(a, axis, start=0)", diff=("a",), family="shape",
        note="np.moveaxis(a, axis, d), d the destination NumPy computes from start")


@defvjp("rollaxis")
def rollaxis_vjp(g, ans, a, axis, start=0):
    # NumPy: a negative start counts from ndim; past the axis it lands one before
    n = np.ndim(a)
    start = start + n * (start < 0)
    return np.moveaxis(g, start - (axis % n < start), axis)


deflinear("rollaxis", "a")


@batch_rule("rollaxis")
def rollaxis_rule(b: Batch, s: Let) -> str:
    """``np.moveaxis`` to the destination NumPy computes, both moved past the batch
    axis."""
    only_first_batched(b, s)
    r = b.rank(s.args[0])
    axis, start = static(s, "axis"), static(s, "start", 0)
    start = start + r if start < 0 else start
    dest = start - 1 if axis % r < start else start
    return f"np.moveaxis({atom_text(s.args[0])}, {axis % r + 1}, {dest + 1})"


defprim("diagflat", np.diagflat, "(v, k=0)", diff=("v",), family="shape",
        note="linear: the cotangent is g's k-th diagonal, in v's shape")


@defvjp("diagflat")
def diagflat_vjp(g, ans, v, k=0):
    return np.reshape(np.diagonal(g, k), np.shape(v))


deflinear("diagflat", "v")


@batch_rule("diagflat")
def diagflat_rule(b: Batch, s: Let) -> str:
    """Each example's elements on the k-th diagonal: rows picked by one 0/1 matrix,
    columns by another, ``(P * v[:, None, :]) @ Q``."""
    only_first_batched(b, s)
    k = static(s, "k", 0)
    v = flat(b, s.args[0])
    size = f"np.shape({v})[1]"
    m = f"{size} + {abs(k)}"
    return (f"(np.eye({m}, {size}, {-max(-k, 0)}) * {v}[:, None, :]) @ "
            f"np.eye({size}, {m}, {max(k, 0)})")


defprim(
    "resize", np.resize, "(a, new_shape)", diff=("a",), family="shape",
    note="a's elements repeated cyclically: each input's cotangent sums its copies "
    "(a 0/1 matrix of which input each output element copies)",
)


@defvjp("resize")
def resize_vjp(g, ans, a, new_shape):
    copies = np.arange(np.size(ans))[:, None] % np.size(a) == np.arange(np.size(a))
    return np.reshape(np.ravel(g) @ copies, np.shape(a))


deflinear("resize", "a")


@batch_rule("resize")
def resize_rule(b: Batch, s: Let) -> str:
    """Each flattened example read cyclically: positions ``arange(N) % size``."""
    only_first_batched(b, s)
    shape = static(s, "new_shape")
    dims = (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
    v = flat(b, s.args[0])
    total = int(np.prod(dims))
    target = "(" + ", ".join([b.use_batch_size()] + [str(d) for d in dims]) + ")"
    return f"np.reshape({v}[:, np.arange({total}) % np.shape({v})[1]], {target})"


# ---- differences: linear maps, transposed through their matrix ---------------------
# np.diff along an axis of length m is a (m - n, m) matrix, np.diff(np.eye(m), n,
# axis=0); its transpose is applied to g along the same axis.

defprim("diff", np.diff, "(a, n=1, axis=-1)", diff=("a",), family="shape",
        batch="along_last_axis",
        note="linear: g times the difference matrix (prepend=/append=: forms_reduce)")


@defvjp("diff")
def diff_vjp(g, ans, a, n=1, axis=-1):
    d = np.diff(np.eye(np.shape(a)[axis]), n=n, axis=0)
    return np.moveaxis(np.moveaxis(g, axis, -1) @ d, -1, axis)


deflinear("diff", "a", keywords=True)


def _ediff1d_ends(args, kwargs):
    """A list written for ``to_begin``/``to_end`` spelled as an array (``jnp.ediff1d``
    refuses a list: the JAX backend runs the same text)."""
    def spelled(end):
        if isinstance(end, Const) and isinstance(end.value, (list, tuple)):
            return Const(np.asarray(end.value), f"np.array({end.text})")
        return end

    return [spelled(a) for a in args], {k: spelled(v) for k, v in kwargs.items()}


defprim(
    "ediff1d", np.ediff1d, "(ary, to_end=None, to_begin=None)", diff=("ary",),
    family="shape", canonical=_ediff1d_ends, note="differences of the flattened array; "
    "to_end and to_begin are constants (no derivative)",
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


@batch_rule("ediff1d")
def ediff1d_rule(b: Batch, s: Let) -> str:
    """Each example flattened and differenced along axis 1; ``to_begin``/``to_end``
    (the same for every example) joined before and after."""
    refuse_batched(b, s, ("to_begin", "to_end"),
                   "np.ediff1d with to_begin or to_end that differ per example",
                   "use the same to_begin and to_end for every example")
    n = b.use_batch_size()
    pieces = [f"np.diff({flat(b, s.args[0])}, axis=1)"]
    for name, front in (("to_begin", True), ("to_end", False)):
        extra = operand(s, name)
        if extra is None or (isinstance(extra, Const) and extra.value is None):
            continue
        t = atom_text(extra)
        piece = f"np.broadcast_to(np.ravel({t}), ({n}, np.size({t})))"
        pieces.insert(0, piece) if front else pieces.append(piece)
    if len(pieces) == 1:
        return pieces[0]
    return f"np.concatenate([{', '.join(pieces)}], axis=1)"


