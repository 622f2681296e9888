"""Batching rules: how a statement reads when its operands carry a batch axis in front.

``vmap`` knows, for every value, whether it is batched and its per-example rank (how
many axes one example has; the batched array has one more, in front).  A batching rule
turns one statement into its batched spelling from those facts.  Most of NumPy needs
little: an elementwise function maps over the batch axis as it is; broadcasting
operands only need their ranks lined up (a batched ``(3,)`` operand meeting an
unbatched ``(4, 1)`` one is written ``x[:, None]`` so that the batch axis stays in
front); an ``axis`` argument moves past the batch axis (``axis=0`` becomes ``axis=1``,
``axis=None`` names every per-example axis).  Functions that act on trailing axes and
broadcast over leading ones (``np.linalg.inv``, ``matrix_transpose``) need nothing.

A rule is ``rule(b: Batch, s: Let) -> str``, the batched right-hand side.  It raises
:class:`NoBatchRule` where the statement cannot be batched (yet); the transform turns
that into an error naming the line.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

import numpy as np

from ..ir.kinds import LEAF, Seq, Tree
from ..ir.nodes import KEYWORD_OPERANDS, Const, For, Index, Let, Slice, Var, walk
from ..ir.spelling import atom_text, index_text
from .registry import PRIMITIVES, arg_slots


class NoBatchRule(Exception):
    """A statement with batched operands that has no batched spelling."""

    def __init__(self, what: str, hint: str = "") -> None:
        super().__init__(what)
        self.what = what
        self.hint = hint


class Batch:
    """What a rule may ask about the statement it batches (implemented by vmap)."""

    batch_size: str  # the name holding the batch size, in emitted code

    def batched(self, atom: Any) -> bool:
        raise NotImplementedError

    def rank(self, atom: Any) -> int:
        raise NotImplementedError

    def out_rank(self, s: Let) -> int:
        raise NotImplementedError

    def use_batch_size(self) -> str:
        raise NotImplementedError


RULES: dict[str, Callable[[Batch, Let], str]] = {}


def batch_rule(*names: str, override: bool = False) -> Callable:
    """Register the decorated function as the batching rule of each primitive named.

    Once per name: a second rule for a name raises, unless it says ``override=True``
    (a user replacing a built-in rule), so import order never picks a winner."""

    def register(rule: Callable) -> Callable:
        for n in names:
            if n in RULES and not override:
                raise ValueError(
                    f"primitive {n!r} already has the batching rule "
                    f"{RULES[n].__module__}.{RULES[n].__qualname__}; pass override=True "
                    "to replace it")
        for n in names:
            RULES[n] = rule
        return rule

    return register


# Batching defaults, by the name a primitive's ``defprim(batch=...)`` declares (its
# family's by default, registry.FAMILY_BATCH): the rule of every primitive that has no
# rule registered under its own name.  ``registry.REFUSED`` is none: those families make
# arrays from shapes and constants (np.zeros(n), np.eye(n)) or read facts of dtypes, so
# vmap copies their statements unbatched and refuses a batched operand (NoBatchRule).
DEFAULTS: dict[str, Callable[[Batch, Let], str]] = {}


def batch_default(name: str) -> Callable:
    """Register the decorated function as the batching default called ``name``."""

    def register(rule: Callable) -> Callable:
        if name in DEFAULTS:
            raise ValueError(f"the batching default {name!r} is already registered")
        DEFAULTS[name] = rule
        return rule

    return register


def rule_for(prim: str) -> Callable[[Batch, Let], str] | None:
    """The primitive's own rule, else its declared default (None: it has neither)."""
    if prim in RULES:
        return RULES[prim]
    return DEFAULTS.get(PRIMITIVES[prim].batch)


# ---- spelling helpers ------------------------------------------------------------------


def args_text(s: Let, texts: list[str], params: dict[str, str] | None = None) -> str:
    """The statement's forward spelling with replaced operand texts and parameters."""
    prim = PRIMITIVES[s.prim]
    ps = {k: atom_text(v) for k, v in s.params.items() if k != KEYWORD_OPERANDS}
    ps.update(params or {})
    keywords = s.params.get(KEYWORD_OPERANDS, ())
    if keywords:
        texts, tail = texts[: len(texts) - len(keywords)], texts[len(texts) - len(keywords):]
        ps.update(zip(keywords, tail))
    return prim.spelling(list(texts), ps)


def align(b: Batch, atom: Any, rank: int) -> str:
    """A batched operand with per-example axes added in front of its own, up to
    ``rank``, so that it broadcasts per example and keeps the batch axis first."""
    text = atom_text(atom)
    missing = rank - b.rank(atom)
    if not b.batched(atom) or missing <= 0:
        return text
    if not text.isidentifier():
        text = f"({text})"
    return f"{text}[:{', None' * missing}]"


def shifted(axis: Any, rank: int) -> str:
    """An ``axis`` argument for the batched array: past the batch axis.  ``None``
    (every axis) names the per-example axes."""
    if axis is None:
        axes = tuple(range(1, rank + 1))
        return str(axes[0]) if len(axes) == 1 else str(axes)
    if isinstance(axis, bool):
        raise NoBatchRule("a boolean axis argument")
    if isinstance(axis, (int, np.integer)):
        return str(int(axis) + 1 if axis >= 0 else int(axis))
    if isinstance(axis, (tuple, list, np.ndarray)) and all(
            isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axis):
        # (a list or an array of axes, as NumPy takes them, spelled as a tuple)
        return str(tuple(int(a) + 1 if a >= 0 else int(a) for a in axis))
    raise NoBatchRule("an axis argument computed when the code runs",
                      "write the axis as a constant")


def const_dims(value: Any) -> tuple:
    """A shape known now as a tuple of ints: NumPy takes an int, a tuple, a list or
    an array of them."""
    return tuple(int(d) for d in np.atleast_1d(value))


def operand(s: Let, name: str) -> Any:
    """The atom given for parameter ``name`` (an operand or an optional parameter)."""
    if name in s.params:
        return s.params[name]
    for a, (pname, k) in zip(s.args, arg_slots(s)):
        if pname == name and k is None:
            return a
    return None


def static(s: Let, name: str, default: Any = None) -> Any:
    """The value of a parameter known now (``axis=1``), else ``default``."""
    p = operand(s, name)
    if p is None:
        return default
    if isinstance(p, Const):
        return p.value
    raise NoBatchRule(f"the `{name}` argument is computed when the code runs",
                      f"write `{name}=` as a constant")


def axis_arg(b: Batch, s: Let, name: str, rank: int, default: Any = None) -> str:
    """The ``name`` axis argument for the batched array: moved now when it is a
    constant, when the code runs (``batch_axes(axis, rank)``) when a name holds it."""
    p = operand(s, name)
    if p is None or isinstance(p, Const):
        return shifted(default if p is None else p.value, rank)
    if isinstance(p, Var) and b.batched(p):
        raise NoBatchRule(f"a `{name}` argument that differs between examples",
                          f"give `{name}=` the same value for every example")
    if not isinstance(p, Var):
        raise NoBatchRule(f"the `{name}` argument is computed when the code runs")
    return f"batch_axes({atom_text(p)}, {rank})"


def only_first_batched(b: Batch, s: Let) -> None:
    """Refuse a batched operand after the first (an axis or shape given by a value)."""
    if any(b.batched(a) for a in s.args[1:]):
        raise NoBatchRule(f"`{s.prim}` with a batched argument other than the first")


# ---- families ------------------------------------------------------------------------


@batch_default("broadcasting")
def broadcasting(b: Batch, s: Let) -> str:
    """Elementwise and broadcasting functions: line up the ranks, nothing else."""
    rank = b.out_rank(s)
    if s.prim in ("and_", "or_", "not_"):  # on per-example truth values
        texts = [align(b, a, rank) for a in s.args]
        return f"np.logical_{s.prim.rstrip('_')}({', '.join(texts)})"
    return args_text(s, [align(b, a, rank) for a in s.args])


def _built_items(b: Batch, atom: Any) -> list[Any] | None:
    """The items of a list or tuple the function built, if ``atom`` is one."""
    return getattr(b, "items", {}).get(getattr(atom, "name", None))


@batch_default("trailing_axes")
def unchanged(b: Batch, s: Let) -> str:
    """Elementwise, or acting on the trailing axes and broadcasting over the others."""
    only_first_batched(b, s)
    return args_text(s, [atom_text(a) for a in s.args])


# what makes one int (an array's positions: `i = np.argmax(m)`, an item of
# `np.unravel_index(np.argmax(m), m.shape)`), never a bool
_INT_MAKERS = ("argmax", "argmin", "unravel_index", "len", "int", "size", "ndim")


def _int_scalar(b: Any, item: Any) -> bool:
    """Is ``item`` one int (no axes: its place among slices moves nothing)?"""
    producers = getattr(getattr(b, "facts", None), "producer", {})
    made = producers.get(getattr(item, "name", ""))
    if made is not None and made.prim == "getitem" and made.args and isinstance(
            made.args[0], Var) and producers.get(made.args[0].name) is not None:
        made = producers[made.args[0].name]  # (`i, j = np.unravel_index(...)`)
    if made is None or made.prim not in _INT_MAKERS:
        return False
    try:
        return b.rank(item) == 0
    except NoBatchRule:
        return False


def _made_here(b: Any, item: Any) -> bool:
    """Is ``item`` computed by the function (not an argument, a loop's counter)?"""
    return getattr(item, "name", "") in getattr(getattr(b, "facts", None), "producer", {})


def separated_lead(b: Batch, index: Index) -> int | None:
    """Where an index's array items are separated (by a slice, ``None`` or ``...``:
    an int counts as one of them once an array is there), NumPy puts their broadcast
    axes first, before the axes the slices keep, which the batch axis's place: the
    number of those axes (a boolean array gives one), to move the batch axis back in
    front of them.  None where the index keeps its axes in order."""
    items = index.items

    def rank(item: Any) -> int:  # 0 for an int
        if isinstance(item, Var):
            return b.rank(item)
        value = np.asarray(item.value)
        return min(value.ndim, 1) if value.dtype == bool else value.ndim

    kept = [k for k, item in enumerate(items) if not (
        isinstance(item, Slice) or isinstance(item, Const) and (
            item.value is None or item.value is Ellipsis))]
    if len(kept) < 2:  # (one item is never separated: np.ix_'s tuple has no rank)
        return None
    picked = [(k, rank(items[k])) for k in kept]
    arrays = [r for _, r in picked if r > 0]
    positions = [k for k, _ in picked]
    if not arrays or positions == list(range(positions[0], positions[-1] + 1)):
        return None
    return max(arrays)


def in_separated_order(b: Batch, value: Any, rank: int, lead: int) -> str:
    """A value written through an index whose array items are separated
    (``separated_lead``: ``lead`` axes first), lined up with the region ``y[:,
    index]`` of per-example rank ``rank``, whose batch axis follows those axes."""
    if b.batched(value):
        return f"np.moveaxis({align(b, value, rank)}, 0, {lead})"
    text = atom_text(value)
    own = b.rank(value) if isinstance(value, Var) else int(np.ndim(value.value))
    among = own - (rank - lead)  # its axes among the arrays' (it broadcasts from the right)
    return text if among <= 0 else f"np.expand_dims({text}, {among})"


def getitem_rule(b: Batch, s: Let) -> str:
    """``x[i]`` of a batched ``x`` is ``x[:, i]``; an index that starts with ``...``
    already skips it."""
    x = s.args[0]
    index: Index = s.params["index"]
    if any(isinstance(a, Var) and b.batched(a) for a in index.atoms()):
        raise NoBatchRule("indexing with a batched index",
                          "index with values that are the same for every example")
    if not b.batched(x):
        raise NoBatchRule("internal: getitem without a batched operand")
    inner = index_text(index)
    first = index.items[0] if index.items else None
    if isinstance(first, Const) and first.value is Ellipsis:
        return f"{atom_text(x)}[{inner}]"
    if not index.items:
        return atom_text(x)
    lead = separated_lead(b, index)
    if lead is not None:  # (NumPy's order: the arrays' axes, the batch axis, the rest)
        return f"np.moveaxis({atom_text(x)}[:, {inner.rstrip(',')}], {lead}, 0)"
    return f"{atom_text(x)}[:, {inner.rstrip(',')}]"


def batched_items(b: Batch, items: list[Any], rank: int) -> list[str]:
    """Items of a list that is stacked or joined: batched ones aligned, unbatched
    ones repeated along a new batch axis, both given the leading unit axes that
    bring them to ``rank`` (np.vstack's 1-D piece is a row)."""
    return [align(b, a, rank) if b.batched(a) else broadcast_along(b, atom_text(a),
                                                                   rank - _item_rank(b, a))
            for a in items]


def _item_rank(b: Batch, a: Any) -> int:
    """An item's rank; a constant list or tuple of numbers is the array it stands for
    (``[0.0]`` in ``np.concatenate([[0.0], q])``: rank 1, where ``b.rank`` counts a
    container constant 0, and the repeat gained a unit axis too many)."""
    if isinstance(a, Const) and isinstance(a.value, (tuple, list)):
        try:
            return int(np.ndim(np.asarray(a.value, dtype=float)))
        except (TypeError, ValueError):
            return b.rank(a)
    return b.rank(a)


def broadcast_along(b: Batch, text: str, missing: int) -> str:
    """An unbatched value repeated along a new batch axis, with ``missing`` unit axes
    after it (to line up with batched items of a higher rank)."""
    units = "1, " * missing if missing > 0 else ""
    return f"np.broadcast_to({text}, ({b.use_batch_size()}, {units}*np.shape({text})))"


# ---- the runtime helpers emitted derivatives call ----------------------------------


@batch_default("along_axis")
def along_axis(b: Batch, s: Let) -> str:
    """Functions whose ``axis=None`` flattens (or means "every axis", for flip)."""
    only_first_batched(b, s)
    a = s.args[0]
    default = -1 if s.prim in ("sort", "argsort") else None
    axis = static(s, "axis", default)
    if axis is None and s.prim == "flip":
        return args_text(s, [atom_text(a)], {"axis": shifted(None, b.rank(a))})
    if axis is None:
        flat = f"np.reshape({atom_text(a)}, ({b.use_batch_size()}, -1))"
        return args_text(s, [flat], {"axis": "1"})
    return args_text(s, [atom_text(a)], {"axis": shifted(axis, b.rank(a))})


def _with_batch(b: Batch, atom: Any) -> str:
    """An operand with a batch axis: itself if batched, else a broadcast view."""
    text = atom_text(atom)
    if b.batched(atom):
        return text
    return f"np.broadcast_to({text}, ({b.use_batch_size()}, *np.shape({text})))"


# ---- helpers of the shape and indexing rules -------------------------------------
# Most shape functions only need their axis arguments moved past the batch axis; where
# a function reads its array flattened (``axis=None``), each example is flattened on
# its own (``np.reshape(x, (n, -1))``) and the function works along axis 1.  Selecting
# with per-example positions (a batched index) picks, for example ``i``, from row
# ``i``: ``x[np.arange(n)[:, None], idx]``.  An axis given by a name is moved when the
# code runs: ``axis % rank + 1``.

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
    spelled inside a subscript; where its array items are separated, the region it
    selects has the batch axis after theirs: ``separated_lead``)."""
    first = index.items[0] if index.items else None
    if isinstance(first, Const) and first.value is Ellipsis:
        return index_text(index)
    if len(index.items) == 1 and holds_tuple(b, first):  # a tuple of index arrays
        return f":, *{atom_text(first)}"
    inner = index_text(index).rstrip(",")
    return f":, {inner}" if inner else ":"


def _per_example_index(b: Batch, index: Index, base_batched: bool) -> str:
    """A batched index of integer arrays (and ints) only: each batched array lined up
    after the batch axis, and a batched base read at its own row."""
    items = list(index.items)
    if any(holds_tuple(b, i) for i in items):
        raise NoBatchRule("a tuple of index arrays that differ per example",
                          "index with the arrays themselves: x[i, j]")
    if any(isinstance(i, Const) and (i.value is None or i.value is Ellipsis) for i in items):
        raise NoBatchRule("a batched index mixed with None or ...",
                          "index with the batched positions alone, then slice")
    if any(isinstance(i, Slice) for i in items):
        return _sliced_per_example(b, items, base_batched)
    rank = _broadcast_rank(b, items)
    texts = [align(b, i, rank) for i in items]
    if base_batched:
        texts = [rows(b, rank)] + texts
    return ", ".join(texts)


def _sliced_per_example(b: Batch, items: list[Any], base_batched: bool) -> str:
    """``m[:, j]`` with ``j`` one position per example: ``m[np.arange(n), :, j]``.  Each
    item not a slice one int per example, so the advanced indexes (the rows and those
    ints) broadcast to the batch axis alone, which NumPy puts first (adjacent to the
    rows or separated from them by a slice alike); the sliced axes follow in order, as
    each example's ``m_k[:, j_k]`` has them.  A position array per example (where
    NumPy would place its axes apart from the sliced ones) is refused."""
    for i in items:
        if isinstance(i, Slice):
            if any(isinstance(a, Var) and b.batched(a) for a in (i.lower, i.upper, i.step)):
                raise NoBatchRule("a slice whose bounds differ per example",
                                  "slice with bounds the same for every example")
        elif (b.rank(i) if isinstance(i, Var) else np.ndim(i.value)) != 0:
            raise NoBatchRule("a batched index of arrays mixed with slices",
                              "index with the batched positions alone, then slice")
        elif isinstance(i, Var) and not _int_scalar(b, i) and _made_here(b, i):
            raise NoBatchRule(  # (a 0-d bool, np.any's, would add an axis)
                "a batched position mixed with slices, made by an operation that may "
                "not give an int", "index with np.argmax's position, or an argument")
    if not base_batched:
        raise NoBatchRule("a batched index mixed with slices into an array the same for "
                          "every example", "index with the batched positions alone")
    spelled = index_text(Index(tuple(items), True)).rstrip(",")
    return f"{rows(b, 0)}, {spelled}"


def _broadcast_rank(b: Batch, items: Any) -> int:
    """Per-example rank of index arrays broadcast together."""
    return max(b.rank(i) if isinstance(i, Var) else int(np.ndim(i.value))
               for i in items)


def _is_mask(b: Batch, atom: Any) -> bool:
    """Is ``atom`` a comparison's result (a mask, not positions)?"""
    producers = getattr(getattr(b, "facts", None), "producer", {})
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

# ---- helpers of the linear algebra, reduction and runtime-helper rules -----------
# Contractions are einsums over letters derived from the ranks, the batch with a letter
# of its own on every batched operand and on the output (``np.einsum("zij,jk->zik", x,
# w)``); an axis held by a name (``ax = 1``) moves when the code runs; an operand that
# only gives a shape is enough as a batched view (``np.broadcast_to``).

BATCH_LETTER = "z"  # einsum letter of the batch axis; the others come from LETTERS
LETTERS = "abcdefghijklmnopqrstuvwxy"


_UNKNOWN = object()
_FOLD = {"add": lambda x, y: x + y, "subtract": lambda x, y: x - y,
         "multiply": lambda x, y: x * y, "negative": lambda x: -x,
         "range": range, "make_tuple": lambda *xs: xs, "make_list": lambda *xs: list(xs)}


def _known(b: Batch, atom: Any) -> Any:
    """The value of an atom that constants and per-example ranks decide
    (``lead = np.ndim(a) - 1``, ``(range(lead), range(lead))``), read through the
    statements that made it; ``_UNKNOWN`` where the code decides it when it runs."""
    if isinstance(atom, Const):
        return atom.value
    producer = getattr(getattr(b, "facts", None), "producer", {})
    s = producer.get(atom.name) if isinstance(atom, Var) and not b.batched(atom) else None
    if s is None or atom.name not in _bound_once(getattr(b, "fn", None)):
        return _UNKNOWN
    if s.prim == "ndim":
        return b.rank(s.args[0])
    if s.prim == "identity":
        return _known(b, s.args[0])
    if s.prim in _FOLD and not s.params:
        values = [_known(b, a) for a in s.args]
        if all(v is not _UNKNOWN for v in values):
            return _FOLD[s.prim](*values)
    return _UNKNOWN


def _bound_once(fn: Any) -> set[str]:
    """Names one statement binds for good: not joined from branches, not carried
    around a loop, not a loop's counter, not an array written in place."""
    if fn is None:
        return set()
    counts: Counter[str] = Counter()
    changing = set(fn.aliases) | set(fn.aliases.values())
    for st in walk(fn.body):
        if isinstance(st, Let):
            counts[st.target] += 1
        elif isinstance(st, For):
            changing |= {entry for entry, _ in st.carried} | {st.target}
    return {n for n, c in counts.items() if c == 1} - changing


def _static(b: Batch, s: Let, name: str, default: Any = None) -> Any:
    """The value of parameter ``name`` known now (a constant, or decided by
    constants and ranks), else ``default``."""
    p = operand(s, name)
    if p is None:
        return default
    value = _known(b, p)
    if value is _UNKNOWN:
        raise NoBatchRule(f"the `{name}` argument is computed when the code runs",
                          f"write `{name}=` as a constant")
    return value


def _all_axes(rank: int) -> str:
    """Every per-example axis of a batched array (``()`` for a scalar example)."""
    return shifted(None, rank) if rank > 0 else "()"


def _axis(b: Batch, s: Let, name: str, rank: int, default: Any = None) -> str:
    """The ``name`` axis argument for the batched array.  A constant moves now; an int
    held by a name (``ax = 1``, an argument) moves when the code runs."""
    p = operand(s, name)
    value = default if p is None else _known(b, p)
    if value is not _UNKNOWN:
        return _all_axes(rank) if value is None else shifted(value, rank)
    if b.batched(p):
        raise NoBatchRule(f"a `{name}` argument that differs between examples",
                          f"give `{name}=` the same value for every example")
    try:
        is_int = b.rank(p) == 0
    except NoBatchRule:
        is_int = False
    if not is_int:  # None, an int or a tuple: moved when the code runs
        return f"batch_axes({atom_text(p)}, {rank})"
    t = atom_text(p)
    return f"{t} + 1 if {t} >= 0 else {t}"


def _operand_rank(b: Batch, atom: Any) -> int:
    """An operand's per-example rank; a constant list of numbers (np.kron(x, [1.0,
    2.0])) is the array NumPy makes of it."""
    if isinstance(atom, Const) and isinstance(atom.value, (list, tuple)):
        return int(np.ndim(atom.value))
    return b.rank(atom)


def _array_text(atom: Any) -> str:
    """An unbatched operand as an array (a constant list indexed with ``None``s)."""
    if isinstance(atom, Const) and isinstance(atom.value, (list, tuple)):
        return f"np.asarray({atom_text(atom)})"
    return atom_text(atom)


def _paren(text: str) -> str:
    return text if text.replace(".", "").replace("_", "").isalnum() else f"({text})"


def _repeat(b: Batch, text: str) -> str:
    """A value that is the same for every example, repeated along a new batch axis
    (a copy, never a read-only view: later code may write into it)."""
    return f"np.repeat({_paren(text)}[None], {b.use_batch_size()}, axis=0)"


def _lined(b: Batch, atom: Any, text: str, rank: int) -> str:
    """``text`` (an expression of ``atom``'s value, same rank) with per-example axes
    added after the batch axis up to ``rank``, as :func:`align` does for atoms."""
    missing = rank - b.rank(atom)
    if not b.batched(atom) or missing <= 0:
        return text
    return f"{_paren(text)}[:{', None' * missing}]"


def _items(b: Batch, atom: Any) -> list[Any]:
    """The atoms of a list the function built as a literal (vmap keeps them)."""
    items = getattr(b, "items", {}).get(atom.name) if isinstance(atom, Var) else None
    if items is None:
        raise NoBatchRule("a list of arrays the function did not build as a literal",
                          "write the list out: [a, b, c]")
    return items


def _kind_is_list(b: Batch, name: str) -> bool:
    kind = getattr(b, "kind", lambda n: None)(name)
    return isinstance(kind, Tree)


def _letter(spec: str) -> str:
    spare = BATCH_LETTER + LETTERS[::-1] + LETTERS.upper()
    return next(c for c in spare if c not in spec)


def _einsum_terms(spec: str) -> tuple[list[str], str]:
    """An einsum's input terms and explicit output; an implicit output (no ``->``)
    is NumPy's: ``...`` first, then the letters used once, sorted."""
    text = spec.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    if not arrow:
        letters = inputs.replace(",", "").replace(".", "")
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = ("..." if "..." in inputs else "") + "".join(once)
    return inputs.split(","), output


def _einsum(b: Batch, terms: list[str], output: str, atoms: list[Any],
            extra: str = "") -> str:
    """``np.einsum`` with a batch letter on each batched operand and on the output."""
    z = _letter("".join(terms) + output)
    parts = [z + t if b.batched(a) else t for t, a in zip(terms, atoms)]
    spec = ",".join(parts) + "->" + z + output
    texts = ", ".join(atom_text(a) for a in atoms)
    return f"np.einsum({spec!r}, {texts}{extra})"


def _tensordot_terms(ra: int, rb: int, axes: Any) -> tuple[str, str, str]:
    """Letters for ``np.tensordot(a, b, axes)``: a's, b's and the output's."""
    if isinstance(axes, int):
        a_axes, b_axes = list(range(ra - axes, ra)), list(range(axes))
    else:
        a_axes, b_axes = ([a] if isinstance(a, int) else list(a) for a in axes)
        a_axes = [i % ra for i in a_axes]
        b_axes = [i % rb for i in b_axes]
    ta = LETTERS[:ra]
    tb = list(LETTERS[ra:ra + rb])
    for i, j in zip(a_axes, b_axes):
        tb[j] = ta[i]
    out = [ta[i] for i in range(ra) if i not in a_axes]
    out += [tb[j] for j in range(rb) if j not in b_axes]
    return ta, "".join(tb), "".join(out)


def _tensordot_axes(b: Batch, s: Let) -> Any:
    axes = _static(b, s, "axes", 2)
    if isinstance(axes, list):
        axes = tuple(axes)
    return axes


# ---- reductions ---------------------------------------------------------------------


@batch_default("reducer")
def reduction_rule(b: Batch, s: Let) -> str:
    """``axis=None`` reduces every per-example axis; ``axis=k`` is ``k + 1`` (also
    when a name holds the int: moved when the code runs)."""
    w = operand(s, "weights") if s.prim == "average" else None
    if w is not None and not (isinstance(w, Const) and w.value is None):
        return average_weights(b, s)  # (weights=None written out: no weights)
    only_first_batched(b, s)
    return args_text(s, [atom_text(a) for a in s.args],
                     {"axis": _axis(b, s, "axis", b.rank(s.args[0]))})


def average_weights(b: Batch, s: Let) -> str:
    """``np.average(a, axis, weights=w)``: the weights given ``a``'s batched shape
    (1-D weights laid along ``axis`` first), so that NumPy takes them as they are."""
    a, w = s.args[0], operand(s, "weights")
    ra, rw = b.rank(a), b.rank(w)
    axis = _static(b, s, "axis")
    w_text = atom_text(w)
    if rw != ra:  # 1-D weights along an int axis
        k = axis % ra
        after = ", None" * (ra - 1 - k)
        w_text = (f"{_paren(w_text)}[:{', None' * k}, :{after}]" if b.batched(w)
                  else f"{_paren(w_text)}[:{after}]")
    a_text = _with_batch(b, a)
    params = {"axis": shifted(axis, ra) if ra else "()"}
    full = f"np.broadcast_to({w_text}, np.shape({a_text}))"
    keywords = s.params.get(KEYWORD_OPERANDS, ())
    if "weights" in keywords:  # the operands: a, then weights
        texts = [a_text, full]
    else:
        texts, params["weights"] = [a_text], full
    return args_text(s, texts, params)


@batch_default("cumulative")
def cumulative_rule(b: Batch, s: Let) -> str:
    """Running reductions: ``axis=None`` runs over each flattened example (axis 1 of
    the batch reshaped to ``(n, -1)``); ``axis=k`` is ``k + 1``."""
    only_first_batched(b, s)
    a = s.args[0]
    p = operand(s, "axis")
    if p is None or isinstance(p, Const) and p.value is None:
        flat = f"np.reshape({atom_text(a)}, ({b.use_batch_size()}, -1))"
        return args_text(s, [flat], {"axis": "1"})
    return args_text(s, [atom_text(a)], {"axis": _axis(b, s, "axis", b.rank(a))})


# ---- special functions ----------------------------------------------------------


@batch_default("normalizer")
def special_axis_rule(b: Batch, s: Let) -> str:
    """Normalisations over ``axis``: ``None`` is every per-example axis.  Weights
    (logsumexp's ``b=``) broadcast against the values: unbatched, from the right; where
    either is batched, both are aligned to the rank of their per-example broadcast."""
    if not any(b.batched(x) for x in s.args[1:]):
        return args_text(s, [atom_text(x) for x in s.args],
                         {"axis": _axis(b, s, "axis", b.rank(s.args[0]))})
    rank = max(b.rank(x) for x in s.args)
    return args_text(s, [align(b, x, rank) for x in s.args],
                     {"axis": _axis(b, s, "axis", rank)})


# ---- products -------------------------------------------------------------------


# ---- the runtime helpers of emitted derivatives ---------------------------------


def _seq_texts(b: Batch, seq: Any, what: str) -> list[str]:
    """Each item of a list or tuple argument with a batch axis: the items of one
    the function built as a literal, or of a helper's tuple result (``g[0]``)."""
    items = getattr(b, "items", {}).get(seq.name) if isinstance(seq, Var) else None
    if items is not None:
        return [_with_batch(b, a) for a in items]

    kind = getattr(b, "kind", lambda n: None)(seq.name) if isinstance(seq, Var) else None
    if not isinstance(kind, Tree) or kind.type is dict or any(
            c != LEAF for c in kind.children):
        raise NoBatchRule(f"`{what}` of a list the function did not build",
                          "build the list in the function: [x, y]")
    texts = []
    for key in kind.keys:
        text = f"{seq.name}[{key}]"
        if not b.batched(seq, (key,)):
            text = f"np.broadcast_to({text}, ({b.use_batch_size()}, *np.shape({text})))"
        texts.append(text)
    return texts


def _listed(texts: list[str]) -> str:
    return "[" + ", ".join(texts) + "]"


# ---- issue 3's additions: nanprod, trapezoid, cov, corrcoef -------------------------


# ---- polynomials, cond, tensorinv, tensorsolve ----------------------------------------
