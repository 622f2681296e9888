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

from ..ir.nodes import Index, Let, Slice, Var
from ..ir.spelling import atom_text
from ..runtime import take_along_axis_bar, unbroadcast
from .batching import (
    PER_EXAMPLE_COUNT,
    Batch,
    NoBatchRule,
    _broadcast_rank,
    _index_pieces,
    _is_mask,
    _per_example_index,
    _selected_rank,
    align,
    along,
    along_axis,
    args_text,
    batch_rule,
    flat,
    holds_tuple,
    in_separated_order,
    only_first_batched,
    operand,
    refuse_batched,
    repeated,
    rows,
    separated_lead,
    static,
)
from .registry import defjvp, deflinear, defprim, defvjp

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
    # add g into a[:, ..., indices] (indices on axis): that axis moved first in the
    # cotangent, and g's axes from the indices (none for one position) moved first
    axis = axis % np.ndim(a)
    a_bar = np.zeros_like(np.moveaxis(a, axis, 0))
    index_axes = list(range(axis, axis + np.ndim(indices)))
    np.add.at(a_bar, indices, np.moveaxis(g, index_axes, list(range(len(index_axes)))))
    return np.moveaxis(a_bar, 0, axis)


deflinear("take", "a", keywords=True)


@batch_rule("take")
def take_rule(b: Batch, s: Let) -> str:
    """The same positions from every example along the moved axis (from the flattened
    example without one).  Positions that differ per example pick each example's own
    row: ``x[np.arange(n)[:, None], idx]``."""
    a, idx = s.args
    x, i = atom_text(a), atom_text(idx)
    if not b.batched(idx):
        return along(b, s, None, b.rank(a),
                     lambda ax: f"np.take({x}, {i}, axis={ax})",
                     lambda: f"np.take({flat(b, a)}, {i}, axis=1)")
    axis = static(s, "axis")
    if not b.batched(a):  # the batch of positions lands where the axis was
        if axis is None:
            return f"np.take({x}, {i})"
        k = axis % b.rank(a)
        return f"np.take({x}, {i}, axis={k})" if k == 0 else \
            f"np.moveaxis(np.take({x}, {i}, axis={k}), {k}, 0)"
    q = b.rank(idx)
    if axis is None:
        return f"{flat(b, a)}[{rows(b, q)}, {i}]"
    k = axis % b.rank(a)
    picked = f"{x}[{rows(b, q)}, {i}]" if k == 0 else \
        f"np.moveaxis({x}, {k + 1}, 1)[{rows(b, q)}, {i}]"
    if k == 0 or q == 0:
        return picked
    # the positions' axes come first: move them back to where the axis was
    return (f"np.moveaxis({picked}, {tuple(range(1, q + 1))}, "
            f"{tuple(range(k + 1, k + q + 1))})")


defprim(
    "take_along_axis", np.take_along_axis, "(arr, indices, axis=-1)", diff=("arr",),
    family="indexing",
)


@defvjp("take_along_axis")
def take_along_axis_vjp(g, ans, arr, indices, axis=-1):
    # g added at the places indices took from (a runtime helper with its own rules:
    # the index tuple it builds has a length only arr's rank gives)
    return take_along_axis_bar(g, indices, arr, axis)


deflinear("take_along_axis", "arr", keywords=True)


@batch_rule("take_along_axis")
def take_along_axis_rule(b: Batch, s: Let) -> str:
    """Array and positions have the same rank per example: the axis moves, and an
    unbatched one gets a batch axis of length 1 (NumPy broadcasts it)."""
    arr, idx = s.args
    i = atom_text(idx) if b.batched(idx) else f"{atom_text(idx)}[None]"
    x = atom_text(arr) if b.batched(arr) else f"{atom_text(arr)}[None]"
    # without an axis: positions into each flattened example
    x_flat = flat(b, arr) if b.batched(arr) else f"np.ravel({atom_text(arr)})[None]"
    return along(b, s, -1, b.rank(arr),
                 lambda ax: f"np.take_along_axis({x}, {i}, axis={ax})",
                 lambda: f"np.take_along_axis({x_flat}, {i}, axis=1)")


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
    a_bar = np.zeros_like(np.moveaxis(a, axis, 0))  # (the axis first)
    np.add.at(a_bar, kept, np.moveaxis(g, axis, 0))
    return np.moveaxis(a_bar, 0, axis)


deflinear("compress", "a", keywords=True)


@batch_rule("compress")
def compress_rule(b: Batch, s: Let) -> str:
    """The same kept positions for every example, along the moved axis."""
    condition, a = s.args
    if b.batched(condition):
        raise NoBatchRule("np.compress with a condition that differs per example: "
                          f"{PER_EXAMPLE_COUNT}",
                          "keep the shape instead: np.where(condition, x, 0)")
    c, x = atom_text(condition), atom_text(a)
    return along(b, s, None, b.rank(a),
                 lambda ax: f"np.compress({c}, {x}, axis={ax})",
                 lambda: f"np.compress({c}, {flat(b, a)}, axis=1)")


defprim("extract", np.extract, "(condition, arr)", diff=("arr",), family="indexing")


@defvjp("extract")
def extract_vjp(g, ans, condition, arr):
    flat_bar = np.zeros_like(np.ravel(arr))
    np.add.at(flat_bar, np.flatnonzero(condition), g)
    return np.reshape(flat_bar, np.shape(arr))


deflinear("extract", "arr")


@batch_rule("extract")
def extract_rule(b: Batch, s: Let) -> str:
    """The same positions of every flattened example: ``np.flatnonzero(condition)``."""
    condition, arr = s.args
    if b.batched(condition):
        raise NoBatchRule("np.extract with a condition that differs per example: "
                          f"{PER_EXAMPLE_COUNT}",
                          "keep the shape instead: np.where(condition, x, 0)")
    return f"{flat(b, arr)}[:, np.flatnonzero({atom_text(condition)})]"


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
    arr_bar = np.zeros_like(np.moveaxis(arr, axis, 0))  # (the axis first)
    np.add.at(arr_bar, kept, np.moveaxis(g, axis, 0))
    return np.moveaxis(arr_bar, 0, axis)


deflinear("delete", "arr", keywords=True)


@batch_rule("delete")
def delete_rule(b: Batch, s: Let) -> str:
    """The same positions deleted from every example, along the moved axis."""
    arr, obj = s.args
    if b.batched(obj):
        raise NoBatchRule("np.delete of positions that differ per example",
                          "delete the same positions from every example")
    x, o = atom_text(arr), atom_text(obj)
    return along(b, s, None, b.rank(arr),
                 lambda ax: f"np.delete({x}, {o}, axis={ax})",
                 lambda: f"np.delete({flat(b, arr)}, {o}, axis=1)")


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


@batch_rule("searchsorted")
def searchsorted_rule(b: Batch, s: Let) -> str:
    """Into a batch of sorted vectors, a position is a count: how many elements are
    below ``v`` (``side="left"``) or not above it (``"right"``); a sorter only orders
    the same elements."""
    a, v = s.args
    if not b.batched(a):
        return args_text(s, [atom_text(a), atom_text(v)])
    if b.batched(operand(s, "sorter")):
        raise NoBatchRule("np.searchsorted with a batched sorter and batched array")
    side = static(s, "side", "left")
    vr = b.rank(v)
    row = f"np.reshape({atom_text(a)}, ({b.use_batch_size()},{' 1,' * vr} -1))"
    op = "<" if side == "left" else "<="
    return f"np.sum({row} {op} np.expand_dims({atom_text(v)}, -1), axis=-1)"


@batch_rule("argwhere", "nonzero", "flatnonzero", "unique")
def positions_rule(b: Batch, s: Let) -> str:
    """Positions of nonzero elements (np.unique's distinct values): a different count
    for each example."""
    raise NoBatchRule(f"np.{s.prim} of a batched array: {PER_EXAMPLE_COUNT}",
                      "use a mask instead: np.where(x != 0, ...)")


@batch_rule("unravel_index")
def unravel_index_rule(b: Batch, s: Let) -> str:
    """Per example, one index array per axis of ``shape``; stacked after the batch
    axis, so ``[:, k]`` is each example's k-th."""
    refuse_batched(b, s, ("shape",), "np.unravel_index into a shape that differs per "
                   "example", "unravel into the same shape for every example")
    indices, shape = s.args
    unravelled = f"np.unravel_index({atom_text(indices)}, {atom_text(shape)})"
    return f"np.stack({unravelled}, axis=1)"


@batch_rule("ravel_multi_index")
def ravel_multi_index_rule(b: Batch, s: Let) -> str:
    """The index arrays of a batch lined up; an array of them, ``(n, k, ...)``, has
    its k index arrays moved to the front."""
    refuse_batched(b, s, ("dims",), "np.ravel_multi_index into dims that differ per "
                   "example", "use the same dims for every example")
    seq = s.args[0]
    items = getattr(b, "items", {}).get(getattr(seq, "name", None))
    if items is not None:
        rank = max(b.rank(a) for a in items)
        index = "(" + ", ".join(align(b, a, rank) for a in items) + ",)"
    elif holds_tuple(b, seq):
        index = atom_text(seq)
    else:
        index = f"np.moveaxis({atom_text(seq)}, 1, 0)"
    return args_text(s, [index] + [atom_text(a) for a in s.args[1:]])


@batch_rule("sort", "argsort")
def sort_rule(b: Batch, s: Let) -> str:
    """As ``along_axis``, and an axis given by a name moved when the code runs."""
    if not isinstance(operand(s, "axis"), Var):
        return along_axis(b, s)
    only_first_batched(b, s)
    a = s.args[0]
    return along(b, s, -1, b.rank(a),
                 lambda ax: args_text(s, [atom_text(a)], {"axis": ax}),
                 lambda: args_text(s, [flat(b, a)], {"axis": "1"}))


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


@batch_rule("add_at")
def add_at_rule(b: Batch, s: Let) -> str:
    """``np.add.at(y, index, v)`` adds into every example at once: the index gains a
    ``:`` for the batch axis (or per-example rows, for positions that differ per
    example), and ``v`` is lined up with the elements it adds to.  ``np.add.at``
    works in place and returns None, so the batched statement reads
    ``y = np.add.at(y, ...) or y``.  An unbatched ``y`` receiving batched values is
    first copied once per example."""
    base, values = s.args
    index: Index = s.params["index"]
    if any(isinstance(a, Var) and b.batched(a) for a in index.atoms()):
        if any(_is_mask(b, a) for a in index.atoms()):
            raise NoBatchRule("np.add.at at a mask that differs per example: "
                              f"{PER_EXAMPLE_COUNT}")
        sliced = sum(isinstance(i, Slice) for i in index.items)  # (then one int each)
        where = (f"np.s_[{_per_example_index(b, index, True)}]" if sliced else
                 f"({_per_example_index(b, index, True)})")
        selected = (sliced if sliced else _broadcast_rank(b, index.items)) + b.rank(
            base) - len(index.items)
        v = align(b, values, selected) if b.batched(values) else atom_text(values)
    else:
        where = f"np.s_[{_index_pieces(b, index)}]"
        selected = _selected_rank(b, base, index)
        lead = separated_lead(b, index)
        v = align(b, values, selected) if b.batched(values) else atom_text(values)
        if lead is not None and not holds_tuple(b, index.items[0]):
            v = in_separated_order(b, values, selected, lead)
    y = atom_text(base)
    if b.batched(base):
        return f"np.add.at({y}, {where}, {v}) or {y}"
    t = s.target  # spelled as the array's own name in emitted code
    return f"np.add.at({t} := {repeated(b, y)}, {where}, {v}) or {t}"




# ---- the distinct values of an array: a run-time length ----------------------------

defprim(
    "unique", np.unique, "(ar)", family="indexing", diff=(),
    underived={"ar": "the distinct values' derivative (the first occurrence's) has no "
               "rule in s2s"},
    note="the sorted distinct values, of an array not differentiated (`for c in "
    "np.unique(labels)`: a loop whose length is known when the code runs); no "
    "return_index=/return_counts= (a tuple)",
)


# ---- counts by label: a scatter-add of the weights ----------------------------------

defprim(
    "bincount", np.bincount, "(x, weights=None, minlength=0)", family="indexing",
    diff=("weights",),
    note="linear in weights (the sums of weights by label x): the cotangent of weights "
    "is g[x], cast to their dtype; x carries none; the length, max(minlength, "
    "x.max() + 1), is x's values' (the emitted code computes it when it runs)",
)


@defvjp("bincount")
def bincount_vjp(g, ans, x, weights=None, minlength=0):
    return np.astype(g[x], weights.dtype)


deflinear("bincount", "weights", keywords=True)


@batch_rule("bincount")
def bincount_rule(b: Batch, s: Let) -> str:
    """Weights batched, labels not: one bincount of the whole batch, each example's
    labels shifted past the others' bins (``x + L * k`` for example ``k``, ``L`` the
    common length the labels give), reshaped into rows; each bin sums its example's
    weights in the same order as alone.  Labels that differ per example give each
    example its own length: refused (JAX's vmap needs ``length=`` too)."""
    refuse_batched(b, s, ("x", "minlength"), "np.bincount of labels that differ per "
                   "example: each example's counts would have its own length (JAX's "
                   "jnp.bincount needs a fixed length= under vmap)",
                   "pass the labels unbatched (in_axes=None), or sum into n bins: "
                   "`np.sum(np.where(labels[:, None] == np.arange(n), w[:, None], 0.0), "
                   "axis=0)`")
    x = atom_text(operand(s, "x"))
    m = operand(s, "minlength")
    m = "0" if m is None else atom_text(m)
    n = b.use_batch_size()
    length = f"max({m}, np.max({x}, initial=-1) + 1)"
    return (f"np.reshape(np.bincount(np.ravel({x} + {length} * np.arange({n})[:, None]), "
            f"weights=np.ravel({atom_text(operand(s, 'weights'))}), minlength={n} * "
            f"{length}), ({n}, {length}))")
