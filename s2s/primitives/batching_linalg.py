"""Batching rules for linear algebra, reductions, special functions, and the runtime
helpers that emitted derivatives call (see :mod:`s2s.batching` for the conventions:
batched values carry the batch axis in front, each value's per-example rank is known).

Three ideas cover most of them:

* **Contractions as einsum.**  ``tensordot``, ``inner``, ``dot`` of higher rank, and
  the cotangents of ``tensordot`` are einsums over letters derived from the ranks; the
  batch gets a letter of its own on every batched operand and on the output
  (``np.einsum("zij,jk->zik", x, w)``).
* **Axes past the batch axis.**  An ``axis=k`` becomes ``k + 1``, ``axis=None`` names
  every per-example axis; an axis held by a name (``ax = 1``, an argument) is moved
  when the code runs (``axis=ax + 1 if ax >= 0 else ax``).  Helpers that read a jet
  (a leading axis of Taylor coefficients) get the batch axis moved behind the jet axis
  for the call and back in front after it.
* **Shape-only operands.**  Where an operand only gives a shape (``a`` in
  ``tensordot_lhs_bar(cot, a, b, axes)``), a batched view of it
  (``np.broadcast_to``) is enough; a result that is the same for every example is
  repeated along a new batch axis, so that every batched value has one.

This module registers after :mod:`s2s.batching` and replaces its rules for
``einsum`` (implicit outputs, ``...``), ``vecdot``/``inner`` (any rank and axis),
``dot`` (rank > 2), the reductions (``average`` with weights, an axis held by a
name) and ``dot_lhs_bar``/``dot_rhs_bar`` (scalars, rank > 2).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from ..ir.nodes import KEYWORD_OPERANDS, Const, For, Let, Var, walk
from ..ir.spelling import atom_text
from .batching import (
    Batch,
    NoBatchRule,
    _with_batch,
    args_text,
    batch_default,
    only_first_batched,
    operand,
    shifted,
)

BATCH_LETTER = "z"  # einsum letter of the batch axis; the others come from LETTERS
LETTERS = "abcdefghijklmnopqrstuvwxy"


# ---- helpers ------------------------------------------------------------------------


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
    producer = getattr(getattr(b, "a", None), "producer", {})
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
    from ..ir.kinds import Tree

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
    if s.prim == "average" and operand(s, "weights") is not None:
        return average_weights(b, s)
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
    """Normalisations over ``axis``: ``None`` is every per-example axis."""
    only_first_batched(b, s)
    a = s.args[0]
    return args_text(s, [atom_text(a)], {"axis": _axis(b, s, "axis", b.rank(a))})


# ---- products -------------------------------------------------------------------


# ---- the runtime helpers of emitted derivatives ---------------------------------


def _seq_texts(b: Batch, seq: Any, what: str) -> list[str]:
    """Each item of a list or tuple argument with a batch axis: the items of one
    the function built as a literal, or of a helper's tuple result (``g[0]``)."""
    items = getattr(b, "items", {}).get(seq.name) if isinstance(seq, Var) else None
    if items is not None:
        return [_with_batch(b, a) for a in items]
    from ..ir.kinds import LEAF, Tree

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


