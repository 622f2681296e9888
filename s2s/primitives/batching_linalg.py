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
    align,
    args_text,
    batch_default,
    batch_rule,
    broadcasting,
    matmul_rule,
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


@batch_rule("einsum")
def einsum_rule(b: Batch, s: Let) -> str:
    """A batch letter on each batched operand's subscripts and on the output's (an
    implicit output is written out first)."""
    spec = operand(s, "subscripts")
    if not isinstance(spec, Const) or not isinstance(spec.value, str):
        raise NoBatchRule("np.einsum without constant subscripts",
                          "write the subscripts as a string literal")
    terms, output = _einsum_terms(spec.value)
    operands = list(s.args[1:])
    optimize = s.params.get("optimize")
    extra = f", optimize={atom_text(optimize)}" if optimize is not None else ""
    return _einsum(b, terms, output, operands, extra=extra)


@batch_rule("tensordot")
def tensordot_rule(b: Batch, s: Let) -> str:
    """``np.tensordot`` as the einsum its ``axes`` describe, with a batch letter."""
    x, y = s.args
    ta, tb, out = _tensordot_terms(b.rank(x), b.rank(y), _tensordot_axes(b, s))
    return _einsum(b, [ta, tb], out, [x, y])


@batch_rule("dot")
def dot_rule(b: Batch, s: Let) -> str:
    """A scalar operand multiplies; up to two axes ``dot`` is ``@``; beyond, it sums
    x's last axis against y's second-to-last (an einsum)."""
    x, y = s.args
    rx, ry = b.rank(x), b.rank(y)
    if rx == 0 or ry == 0:
        return broadcasting(b, Let(s.target, "multiply", s.args, {}, s.loc))
    if rx <= 2 and ry <= 2:
        return matmul_rule(b, s)
    ta, tb, out = _tensordot_terms(rx, ry, ([rx - 1], [ry - 2 if ry >= 2 else 0]))
    return _einsum(b, [ta, tb], out, [x, y])


@batch_rule("inner")
def inner_rule(b: Batch, s: Let) -> str:
    """The last axes contracted: an einsum (a scalar operand multiplies)."""
    x, y = s.args
    rx, ry = b.rank(x), b.rank(y)
    if rx == 0 or ry == 0:
        return broadcasting(b, Let(s.target, "multiply", s.args, {}, s.loc))
    ta, tb, out = _tensordot_terms(rx, ry, ([rx - 1], [ry - 1]))
    return _einsum(b, [ta, tb], out, [x, y])


@batch_rule("vdot")
def vdot_rule(b: Batch, s: Let) -> str:
    """The sum of the flattened product: each example flattened."""
    n = b.use_batch_size()
    x, y = (f"np.reshape({atom_text(a)}, ({n}, -1))" if b.batched(a)
            else f"np.ravel({atom_text(a)})" for a in s.args)
    return f"np.sum({x} * {y}, axis=-1)"


@batch_rule("vecdot", "linalg.vecdot")
def vecdot_rule(b: Batch, s: Let) -> str:
    """Each operand's ``axis`` moved last, the ranks lined up, the product summed."""
    axis = _static(b, s, "axis", -1)
    rank = max(b.rank(a) for a in s.args)
    texts = []
    for a in s.args:
        r, t = b.rank(a), atom_text(a)
        if axis % r != r - 1:
            t = f"np.moveaxis({t}, {axis % r + b.batched(a)}, -1)"
        texts.append(_lined(b, a, t, rank))
    return f"np.sum({texts[0]} * {texts[1]}, axis=-1)"


@batch_rule("matvec", "vecmat")
def matvec_rule(b: Batch, s: Let) -> str:
    """Gufuncs broadcast over leading (loop) axes: a batched operand's loop axes are
    lined up with the other's, so its batch axis stays in front."""
    x1, x2 = s.args
    c1, c2 = (2, 1) if s.prim == "matvec" else (1, 2)
    loop = max(b.rank(x1) - c1, b.rank(x2) - c2)
    return args_text(s, [align(b, x1, loop + c1), align(b, x2, loop + c2)])


@batch_rule("cross", "linalg.cross")
def cross_rule(b: Batch, s: Let) -> str:
    """3-vectors along ``axis``: moved last in each operand, crossed, moved back."""
    axis = _static(b, s, "axis", -1)
    r_out = b.out_rank(s)
    texts = []
    for a in s.args:
        r, t = b.rank(a), atom_text(a)
        if axis % r != r - 1:
            t = f"np.moveaxis({t}, {axis % r + b.batched(a)}, -1)"
        texts.append(_lined(b, a, t, r_out))
    text = f"np.{s.prim}({texts[0]}, {texts[1]})"
    if axis % r_out != r_out - 1:
        text = f"np.moveaxis({text}, -1, {axis % r_out + 1})"
    return text


@batch_rule("kron")
def kron_rule(b: Batch, s: Let) -> str:
    """``np.kron`` multiplies axis lengths: a batched operand against an unbatched one
    (padded with leading length-1 axes by NumPy) keeps the batch axis as it is; two
    batched operands are multiplied blockwise and the axis pairs merged."""
    x, y = s.args
    nd = max(b.rank(x), b.rank(y))
    if nd == 0:
        return broadcasting(b, Let(s.target, "multiply", s.args, {}, s.loc))
    if not (b.batched(x) and b.batched(y)):
        return f"np.kron({align(b, x, nd)}, {align(b, y, nd)})"
    xs, ys = align(b, x, nd), align(b, y, nd)
    blocks = (f"{_paren(xs)}[:{', :, None' * nd}] * {_paren(ys)}[:{', None, :' * nd}]")
    sizes = f"np.multiply(np.shape({xs})[1:], np.shape({ys})[1:])"
    return f"np.reshape({blocks}, ({b.use_batch_size()}, *{sizes}))"


@batch_rule("diag")
def diag_rule(b: Batch, s: Let) -> str:
    """A matrix's diagonal: ``np.diagonal`` of the last two axes.  A vector's matrix:
    the vector (padded by ``|k|``) spread along the ``k``-th diagonal with
    ``np.where`` (no products: infinities stay off the diagonal)."""
    only_first_batched(b, s)
    v = s.args[0]
    k = _static(b, s, "k", 0)
    t = atom_text(v)
    if b.rank(v) == 2:
        return f"np.diagonal({t}, offset={k}, axis1=1, axis2=2)"
    if b.rank(v) != 1:
        raise NoBatchRule("np.diag of an array that is neither 1-D nor 2-D")
    size = f"np.shape({t})[1]" + (f" + {abs(k)}" if k else "")
    padded = f"np.pad({t}, ((0, 0), (0, {abs(k)})))" if k else t
    spread = f"{padded}[:, :, None]" if k >= 0 else f"{padded}[:, None, :]"
    eye = f"np.eye({size}, k={k}, dtype=bool)" if k else f"np.eye({size}, dtype=bool)"
    return f"np.where({eye}, {spread}, 0)"


@batch_rule("linalg.multi_dot")
def multi_dot_rule(b: Batch, s: Let) -> str:
    """The chain of ``@`` (which broadcasts over the batch), a 1-D first array as a
    row and a 1-D last array as a column, their axes dropped at the end."""
    items = _items(b, s.args[0])
    texts = [atom_text(a) for a in items]
    first, last = b.rank(items[0]) == 1, b.rank(items[-1]) == 1
    if first:  # (np.expand_dims, not [..., None, :]: the array may be a constant)
        texts[0] = f"np.expand_dims({texts[0]}, -2)"
    if last:
        texts[-1] = f"np.expand_dims({texts[-1]}, -1)"
    chain = " @ ".join(texts)
    cut = {(True, True): "[..., 0, 0]", (True, False): "[..., 0, :]",
           (False, True): "[..., 0]"}.get((first, last))
    return f"({chain}){cut}" if cut else chain


@batch_rule("linalg.lstsq")
def lstsq_rule(b: Batch, s: Let) -> str:
    """``(x, residuals, rank, s)`` from the batched pseudo-inverse (a of full rank,
    as the derivative rules assume): ``x = pinv(a) @ b`` on columns, residuals only
    where a has more rows than columns, rank and singular values batched."""
    a, v = s.args
    ta, tv = atom_text(a), atom_text(v)
    rcond = operand(s, "rcond")
    pinv = f"np.linalg.pinv({ta})" if rcond is None or (
        isinstance(rcond, Const) and rcond.value is None) else \
        f"np.linalg.pinv({ta}, rcond={atom_text(rcond)})"
    if b.rank(v) == 1:  # one column per example
        cols = f"{tv}[..., None]" if b.batched(v) else f"{tv}[:, None]"
        x_cols = f"{pinv} @ {cols}"
        x = f"({x_cols})[..., 0]"
    else:
        cols, x_cols = tv, f"{pinv} @ {tv}"
        x = x_cols
    n = b.use_batch_size()
    residuals = (f"np.sum(({ta} @ ({x_cols}) - {cols}) ** 2, axis=-2) "
                 f"if np.shape({ta})[-2] > np.shape({ta})[-1] else np.zeros(({n}, 0))")
    rank, sv = f"np.linalg.matrix_rank({ta})", f"np.linalg.svdvals({ta})"
    if not b.batched(a):
        rank, sv = _repeat(b, rank), _repeat(b, sv)
    return f"({x}, {residuals}, {rank}, {sv})"


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


@batch_rule("vander")
def vander_rule(b: Batch, s: Let) -> str:
    """Each example's columns as powers: ``x[..., None] ** powers``."""
    only_first_batched(b, s)
    x = atom_text(s.args[0])
    n = operand(s, "N")
    if isinstance(n, Var) and b.batched(n):
        raise NoBatchRule("np.vander with N that differs per example")
    if n is None or (isinstance(n, Const) and n.value is None):
        count = f"np.shape({x})[1]"
    else:
        count = atom_text(n)
    if _static(b, s, "increasing", False):
        return f"{x}[..., None] ** np.arange({count})"
    return f"{x}[..., None] ** np.arange({count} - 1, -1, -1)"


@batch_rule("polyval")
def polyval_rule(b: Batch, s: Let) -> str:
    """np.polyval itself (Horner's rule keeps the dtype): x lined up past the batch
    axis with the coefficients' other axes; batched coefficients with their axis moved
    in front of the batch axis, each coefficient then a batched array."""
    p, x = s.args
    rp, r = b.rank(p), b.rank(x)
    rank = max(rp - 1, r)  # of the output, per example
    x_text = align(b, x, rank)
    if not b.batched(p):
        return f"np.polyval({atom_text(p)}, {x_text})"
    coefficients = f"np.moveaxis({atom_text(p)}, 1, 0)"
    if rank > rp - 1:
        units = tuple(range(2, 2 + rank - (rp - 1)))
        coefficients = f"np.expand_dims({coefficients}, {units})"
    return f"np.polyval({coefficients}, {x_text})"


@batch_rule("polyder")
def polyder_rule(b: Batch, s: Let) -> str:
    """Each example's coefficients times the factors ``np.polyder(ones, m)``."""
    only_first_batched(b, s)
    p, m = atom_text(s.args[0]), _static(b, s, "m", 1)
    n = f"np.shape({p})[1]"
    return f"{p}[:, :{n} - {m}] * np.polyder(np.ones({n}), {m})"


@batch_rule("polyint")
def polyint_rule(b: Batch, s: Let) -> str:
    """Each example's coefficients times ``np.polyint(ones, m)``'s, moved into the
    longer result, plus the constants (the same for every example)."""
    refuse_k = operand(s, "k")
    if isinstance(refuse_k, Var) and b.batched(refuse_k):
        raise NoBatchRule("np.polyint with constants k that differ per example")
    p, m = atom_text(s.args[0]), _static(b, s, "m", 1)
    n = f"np.shape({p})[1]"
    k = "" if refuse_k is None else f", k={atom_text(refuse_k)}"
    return (f"({p} * np.polyint(np.ones({n}), {m})[:{n}]) @ np.eye({n}, {n} + {m})"
            f" + np.polyint(np.zeros({n}), {m}{k})")


@batch_rule("polyadd", "polysub")
def polyadd_rule(b: Batch, s: Let) -> str:
    """Each operand moved to the end of the longer length by a 0/1 matrix, then added
    (subtracted); an unbatched 1-D operand broadcasts over the batch."""
    a1, a2 = (atom_text(a) for a in s.args)
    n1, n2 = f"np.shape({a1})[-1]", f"np.shape({a2})[-1]"
    length = f"max({n1}, {n2})"
    op = "+" if s.prim == "polyadd" else "-"
    return (f"{_paren(a1)} @ np.eye({n1}, {length}, {length} - {n1}) {op} "
            f"{_paren(a2)} @ np.eye({n2}, {length}, {length} - {n2})")


@batch_rule("linalg.cond")
def cond_rule(b: Batch, s: Let) -> str:
    """np.linalg.cond works on stacks of matrices."""
    only_first_batched(b, s)
    return args_text(s, [atom_text(a) for a in s.args])


@batch_rule("linalg.tensorinv")
def tensorinv_rule(b: Batch, s: Let) -> str:
    """Each example reshaped to its square matrix, a stack inverted, reshaped back."""
    only_first_batched(b, s)
    a, ind = atom_text(s.args[0]), _static(b, s, "ind", 2)
    n = b.use_batch_size()
    rows = f"int(np.prod(np.shape({a})[1:{ind + 1}]))"
    inv = f"np.linalg.inv(np.reshape({a}, ({n}, {rows}, -1)))"
    return (f"np.reshape({inv}, ({n}, *np.shape({a})[{ind + 1}:], "
            f"*np.shape({a})[1:{ind + 1}]))")


@batch_rule("linalg.tensorsolve")
def tensorsolve_rule(b: Batch, s: Let) -> str:
    """A stack of square systems, one per example, solved for one column each."""
    a, rhs = s.args
    n = b.use_batch_size()
    at, bt = _with_batch(b, a), _with_batch(b, rhs)
    square = f"np.reshape({at}, ({n}, np.size({bt}) // {n}, -1))"
    solved = f"np.linalg.solve({square}, np.reshape({bt}, ({n}, -1, 1)))"
    return f"np.reshape({solved}, ({n}, *np.shape({at})[{1 + b.rank(rhs)}:]))"


@batch_rule("convolve", "correlate")
def convolve_rule(b: Batch, s: Let) -> str:
    """Per example, the full convolution as an einsum with the 0/1 tensor
    ``T[i, j, k] = (k == i + j)``, then the mode's window; correlate convolves with
    ``v`` reversed."""
    a, v = s.args
    mode = _static(b, s, "mode", "valid" if s.prim == "correlate" else "full")
    at, vt = atom_text(a), atom_text(v)
    if s.prim == "correlate":
        vt = f"np.flip({vt}, axis=-1)"
    n, m = f"np.shape({at})[-1]", f"np.shape({vt})[-1]"
    full = f"({n} + {m} - 1)"
    tensor = (f"(np.arange({full}) == np.arange({n})[:, None, None] + "
              f"np.arange({m})[None, :, None])")
    spec = ("bi," if b.batched(a) else "i,") + ("bj," if b.batched(v) else "j,")
    out = f"np.einsum('{spec}ijk->bk', {at}, {vt}, {tensor})"
    if mode == "full":
        return out
    if mode == "same":
        length = f"max({n}, {m})"
        offset = f"({full} - {length}) // 2"
    else:
        length = f"(abs({n} - {m}) + 1)"
        offset = f"(min({n}, {m}) - 1)"
    return f"{out}[:, {offset}:{offset} + {length}]"


batch_rule("polymul")(convolve_rule)  # np.convolve's full mode
