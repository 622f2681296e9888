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
from ..ir.nodes import Const, Index, Let, Slice, Var
from ..ir.spelling import atom_text, index_text
from .batching import (
    Batch,
    NoBatchRule,
    _with_batch,
    align,
    args_text,
    batch_default,
    const_dims,
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


def _flat_items(b: Batch, atom: Any) -> str:
    """Each example flattened (``flat``); a list the function built (np.append(x,
    [y, 2.0])) as the array NumPy makes of it, each item given the batch axis."""
    items = getattr(b, "items", {}).get(getattr(atom, "name", None))
    if items is None:
        return flat(b, atom)
    stacked = f"np.stack([{', '.join(_with_batch(b, a) for a in items)}], axis=1)"
    return f"np.reshape({stacked}, ({b.use_batch_size()}, -1))"


# ---- rearranging ---------------------------------------------------------------------


# ---- copies --------------------------------------------------------------------------


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


