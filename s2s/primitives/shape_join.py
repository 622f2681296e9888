"""Joining and splitting: a sequence of arrays in (np.concatenate, np.stack, ...) or
several results out (np.split, ...); linear maps whose VJPs move ``g`` back (the
other shape functions are in :mod:`.shape`)."""


import numpy as np

from ..ir.nodes import Let
from ..ir.spelling import atom_text
from ..runtime import split_like
from .batching import (
    Batch,
    _flat_items,
    _joined,
    args_text,
    batch_rule,
    batched_items,
    only_first_batched,
    shifted,
    static,
)
from .registry import (
    call_spelling,
    defjvp,
    deflinear,
    defprim,
    defvjp,
)

# ---- joining and splitting: a sequence in, or several results out ---------------
# A rule's cotangent for a sequence argument is a sequence (one per element); a
# primitive with several results receives ``g`` as a tuple of their cotangents.

defprim("concatenate", np.concatenate, "(arrays, axis=0)", family="shape")


@defvjp("concatenate")
def concatenate_vjp(g, ans, arrays, axis=0):
    # one piece per array in one call (np.split by run-time ends has a count that code
    # transforming this gradient again cannot know)
    return split_like(g, arrays, axis)


deflinear("concatenate", "arrays", keywords=True)


defprim(
    "split", np.split, "(ary, indices_or_sections, axis=0)", diff=("ary",),
    family="shape", results=lambda args: args["indices_or_sections"]
    if isinstance(args.get("indices_or_sections"), int)
    else len(args["indices_or_sections"]) + 1,
)


@defvjp("split")
def split_vjp(g, ans, ary, indices_or_sections, axis=0):
    return np.concatenate(g, axis=axis)


deflinear("split", "ary", keywords=True)


defprim(
    "array_split", np.array_split, "(ary, indices_or_sections, axis=0)", diff=("ary",),
    family="shape", results=lambda args: args["indices_or_sections"]
    if isinstance(args.get("indices_or_sections"), int)
    else len(args["indices_or_sections"]) + 1,
)


@defvjp("array_split")
def array_split_vjp(g, ans, ary, indices_or_sections, axis=0):
    return np.concatenate(g, axis=axis)


deflinear("array_split", "ary", keywords=True)


@batch_rule("split", "array_split")
def split_rule(b: Batch, s: Let) -> str:
    """The same split of every example: the axis moves past the batch axis."""
    only_first_batched(b, s)
    axis = static(s, "axis", 0)
    return args_text(s, [atom_text(a) for a in s.args],
                     {"axis": shifted(axis, b.rank(s.args[0]))})


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


deflinear("hsplit", "ary")


@defvjp("vsplit")
def vsplit_vjp(g, ans, ary, indices_or_sections):
    return np.concatenate(g, axis=0)


deflinear("vsplit", "ary")


@defvjp("dsplit")
def dsplit_vjp(g, ans, ary, indices_or_sections):
    return np.concatenate(g, axis=2)


deflinear("dsplit", "ary")


@batch_rule("hsplit", "vsplit", "dsplit")
def named_split_rule(b: Batch, s: Let) -> str:
    """``hsplit`` splits axis 1 (axis 0 of a vector), ``vsplit`` axis 0, ``dsplit``
    axis 2: ``np.split`` along that axis plus one."""
    only_first_batched(b, s)
    ary, sections = s.args
    axis = {"hsplit": 1 if b.rank(ary) > 1 else 0, "vsplit": 0, "dsplit": 2}[s.prim]
    return f"np.split({atom_text(ary)}, {atom_text(sections)}, axis={axis + 1})"


defprim("stack", np.stack, "(arrays, axis=0)", family="shape")


@defvjp("stack")
def stack_vjp(g, ans, arrays, axis=0):
    return np.moveaxis(g, axis, 0)  # element i is the cotangent of arrays[i]


deflinear("stack", "arrays", keywords=True)


# hstack, vstack, dstack and column_stack give their arrays a common rank, then
# concatenate: split_like cuts g along the joined axis (hstack's 1 is 0 for vectors)
# and gives each piece its array's shape back.


defprim("hstack", np.hstack, "(tup)", family="shape")


@defvjp("hstack")
def hstack_vjp(g, ans, tup):
    return split_like(g, tup, 1)


deflinear("hstack", "tup")


defprim("vstack", np.vstack, "(tup)", family="shape")


@defvjp("vstack")
def vstack_vjp(g, ans, tup):
    return split_like(g, tup, 0)


deflinear("vstack", "tup")


defprim("dstack", np.dstack, "(tup)", family="shape")


@defvjp("dstack")
def dstack_vjp(g, ans, tup):
    return split_like(g, tup, 2)


deflinear("dstack", "tup")


@batch_rule("dstack")
def dstack_rule(b: Batch, s: Let) -> str:
    """Each piece made 3-D per example (``(N,)`` -> ``(1, N, 1)``, ``(M, N)`` ->
    ``(M, N, 1)``), then joined along axis 2, which is 3 with the batch axis."""
    def piece(text: str, rank: int) -> str:
        return text + {0: "[:, None, None, None]", 1: "[:, None, :, None]",
                       2: "[..., None]"}.get(rank, "")

    return _joined(b, s, piece, lambda text, rank: f"np.atleast_3d({text})", 3)


defprim("column_stack", np.column_stack, "(tup)", family="shape")


@defvjp("column_stack")
def column_stack_vjp(g, ans, tup):
    return split_like(g, tup, 1)


deflinear("column_stack", "tup")


@batch_rule("column_stack")
def column_stack_rule(b: Batch, s: Let) -> str:
    """Vectors become columns (``(N,)`` -> ``(N, 1)``), then joined along axis 1,
    which is 2 with the batch axis."""
    def piece(text: str, rank: int) -> str:
        return text + {0: "[:, None, None]", 1: "[:, :, None]"}.get(rank, "")

    def column(text: str, rank: int) -> str:
        return f"np.reshape({text}, (-1, 1))" if rank < 2 else text

    return _joined(b, s, piece, column, 2)


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


@batch_rule("numpy.append")
def append_rule(b: Batch, s: Let) -> str:
    """``np.append`` along an axis joins per example; without one, each example's
    two arrays are flattened and joined."""
    arr, values = s.args
    axis = static(s, "axis")
    if axis is None:
        return f"np.append({_flat_items(b, arr)}, {_flat_items(b, values)}, axis=1)"
    rank = b.rank(arr)
    x, v = batched_items(b, [arr, values], rank)
    return f"np.append({x}, {v}, axis={shifted(axis, rank)})"


