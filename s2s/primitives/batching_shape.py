"""Batching rules for rearranging, copying, joining, splitting and selecting.

The batch axis is one more axis in front, so most of these functions only need their
axis arguments moved past it (``np.split(x, 3, axis=0)`` becomes ``axis=1``); where a
function reads its array flattened (``axis=None``), each example is flattened on its
own (``np.reshape(x, (n, -1))``) and the function works along axis 1.  Functions that
name their axis (``fliplr``, ``vsplit``, ``dstack``) are spelled with the general
function and the axis moved.

Selecting with per-example positions (a batched index) picks, for example ``i``, from
row ``i``: ``x[np.arange(n)[:, None], idx]``.  Where each example would keep a
different number of elements (``np.extract`` with a batched condition, ``np.nonzero``)
no batched array can hold the result: those rules refuse with :class:`NoBatchRule`.

An axis given by a name (``np.sort(x, axis=axis)``) is moved when the code runs:
``axis % rank + 1``, and ``axis=None`` flattens, decided by a conditional expression.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ir.kinds import LEAF, Seq
from ..ir.nodes import KEYWORD_OPERANDS, Const, Index, Let, Slice, Var
from ..ir.spelling import atom_text, index_text
from .batching import (
    Batch,
    NoBatchRule,
    _with_batch,
    align,
    args_text,
    batch_default,
    batch_rule,
    batched_items,
    const_dims,
    getitem_rule,
    only_first_batched,
    operand,
    shifted,
    static,
)
from .registry import PRIMITIVES

# ---- helpers ------------------------------------------------------------------------


def flat(b: Batch, atom: Any) -> str:
    """Each example flattened: ``(n, size)``; an unbatched operand repeated."""
    if b.batched(atom):
        return f"np.reshape({atom_text(atom)}, ({b.use_batch_size()}, -1))"
    return f"np.reshape({_with_batch(b, atom)}, ({b.use_batch_size()}, -1))"


def along(b: Batch, s: Let, default: Any, rank: int, per_axis: Callable[[str], str],
          flattened: Callable[[], str]) -> str:
    """The batched call for an ``axis`` known now, or known only when the code runs
    (then ``axis % rank + 1``, and ``None`` selects the flattened spelling)."""
    axis = operand(s, "axis")
    if not isinstance(axis, Var):
        value = default if axis is None else axis.value
        return flattened() if value is None else per_axis(shifted(value, rank))
    if b.batched(axis):
        raise NoBatchRule("an axis that differs per example")
    t = atom_text(axis)
    return f"{per_axis(f'{t} % {rank} + 1')} if {t} is not None else {flattened()}"


def holds_tuple(b: Batch, atom: Any) -> bool:
    """Is ``atom`` a tuple of index arrays (``np.ix_(...)``, ``np.nonzero(...)``)?  The
    probe records a tuple's ranks per element, never for the whole."""
    ranks = getattr(b, "ranks", {})
    return isinstance(atom, Var) and (atom.name, (0,)) in ranks and \
        (atom.name, ()) not in ranks


def items_of(b: Batch, seq: Any, what: str) -> list[Any]:
    """The atoms of a list or tuple the function built (``[x, y]``)."""
    items = getattr(b, "items", {}).get(getattr(seq, "name", None))
    if items is None:
        raise NoBatchRule(f"`{what}` of a list the function did not build",
                          f"build the list in the function: {what}([x, y])")
    return items


def repeated(b: Batch, text: str) -> str:
    """An unbatched per-example value, once per example."""
    return f"np.stack([{text}] * {b.use_batch_size()})"


def rows(b: Batch, rank: int) -> str:
    """``np.arange(n)`` shaped to broadcast against batched indexes of ``rank`` axes:
    it picks each example's own row."""
    n = b.use_batch_size()
    return f"np.arange({n})[:{', None' * rank}]" if rank else f"np.arange({n})"


def refuse_batched(b: Batch, s: Let, names: tuple[str, ...], what: str,
                   hint: str) -> None:
    if any(b.batched(operand(s, n)) for n in names):
        raise NoBatchRule(what, hint)


# ---- splitting: several results, each batched -------------------------------------


@batch_rule("split", "array_split")
def split_rule(b: Batch, s: Let) -> str:
    """The same split of every example: the axis moves past the batch axis."""
    only_first_batched(b, s)
    axis = static(s, "axis", 0)
    return args_text(s, [atom_text(a) for a in s.args],
                     {"axis": shifted(axis, b.rank(s.args[0]))})


@batch_rule("hsplit", "vsplit", "dsplit")
def named_split_rule(b: Batch, s: Let) -> str:
    """``hsplit`` splits axis 1 (axis 0 of a vector), ``vsplit`` axis 0, ``dsplit``
    axis 2: ``np.split`` along that axis plus one."""
    only_first_batched(b, s)
    ary, sections = s.args
    axis = {"hsplit": 1 if b.rank(ary) > 1 else 0, "vsplit": 0, "dsplit": 2}[s.prim]
    return f"np.split({atom_text(ary)}, {atom_text(sections)}, axis={axis + 1})"


# ---- joining: lists of pieces, each given its per-example rank first -------------


def joined_rows(b: Batch, s: Let, rank: int) -> str:
    """A join of the rows of one array (``np.vstack(x)``: NumPy iterates ``x``'s
    first axis), or of a list whose length is known only when the code runs
    (``list(x)``, a list grown in a loop); ``rank`` is a row's.  A batched array's
    rows run along its second axis; a batched list's items each carry the batch
    axis.  Rows of rank 0, 1 (and 2 for dstack) are the array itself, its axes
    moved; longer rows are concatenated."""
    seq = s.args[0]
    text = atom_text(seq)
    if b.kind(seq.name) == LEAF:
        rows, whole = f"list(np.moveaxis({text}, 1, 0))", text
    else:
        rows, whole = text, f"np.stack({text}, axis=1)"
    if s.prim in ("stack", "array", "asarray"):
        axis = shifted(static(s, "axis", 0), rank + 1)
        if b.kind(seq.name) == LEAF:
            return f"np.moveaxis({text}, 1, {axis})" if axis != "1" else f"np.array({text})"
        return f"np.stack({rows}, axis={axis})"
    if s.prim == "concatenate":
        axis = static(s, "axis", 0)
        if axis is None:  # every row flattened, in order: the example flattened
            return f"np.reshape({whole}, ({b.use_batch_size()}, -1))"
        return f"np.concatenate({rows}, axis={shifted(axis, rank)})"
    if s.prim == "vstack":  # rows of rank 0 and 1 become rows of a matrix
        if rank <= 1:
            return whole if rank == 1 else f"{whole}[:, :, None]"
        return f"np.concatenate({rows}, axis=1)"
    if s.prim == "hstack":  # scalars become a vector, vectors one long vector
        return whole if rank == 0 else \
            f"np.concatenate({rows}, axis={2 if rank >= 2 else 1})"
    if s.prim == "column_stack":  # scalars and vectors become columns
        if rank <= 1:
            return f"np.swapaxes({whole}, 1, 2)" if rank == 1 else f"{whole}[:, None, :]"
        return f"np.concatenate({rows}, axis=2)"
    if s.prim == "dstack":  # each row made 3-D: (1, 1, 1), (1, m, 1), (p, q, 1)
        if rank <= 2:
            return {0: f"{whole}[:, None, None, :]",
                    1: f"np.swapaxes({whole}, 1, 2)[:, None]",
                    2: f"np.moveaxis({whole}, 1, -1)"}[rank]
        return f"np.concatenate({rows}, axis=3)"
    raise NoBatchRule(f"`np.{s.prim}` of the rows of an array")


def _joined(b: Batch, s: Let, piece: Callable[[str, int], str],
            unbatched: Callable[[str, int], str], axis: int) -> str:
    """Concatenate a list's pieces after ``piece`` gave each batched one its joined
    rank; an unbatched piece is shaped by ``unbatched`` and repeated.  The rows of
    one array, or a list the code builds as it runs: ``joined_rows``."""
    seq = s.args[0]
    if isinstance(seq, Var) and seq.name not in getattr(b, "items", {}) and b.batched(seq):
        kind = b.kind(seq.name)
        if kind == LEAF:
            return joined_rows(b, s, b.rank(seq) - 1)
        if isinstance(kind, Seq):
            return joined_rows(b, s, b._seq_rank(seq.name))
    texts = []
    for item in items_of(b, s.args[0], f"np.{s.prim}"):
        if b.batched(item):
            texts.append(piece(atom_text(item), b.rank(item)))
        else:
            texts.append(repeated(b, unbatched(atom_text(item), b.rank(item))))
    return f"np.concatenate([{', '.join(texts)}], axis={axis})"


@batch_rule("dstack")
def dstack_rule(b: Batch, s: Let) -> str:
    """Each piece made 3-D per example (``(N,)`` -> ``(1, N, 1)``, ``(M, N)`` ->
    ``(M, N, 1)``), then joined along axis 2, which is 3 with the batch axis."""
    def piece(text: str, rank: int) -> str:
        return text + {0: "[:, None, None, None]", 1: "[:, None, :, None]",
                       2: "[..., None]"}.get(rank, "")

    return _joined(b, s, piece, lambda text, rank: f"np.atleast_3d({text})", 3)


@batch_rule("column_stack")
def column_stack_rule(b: Batch, s: Let) -> str:
    """Vectors become columns (``(N,)`` -> ``(N, 1)``), then joined along axis 1,
    which is 2 with the batch axis."""
    def piece(text: str, rank: int) -> str:
        return text + {0: "[:, None, None]", 1: "[:, :, None]"}.get(rank, "")

    def column(text: str, rank: int) -> str:
        return f"np.reshape({text}, (-1, 1))" if rank < 2 else text

    return _joined(b, s, piece, column, 2)


def _flat_items(b: Batch, atom: Any) -> str:
    """Each example flattened (``flat``); a list the function built (np.append(x,
    [y, 2.0])) as the array NumPy makes of it, each item given the batch axis."""
    items = getattr(b, "items", {}).get(getattr(atom, "name", None))
    if items is None:
        return flat(b, atom)
    stacked = f"np.stack([{', '.join(_with_batch(b, a) for a in items)}], axis=1)"
    return f"np.reshape({stacked}, ({b.use_batch_size()}, -1))"


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


# ---- rearranging ---------------------------------------------------------------------


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


@batch_rule("fliplr", "flipud")
def flip_named_rule(b: Batch, s: Let) -> str:
    """``fliplr`` reverses axis 1, ``flipud`` axis 0: ``np.flip`` one axis further."""
    return f"np.flip({atom_text(s.args[0])}, axis={2 if s.prim == 'fliplr' else 1})"


@batch_rule("rot90")
def rot90_rule(b: Batch, s: Let) -> str:
    """Rotate each example in the plane of its ``axes``, moved past the batch axis."""
    only_first_batched(b, s)
    rank = b.rank(s.args[0])
    a0, a1 = static(s, "axes", (0, 1))
    return args_text(s, [atom_text(s.args[0])],
                     {"axes": str((a0 % rank + 1, a1 % rank + 1))})


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


# ---- copies --------------------------------------------------------------------------


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


@batch_rule("broadcast_arrays")
def broadcast_arrays_rule(b: Batch, s: Let) -> str:
    """Batched operands lined up to the larger rank after the batch axis; NumPy then
    broadcasts the unbatched one over the batch."""
    rank = max(b.rank(a) for a in s.args)
    return f"np.broadcast_arrays({', '.join(align(b, a, rank) for a in s.args)})"


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


def _per_axis_pairs(atom: Any, rank: int) -> str:
    """An ``np.pad`` ``(before, after)`` argument spelled for every example axis, with
    ``(0, 0)`` in front for the batch axis."""
    if isinstance(atom, Const):
        pairs = np.broadcast_to(atom.value, (rank, 2)).tolist()
        return str(tuple([(0, 0)] + [tuple(p) for p in pairs]))
    return f"[(0, 0), *np.broadcast_to({atom_text(atom)}, ({rank}, 2)).tolist()]"


# ---- constructors of a computed value ------------------------------------------------


def _batched_shape(b: Batch, shape: Any) -> str:
    n = b.use_batch_size()
    if isinstance(shape, Const):
        dims = const_dims(shape.value)
        return "(" + ", ".join([n] + [str(d) for d in dims]) + ")"
    if isinstance(shape, tuple):
        return "(" + ", ".join([n] + [atom_text(d) for d in shape]) + ")"
    return f"({n}, *np.atleast_1d({atom_text(shape)}))"


@batch_rule("full")
def full_rule(b: Batch, s: Let) -> str:
    """A batch of arrays of the given shape, each filled with its example's value."""
    shape, fill = s.args
    if b.batched(shape):
        raise NoBatchRule("np.full with a shape that differs per example")
    return f"np.full({_batched_shape(b, shape)}, {align(b, fill, b.out_rank(s))})"


@batch_rule("full_like")
def full_like_rule(b: Batch, s: Let) -> str:
    """Shaped (and typed) like ``a``'s example, filled with its example's value."""
    a, fill = s.args
    return f"np.full_like({_with_batch(b, a)}, {align(b, fill, b.rank(a))})"


# ---- selecting -----------------------------------------------------------------------


PER_EXAMPLE_COUNT = "each example would keep its own number of elements"


# ---- indexing with positions that differ per example, and adding at positions -------


def _index_pieces(b: Batch, index: Index) -> str:
    """An index for the batched array with the batch axis kept in front (to be
    spelled inside a subscript)."""
    first = index.items[0] if index.items else None
    if isinstance(first, Const) and first.value is Ellipsis:
        return index_text(index)
    if len(index.items) == 1 and holds_tuple(b, first):  # a tuple of index arrays
        return f":, *{atom_text(first)}"
    advanced = [k for k, item in enumerate(index.items) if not (
        isinstance(item, Slice) or (isinstance(item, Const) and (
            item.value is None or isinstance(item.value, int))))]
    if advanced and advanced != list(range(advanced[0], advanced[-1] + 1)):
        raise NoBatchRule("array indexes separated by slices, on a batched array",
                          "index in two steps")
    inner = index_text(index).rstrip(",")
    return f":, {inner}" if inner else ":"


def _per_example_index(b: Batch, index: Index, base_batched: bool) -> str:
    """A batched index of integer arrays (and ints) only: each batched array lined up
    after the batch axis, and a batched base read at its own row."""
    items = list(index.items)
    if any(holds_tuple(b, i) for i in items):
        raise NoBatchRule("a tuple of index arrays that differ per example",
                          "index with the arrays themselves: x[i, j]")
    if any(isinstance(i, Slice) or (isinstance(i, Const) and (
            i.value is None or i.value is Ellipsis)) for i in items):
        raise NoBatchRule("a batched index mixed with slices, None or ...",
                          "index with the batched positions alone, then slice")
    rank = _broadcast_rank(b, items)
    texts = [align(b, i, rank) for i in items]
    if base_batched:
        texts = [rows(b, rank)] + texts
    return ", ".join(texts)


def _broadcast_rank(b: Batch, items: Any) -> int:
    """Per-example rank of index arrays broadcast together."""
    return max(b.rank(i) if isinstance(i, Var) else int(np.ndim(i.value))
               for i in items)


def _is_mask(b: Batch, atom: Any) -> bool:
    """Is ``atom`` a comparison's result (a mask, not positions)?"""
    producers = getattr(getattr(b, "a", None), "producer", {})
    producer = producers.get(getattr(atom, "name", ""))
    return producer is not None and producer.prim in PRIMITIVES and \
        PRIMITIVES[producer.prim].family == "comparison"


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
    return f"{atom_text(x)}[{_per_example_index(b, index, b.batched(x))}]"


def _selected_rank(b: Batch, base: Any, index: Index) -> int:
    """Per-example rank of ``y[index]``: ints remove an axis, ``None`` adds one, a
    tuple of index arrays or integer arrays replace the axes they index by theirs."""
    items = list(index.items)
    if len(items) == 1 and holds_tuple(b, items[0]):
        ranks = getattr(b, "ranks", {})
        name, k, found = items[0].name, 0, []
        while (name, (k,)) in ranks:
            found.append(ranks[(name, (k,))])
            k += 1
        return b.rank(base) - len(found) + max(found, default=0)
    consumed, added, arrays = 0, 0, []
    for item in items:
        if isinstance(item, Slice):
            consumed, added = consumed + 1, added + 1
        elif isinstance(item, Const) and item.value is None:
            added += 1
        elif isinstance(item, Const) and item.value is Ellipsis:
            continue
        elif isinstance(item, Const) and isinstance(item.value, (int, np.integer)):
            consumed += 1
        elif isinstance(item, Const) and np.asarray(item.value).dtype == bool:
            consumed += np.ndim(item.value)
            arrays.append(1)
        else:
            rank = b.rank(item) if isinstance(item, Var) else int(np.ndim(item.value))
            consumed, arrays = consumed + 1, arrays + [rank]
    return b.rank(base) - consumed + added + max(arrays, default=0)


# ---- the runtime helpers emitted derivatives call -----------------------------------


# ---- more functions along an axis (issue 3's additions) ------------------------------


@batch_default("along_last_axis")
def diff_rule(b: Batch, s: Let) -> str:
    """Along the moved axis (default -1, which the batch axis does not move)."""
    only_first_batched(b, s)
    a = s.args[0]
    return along(b, s, -1, b.rank(a),
                 lambda ax: args_text(s, [atom_text(a)], {"axis": ax}),
                 lambda: args_text(s, [atom_text(a)], {"axis": "-1"}))


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


