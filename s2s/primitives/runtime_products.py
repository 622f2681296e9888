"""The runtime's product helpers as primitives: the cotangents of products of two
arrays (``matmul_lhs_bar``, ``dot_rhs_bar``, ...: bilinear in the cotangent and the
other operand) and of operand lists (``einsum_bars``, ``multi_dot_bars``), with their
rules (see :mod:`s2s.primitives.runtime_prims` for the conventions).
"""

from typing import Any

import numpy as np

from .. import runtime
from ..ir.nodes import Let, Var
from ..ir.spelling import atom_text
from ..runtime import (
    add_each,
    dot_lhs_bar,
    dot_rhs_bar,
    einsum_bars,
    einsum_tangent,
    inner_lhs_bar,
    inner_rhs_bar,
    kron_lhs_bar,
    kron_rhs_bar,
    matmul_lhs_bar,
    matmul_rhs_bar,
    multi_dot_bars,
    multi_dot_tangent,
    only_at,
    tensordot_lhs_bar,
    tensordot_rhs_bar,
)
from .batching import (
    LETTERS,
    Batch,
    NoBatchRule,
    _array_text,
    _einsum,
    _einsum_terms,
    _items,
    _kind_is_list,
    _known,
    _letter,
    _listed,
    _operand_rank,
    _paren,
    _repeat,
    _seq_texts,
    _tensordot_axes,
    _tensordot_terms,
    _with_batch,
    align,
    args_text,
    batch_rule,
    shifted,
)
from .registry import call_spelling, defbilinear, defjvp, deflinear, defprim, defvjp
from .runtime_prims import _defhelper

# ---- products of two arrays: bilinear in the cotangent and the other operand -------

_defhelper("matmul_lhs_bar", "(cot, x1, x2)", diff=("cot", "x2"),
           note="x1 gives only a shape")


@defvjp("matmul_lhs_bar")
def matmul_lhs_bar_vjp(g, ans, cot, x1, x2):
    return g @ x2, matmul_rhs_bar(cot, g, x2)


defbilinear("matmul_lhs_bar", "cot", "x2")


def _matmul_bar(b: Batch, s: Let, lhs: bool) -> str:
    """``x1 @ x2``'s cotangents, batched, from the per-example ranks: vectors are
    handled by their own products, matrices by a batched ``@``."""
    g, x1, x2 = s.args
    r1, r2 = b.rank(x1), b.rank(x2)
    if r1 == 1 and r2 == 1:  # an inner product: g is a scalar per example
        other = x2 if lhs else x1
        return f"{align(b, g, 1)} * {align(b, other, 1)}"
    target = x1 if lhs else x2
    rg = b.rank(g)
    if lhs and r1 == 1:  # (n,) @ (..., n, m): x2 @ g[..., None], summed over the stack
        stack = max(r2 - 2, rg - 1)
        full = (f"({align(b, x2, stack + 2)} @ {align(b, g, stack + 1)}[..., None])"
                "[..., 0]")
        rank_full = stack + 1
    elif not lhs and r2 == 1:  # (..., k, n) @ (n,): swap(x1) @ g[..., None]
        stack = max(r1 - 2, rg - 1)
        swapped = f"np.swapaxes({align(b, x1, stack + 2)}, -1, -2)"
        full = f"({swapped} @ {align(b, g, stack + 1)}[..., None])[..., 0]"
        rank_full = stack + 1
    elif lhs and r2 == 1:  # (..., k, n) @ (n,): g[..., None] * x2
        rank_full = max(r1, rg + 1)
        full = f"{align(b, g, rank_full - 1)}[..., None] * {align(b, x2, rank_full)}"
    elif not lhs and r1 == 1:  # (n,) @ (..., n, m): x1[:, None] * g[..., None, :]
        rank_full = max(r2, rg + 1)
        full = (f"{align(b, x1, rank_full - 1)}[..., None] * "
                f"{align(b, g, rank_full - 1)}[..., None, :]")
    else:
        rank_full = max(r1, r2, rg)
        if lhs:
            full = (f"{align(b, g, rank_full)} @ "
                    f"np.swapaxes({align(b, x2, rank_full)}, -1, -2)")
        else:
            full = (f"np.swapaxes({align(b, x1, rank_full)}, -1, -2) @ "
                    f"{align(b, g, rank_full)}")
    extra = rank_full - b.rank(target)
    if extra > 0:  # the operand was broadcast over a stack: sum it back
        axes = tuple(range(1, extra + 1))
        full = f"np.sum({full}, axis={axes[0] if extra == 1 else axes})"
    return f"unbroadcast({full}, {_with_batch(b, target)})"


@batch_rule("matmul_lhs_bar")
def matmul_lhs_bar_rule(b: Batch, s: Let) -> str:
    return _matmul_bar(b, s, lhs=True)


_defhelper("matmul_rhs_bar", "(cot, x1, x2)", diff=("cot", "x1"),
           note="x2 gives only a shape")


@defvjp("matmul_rhs_bar")
def matmul_rhs_bar_vjp(g, ans, cot, x1, x2):
    return x1 @ g, matmul_lhs_bar(cot, x1, g)


defbilinear("matmul_rhs_bar", "cot", "x1")


@batch_rule("matmul_rhs_bar")
def matmul_rhs_bar_rule(b: Batch, s: Let) -> str:
    return _matmul_bar(b, s, lhs=False)


_defhelper("dot_lhs_bar", "(cot, x1, x2)", diff=("cot", "x2"),
           note="x1 gives only a shape")


@defvjp("dot_lhs_bar")
def dot_lhs_bar_vjp(g, ans, cot, x1, x2):
    return np.dot(g, x2), dot_rhs_bar(cot, g, x2)


defbilinear("dot_lhs_bar", "cot", "x2")


_defhelper("dot_rhs_bar", "(cot, x1, x2)", diff=("cot", "x1"),
           note="x2 gives only a shape")


@defvjp("dot_rhs_bar")
def dot_rhs_bar_vjp(g, ans, cot, x1, x2):
    return np.dot(x1, g), dot_lhs_bar(cot, x1, g)


defbilinear("dot_rhs_bar", "cot", "x1")


def _scalar_operand_bar(b: Batch, s: Let, lhs: bool) -> str:
    """The cotangent of one operand of a product with a scalar operand (np.dot,
    np.inner): the output's cotangent times the other operand, summed where the
    target is the scalar."""
    g, x1, x2 = s.args
    target, other = (x1, x2) if lhs else (x2, x1)
    if not (b.batched(g) or b.batched(other)):  # only the shape-giving one is
        one = [f"{atom_text(a)}[0]" if b.batched(a) else atom_text(a) for a in s.args]
        return _repeat(b, args_text(s, one))
    rank = max(b.rank(g), b.rank(other))
    product = f"{align(b, g, rank)} * {align(b, other, rank)}"
    if b.rank(target) == 0 and rank > 0:
        return f"np.sum({product}, axis={shifted(None, rank)})"
    return product


@batch_rule("dot_lhs_bar", "dot_rhs_bar")
def dot_bars_rule(b: Batch, s: Let) -> str:
    """``np.dot``'s cotangents: with a scalar operand, the product with the other
    (summed if the target is the scalar); up to two axes, ``@``'s; beyond, the
    cotangents of the tensordot ``dot`` is."""
    g, x1, x2 = s.args
    lhs = s.prim == "dot_lhs_bar"
    r1, r2 = b.rank(x1), b.rank(x2)
    if r1 == 0 or r2 == 0:
        return _scalar_operand_bar(b, s, lhs)
    if r1 <= 2 and r2 <= 2:
        return dot_bar_rule(b, s)
    return _tensordot_bar(b, s, lhs, ([r1 - 1], [r2 - 2 if r2 >= 2 else 0]))


_defhelper("inner_lhs_bar", "(cot, a, b)", diff=("cot", "b"),
           note="a gives only a shape")


@defvjp("inner_lhs_bar")
def inner_lhs_bar_vjp(g, ans, cot, a, b):
    return np.inner(g, b), inner_rhs_bar(cot, g, b)


defbilinear("inner_lhs_bar", "cot", "b")


_defhelper("inner_rhs_bar", "(cot, a, b)", diff=("cot", "a"),
           note="b gives only a shape")


@defvjp("inner_rhs_bar")
def inner_rhs_bar_vjp(g, ans, cot, a, b):
    return np.inner(a, g), inner_lhs_bar(cot, a, g)


defbilinear("inner_rhs_bar", "cot", "a")


@batch_rule("inner_lhs_bar", "inner_rhs_bar")
def inner_bars_rule(b: Batch, s: Let) -> str:
    """``np.inner``'s cotangents: with a scalar operand, the product with the other
    (summed if the target is the scalar); else the cotangents of the tensordot of the
    last axes."""
    g, x1, x2 = s.args
    r1, r2 = b.rank(x1), b.rank(x2)
    if r1 == 0 or r2 == 0:
        return _scalar_operand_bar(b, s, s.prim == "inner_lhs_bar")
    return _tensordot_bar(b, s, s.prim == "inner_lhs_bar", ([r1 - 1], [r2 - 1]))


_defhelper("tensordot_lhs_bar", "(cot, a, b, axes)", diff=("cot", "b"),
           note="a gives only a shape")


@defvjp("tensordot_lhs_bar")
def tensordot_lhs_bar_vjp(g, ans, cot, a, b, axes):
    return np.tensordot(g, b, axes), tensordot_rhs_bar(cot, g, b, axes)


defbilinear("tensordot_lhs_bar", "cot", "b")


_defhelper("tensordot_rhs_bar", "(cot, a, b, axes)", diff=("cot", "a"),
           note="b gives only a shape")


@defvjp("tensordot_rhs_bar")
def tensordot_rhs_bar_vjp(g, ans, cot, a, b, axes):
    return np.tensordot(a, g, axes), tensordot_lhs_bar(cot, a, g, axes)


defbilinear("tensordot_rhs_bar", "cot", "a")


def _tensordot_bar(b: Batch, s: Let, lhs: bool, axes: Any) -> str:
    """The cotangent of one operand of ``np.tensordot(a, b, axes)``: the einsum of
    the output's cotangent with the other operand, to the operand's letters."""
    g, a, y = s.args[:3]
    ta, tb, out = _tensordot_terms(b.rank(a), b.rank(y), axes)
    if lhs:
        terms, atoms, target = [out, tb], [g, y], ta
    else:
        terms, atoms, target = [ta, out], [a, g], tb
    if not any(b.batched(x) for x in atoms):  # only the shape-giving operand is
        return _repeat(b, f"np.einsum({','.join(terms) + '->' + target!r}, "
                          f"{', '.join(atom_text(x) for x in atoms)})")
    return _einsum(b, terms, target, atoms)


@batch_rule("tensordot_lhs_bar", "tensordot_rhs_bar")
def tensordot_bar_rule(b: Batch, s: Let) -> str:
    return _tensordot_bar(b, s, s.prim == "tensordot_lhs_bar", _tensordot_axes(b, s))


_defhelper("kron_lhs_bar", "(cot, a, b)", diff=("cot", "b"),
           note="a gives only a shape")


@defvjp("kron_lhs_bar")
def kron_lhs_bar_vjp(g, ans, cot, a, b):
    return np.kron(g, b), kron_rhs_bar(cot, g, b)


defbilinear("kron_lhs_bar", "cot", "b")


_defhelper("kron_rhs_bar", "(cot, a, b)", diff=("cot", "a"),
           note="b gives only a shape")


@defvjp("kron_rhs_bar")
def kron_rhs_bar_vjp(g, ans, cot, a, b):
    return np.kron(a, g), kron_lhs_bar(cot, a, g)


defbilinear("kron_rhs_bar", "cot", "a")


@batch_rule("kron_lhs_bar", "kron_rhs_bar")
def kron_bar_rule(b: Batch, s: Let) -> str:
    """``np.kron``'s cotangents: the cotangent cut into blocks (one axis pair per
    axis: the target's index, the other's), times the other operand spread over the
    pairs, summed over the other's axes.  The shape-giving operand is viewed with a
    batch axis; ranks are padded with leading length-1 axes, as ``np.kron`` does."""
    g, x, y = s.args
    lhs = s.prim == "kron_lhs_bar"
    nd = max(_operand_rank(b, x), _operand_rank(b, y))

    def spread(atom: Any, first: bool, target: bool) -> str:
        pad = nd - _operand_rank(b, atom)
        pairs = ", None, None" * pad + (", :, None" if first else ", None, :") * (
            nd - pad)
        if b.batched(atom) or target:
            return f"{_paren(_with_batch(b, atom))}[:{pairs}]"
        return f"{_paren(_array_text(atom))}[{pairs[2:]}]"

    xs, ys = spread(x, True, lhs), spread(y, False, not lhs)
    shape = f"np.broadcast_shapes(np.shape({xs}), np.shape({ys}))"
    blocks = f"np.reshape({_with_batch(b, g)}, {shape})"
    other, axes = (ys, range(2, 2 * nd + 1, 2)) if lhs else (xs, range(1, 2 * nd, 2))
    axes = tuple(axes)
    bar = f"np.sum({blocks} * {other}, axis={axes[0] if nd == 1 else axes})"
    target = x if lhs else y
    if b.rank(target) < nd:
        bar = f"np.reshape({bar}, np.shape({_with_batch(b, target)}))"
    return bar


# ---- products of several arrays: operand lists -----------------------------------
# einsum_bar(cot, s, operands, k) is the derivative of <cot, einsum(s, *operands)>
# with respect to operands[k]: multilinear in cot and the other operands, and
# independent of operands[k]'s values (its derivative for that one is 0).
#
# Every derivative of these products is again one: einsum_tangent(s, operands, *ts)
# is the einsum differentiated once along each direction t (a list like operands),
# and einsum_bars(cot, s, operands, *ts) the cotangents of that (no directions: the
# einsum's own).  The rules only add a direction, or swap one for the cotangent, so
# the family is closed; a rule's directions are a literal tuple (the varargs), and
# the inliner unrolls the comprehensions over them: the emitted code names each.
# multi_dot_tangent and multi_dot_bars are the same family for multi_dot's chain.

_defhelper("einsum_bar", "(cot, subscripts, operands, k)", diff=("cot", "operands"),
           note="operands a list; operands[k] gives only a shape")


@defvjp("einsum_bar")
def einsum_bar_vjp(g, ans, cot, subscripts, operands, k):
    # g is the cotangent of operand k: a direction that moves that operand only
    direction = only_at(operands, k, g)
    return (einsum_tangent(subscripts, operands, direction),
            einsum_bars(cot, subscripts, operands, direction))


deflinear("einsum_bar", "cot")


@defjvp("einsum_bar", "operands")
def einsum_bar_jvp_operands(operands_dot, ans, cot, subscripts, operands, k):
    return einsum_bars(cot, subscripts, operands, operands_dot)[k]


@batch_rule("einsum_bar")
def einsum_bar_rule(b: Batch, s: Let) -> str:
    """``einsum_bar`` on subscripts with a batch letter: on the cotangent's and every
    batched operand's, and on the target operand's (viewed with a batch axis, since
    the cotangent it receives differs between examples)."""
    g, spec, operands, k = s.args
    spec, k = _known(b, spec), _known(b, k)
    if not isinstance(spec, str) or not isinstance(k, int):
        raise NoBatchRule("einsum_bar with subscripts or an operand index computed when "
                          "the code runs")
    items = _items(b, operands)
    terms, output = _einsum_terms(spec)
    z = _letter(spec)
    texts, parts = [], []
    for j, (t, a) in enumerate(zip(terms, items)):
        if b.batched(a) or j == k:
            texts.append(_with_batch(b, a))
            parts.append(z + t)
        else:
            texts.append(atom_text(a))
            parts.append(t)
    new = ",".join(parts) + "->" + z + output
    return f"einsum_bar({_with_batch(b, g)}, {new!r}, [{', '.join(texts)}], {k})"


# einsum_bars(cot, s, operands, *ts): one result per operand, as many as the
# subscripts name (a count known before it runs).


def _einsum_operand_count(args):
    if not isinstance(args.get("subscripts"), str):  # (computed when the code runs:
        return len(args["operands"])                  # `"ijk"[:a.ndim] + "->"`)
    return args["subscripts"].split("->")[0].count(",") + 1


defprim("einsum_bars", runtime.einsum_bars, "(cot, subscripts, operands, *tangents)",
        family="runtime", spelling=call_spelling("einsum_bars"),
        diff=("cot", "operands", "tangents"), results=_einsum_operand_count,
        note="operands and each tangent a list; a tuple of one cotangent per operand")


@defvjp("einsum_bars")
def einsum_bars_vjp(g, ans, cot, subscripts, operands, *tangents):
    # g: one cotangent per result, itself a direction; the form is symmetric in its
    # directions, so each tangent's cotangent swaps it for g
    return (
        einsum_tangent(subscripts, operands, g, *tangents),
        einsum_bars(cot, subscripts, operands, g, *tangents),
        tuple(einsum_bars(cot, subscripts, operands, *tangents[:i], g, *tangents[i + 1:])
              for i in range(len(tangents))),
    )


@defjvp("einsum_bars", "cot")
def einsum_bars_jvp_cot(cot_dot, ans, cot, subscripts, operands, *tangents):
    return einsum_bars(cot_dot, subscripts, operands, *tangents)


@defjvp("einsum_bars", "operands")
def einsum_bars_jvp_operands(operands_dot, ans, cot, subscripts, operands, *tangents):
    return einsum_bars(cot, subscripts, operands, operands_dot, *tangents)


@defjvp("einsum_bars", "tangents")
def einsum_bars_jvp_tangents(tangents_dot, ans, cot, subscripts, operands, *tangents):
    return add_each(*(
        einsum_bars(cot, subscripts, operands, *tangents[:i], tangents_dot[i],
                    *tangents[i + 1:])
        for i in range(len(tangents))
    ))


@batch_rule("einsum_bars")
def einsum_bars_rule(b: Batch, s: Let) -> str:
    """``einsum_bars`` on subscripts with a batch letter on the cotangent's and every
    operand's (each operand's cotangent differs between examples) and the output's;
    directions, where given, are batched as the operands are."""
    g, spec, operands = s.args[:3]
    new = _batched_spec_text(b, spec, "einsum_bars")
    ops = _listed(_seq_texts(b, operands, "einsum_bars"))
    return (f"einsum_bars({_with_batch(b, g)}, {new}, {ops}"
            f"{_directions(b, s, 3, 'einsum_bars')})")


_defhelper("einsum_tangent", "(subscripts, operands, *tangents)",
           diff=("operands", "tangents"),
           note="operands and each tangent a list; multilinear in all of them")


@defvjp("einsum_tangent")
def einsum_tangent_vjp(g, ans, subscripts, operands, *tangents):
    return einsum_bars(g, subscripts, operands, *tangents), tuple(
        einsum_bars(g, subscripts, operands, *tangents[:i], *tangents[i + 1:])
        for i in range(len(tangents))
    )


@defjvp("einsum_tangent", "operands")
def einsum_tangent_jvp_operands(operands_dot, ans, subscripts, operands, *tangents):
    return einsum_tangent(subscripts, operands, operands_dot, *tangents)


@defjvp("einsum_tangent", "tangents")
def einsum_tangent_jvp_tangents(tangents_dot, ans, subscripts, operands, *tangents):
    return sum(
        einsum_tangent(subscripts, operands, *tangents[:i], tangents_dot[i],
                       *tangents[i + 1:])
        for i in range(len(tangents))
    )


def _batched_spec_text(b: Batch, spec: Any, what: str) -> str:
    """The text of ``spec``'s subscripts with a batch label on every operand: a
    literal where they are known now, else ``einsum_batched(name)``, which puts it
    on them when the code runs (a string argument: per call)."""
    known = _known(b, spec)
    if isinstance(known, str):
        return repr(_batched_einsum_spec(known))
    if not isinstance(spec, Var) or b.batched(spec):
        raise NoBatchRule(f"{what} with subscripts that are not a string")
    return f"einsum_batched({spec.name})"


def _batched_einsum_spec(spec: str) -> str:
    """Subscripts with a batch letter on every operand (and the output): the
    directions of einsum_tangent/einsum_bars replace operands, so all are batched."""
    terms, output = _einsum_terms(spec)
    z = _letter(spec)
    return ",".join(z + t for t in terms) + "->" + z + output


def _chain_spec(ranks: list[int]) -> str:
    """multi_dot's chain of arrays as einsum subscripts (1-D ends: a row, a column)."""
    n = len(ranks)
    letters = LETTERS[: n + 1]
    terms = [letters[i: i + 2] for i in range(n)]
    if ranks[0] == 1:
        terms[0] = terms[0][1]
    if ranks[-1] == 1:
        terms[-1] = terms[-1][0]
    out = (letters[0] if ranks[0] != 1 else "") + (letters[n] if ranks[-1] != 1 else "")
    return ",".join(terms) + "->" + out


def _directions(b: Batch, s: Let, first: int, what: str) -> str:
    return "".join(", " + _listed(_seq_texts(b, t, what)) for t in s.args[first:])


@batch_rule("einsum_tangent")
def einsum_tangent_rule(b: Batch, s: Let) -> str:
    """The einsum's derivative with a batch letter on every operand and direction."""
    spec, operands = s.args[:2]
    new = _batched_spec_text(b, spec, "einsum_tangent")
    ops = _listed(_seq_texts(b, operands, "einsum_tangent"))
    return f"einsum_tangent({new}, {ops}{_directions(b, s, 2, 'einsum_tangent')})"


# multi_dot_bars(cot, arrays, *ts)[j] is the derivative of
# <cot, multi_dot_tangent(arrays, *ts)> with respect to arrays[j]; one array per
# operand (a list).

defprim("multi_dot_bars", runtime.multi_dot_bars, "(cot, arrays, *tangents)",
        family="runtime", spelling=call_spelling("multi_dot_bars"),
        diff=("cot", "arrays", "tangents"), results=lambda args: len(args["arrays"]),
        note="arrays and each tangent a list; returns a list (one cotangent per array)")


@defvjp("multi_dot_bars")
def multi_dot_bars_vjp(g, ans, cot, arrays, *tangents):
    return (
        multi_dot_tangent(arrays, g, *tangents),
        multi_dot_bars(cot, arrays, g, *tangents),
        tuple(multi_dot_bars(cot, arrays, *tangents[:i], g, *tangents[i + 1:])
              for i in range(len(tangents))),
    )


@defjvp("multi_dot_bars", "cot")
def multi_dot_bars_jvp_cot(cot_dot, ans, cot, arrays, *tangents):
    return multi_dot_bars(cot_dot, arrays, *tangents)


@defjvp("multi_dot_bars", "arrays")
def multi_dot_bars_jvp_arrays(arrays_dot, ans, cot, arrays, *tangents):
    return multi_dot_bars(cot, arrays, arrays_dot, *tangents)


@defjvp("multi_dot_bars", "tangents")
def multi_dot_bars_jvp_tangents(tangents_dot, ans, cot, arrays, *tangents):
    return add_each(*(
        multi_dot_bars(cot, arrays, *tangents[:i], tangents_dot[i], *tangents[i + 1:])
        for i in range(len(tangents))
    ))


@batch_rule("multi_dot_bars")
def multi_dot_bars_rule(b: Batch, s: Let) -> str:
    """Each array's cotangent ``left.T @ g @ right.T`` (left, right: the products of
    the arrays before and after it) with batched ``@``; 1-D ends as a row and a
    column, as ``multi_dot`` reads them."""
    g, arrays = s.args[:2]
    if len(s.args) > 2:  # with directions: einsum_bars of the chain
        spec = _batched_einsum_spec(_chain_spec(_chain_ranks(b, arrays, s.prim)))
        ops = _listed(_seq_texts(b, arrays, s.prim))
        return (f"einsum_bars({_with_batch(b, g)}, {spec!r}, {ops}"
                f"{_directions(b, s, 2, s.prim)})")
    items = _items(b, arrays)
    first, last = b.rank(items[0]) == 1, b.rank(items[-1]) == 1
    mats = [atom_text(a) for a in items]
    if first:  # (np.expand_dims, not [..., None, :]: the array may be a constant)
        mats[0] = f"np.expand_dims({mats[0]}, -2)"
    if last:
        mats[-1] = f"np.expand_dims({mats[-1]}, -1)"
    axes = {(True, True): "(-2, -1)", (True, False): "-2", (False, True): "-1"}.get(
        (first, last))
    g_text = atom_text(g) if axes is None else f"np.expand_dims({atom_text(g)}, {axes})"
    bars = []
    for k, a in enumerate(items):
        chain = [g_text]
        if k > 0:
            chain.insert(0, f"np.matrix_transpose({' @ '.join(mats[:k])})")
        if k < len(items) - 1:
            chain.append(f"np.matrix_transpose({' @ '.join(mats[k + 1:])})")
        bar = " @ ".join(chain)
        if k == 0 and first:
            bar = f"({bar})[..., 0, :]"
        elif k == len(items) - 1 and last:
            bar = f"({bar})[..., 0]"
        others = [g] + [x for j, x in enumerate(items) if j != k]
        bars.append(bar if any(b.batched(x) for x in others) else _repeat(b, bar))
    if _kind_is_list(b, s.target):
        return "[" + ", ".join(bars) + "]"
    if len({b.rank(a) for a in items}) > 1:
        raise NoBatchRule(
            "multi_dot_bars read as one array (its arrays' cotangents stacked): "
            "arrays of different ranks have no stacked batched form")
    return "np.stack([" + ", ".join(bars) + "], axis=1)"  # read as one array


_defhelper("multi_dot_tangent", "(arrays, *tangents)", diff=("arrays", "tangents"),
           note="arrays and each tangent a list; multilinear in all of them")


@defvjp("multi_dot_tangent")
def multi_dot_tangent_vjp(g, ans, arrays, *tangents):
    return multi_dot_bars(g, arrays, *tangents), tuple(
        multi_dot_bars(g, arrays, *tangents[:i], *tangents[i + 1:])
        for i in range(len(tangents))
    )


@defjvp("multi_dot_tangent", "arrays")
def multi_dot_tangent_jvp_arrays(arrays_dot, ans, arrays, *tangents):
    return multi_dot_tangent(arrays, arrays_dot, *tangents)


@defjvp("multi_dot_tangent", "tangents")
def multi_dot_tangent_jvp_tangents(tangents_dot, ans, arrays, *tangents):
    return sum(
        multi_dot_tangent(arrays, *tangents[:i], tangents_dot[i], *tangents[i + 1:])
        for i in range(len(tangents))
    )


def _chain_ranks(b: Batch, arrays: Any, what: str) -> list[int]:
    items = getattr(b, "items", {}).get(arrays.name) if isinstance(arrays, Var) else None
    if items is None:
        raise NoBatchRule(f"`{what}` of a list the function did not build",
                          "build the list in the function: [x, y]")
    return [b.rank(a) for a in items]


@batch_rule("multi_dot_tangent")
def multi_dot_tangent_rule(b: Batch, s: Let) -> str:
    """multi_dot's derivative as the einsum of its chain, a batch letter on all."""
    arrays = s.args[0]
    spec = _batched_einsum_spec(_chain_spec(_chain_ranks(b, arrays, s.prim)))
    ops = _listed(_seq_texts(b, arrays, s.prim))
    return f"einsum_tangent({spec!r}, {ops}{_directions(b, s, 1, s.prim)})"


# only_at(items, k, value): value in place k, zeros elsewhere (linear in value);
# add_each(first, *rest): tuples added item by item (linear in each)

defprim("only_at", runtime.only_at, "(items, k, value)", family="runtime",
        spelling=call_spelling("only_at"), diff=("value",),
        results=lambda args: len(args["items"]),
        note="items give only shapes; a tuple, value in place k")


@defvjp("only_at")
def only_at_vjp(g, ans, items, k, value):
    return g[k]


deflinear("only_at", "value")


@batch_rule("only_at")
def only_at_rule(b: Batch, s: Let) -> str:
    """The value in its place, zeros shaped like the batched items elsewhere."""
    items, k, value = s.args
    k = _known(b, k)
    if not isinstance(k, int):
        raise NoBatchRule("only_at with a place computed when the code runs")
    texts = _listed(_seq_texts(b, items, "only_at"))
    return f"only_at({texts}, {k}, {_with_batch(b, value)})"


defprim("add_each", runtime.add_each, "(first, *rest)", family="runtime",
        spelling=call_spelling("add_each"), diff=("first", "rest"),
        results=lambda args: len(args["first"]),
        note="tuples of arrays, added item by item")


@defvjp("add_each")
def add_each_vjp(g, ans, first, *rest):
    return g, tuple(g for _ in rest)


@defjvp("add_each", "first")
def add_each_jvp_first(first_dot, ans, first, *rest):
    return first_dot


@defjvp("add_each", "rest")
def add_each_jvp_rest(rest_dot, ans, first, *rest):
    return add_each(*rest_dot)


@batch_rule("add_each")
def add_each_rule(b: Batch, s: Let) -> str:
    """Tuples added item by item, each item with the batch axis."""
    parts = [_listed(_seq_texts(b, a, "add_each")) for a in s.args]
    return f"add_each({', '.join(parts)})"


# ---- batching ----------------------------------------------------------------


def dot_bar_rule(b: Batch, s: Let) -> str:
    g, x1, x2 = s.args
    if b.rank(x1) == 0 or b.rank(x2) == 0 or b.rank(x1) > 2 or b.rank(x2) > 2:
        raise NoBatchRule(f"`{s.prim}` of a scalar or an array of more than two axes")
    return _matmul_bar(b, s, lhs=s.prim == "dot_lhs_bar")
