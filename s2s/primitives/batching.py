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

from typing import Any, Callable

import numpy as np

from ..ir.nodes import KEYWORD_OPERANDS, Const, Index, Let, Slice, Var
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
    advanced = [k for k, item in enumerate(index.items) if not (
        isinstance(item, Slice) or (isinstance(item, Const) and (
            item.value is None or isinstance(item.value, int))))]
    if advanced and advanced != list(range(advanced[0], advanced[-1] + 1)):
        # NumPy moves separated array indexes' axes to the front: not the batch's place
        raise NoBatchRule("array indexes separated by slices, on a batched array",
                          "index in two steps")
    if not index.items:
        return atom_text(x)
    return f"{atom_text(x)}[:, {inner.rstrip(',')}]"


def batched_items(b: Batch, items: list[Any], rank: int) -> list[str]:
    """Items of a list that is stacked or joined: batched ones aligned, unbatched
    ones repeated along a new batch axis, both given the leading unit axes that
    bring them to ``rank`` (np.vstack's 1-D piece is a row)."""
    out = []
    for a in items:
        if b.batched(a):
            out.append(align(b, a, rank))
        else:
            n, text = b.use_batch_size(), atom_text(a)
            missing = rank - b.rank(a)
            units = "1, " * missing if missing > 0 else ""
            out.append(f"np.broadcast_to({text}, ({n}, {units}*np.shape({text})))")
    return out


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


# the rule families of shape/indexing and linalg (registration is write-once, so the
# order of these imports decides nothing)
from . import batching_linalg, batching_shape  # noqa: E402,F401

