"""The runtime's helpers (``s2s/runtime.py``) as primitives, with their own rules.

Emitted derivative code calls these helpers (``from s2s.runtime import
unbroadcast``); a second derivative transforms that code again, so each helper is a
primitive like NumPy's, spelled by its bare name, with a VJP rule and a JVP rule per
parameter that carries a derivative.  Every rule is written with NumPy and these
helpers only, so the set is closed: the derivative of a rule is again made of rules.

Parameters that only give a shape, a rank or an axis (``x`` in ``unbroadcast(g, x)``,
``x1`` in ``matmul_lhs_bar(g, x1, x2)``) carry no derivative: the helper's value does
not depend on their values.  A helper's incoming cotangent is named ``cot`` here (a
rule's own cotangent is ``g``).

The *_bar helpers are bilinear: ``matmul_lhs_bar(cot, x1, x2)`` is the derivative of
``<cot, x1 @ x2>`` with respect to ``x1``, so its cotangent for ``cot`` is the
product with the cotangent in ``x1``'s place (``g @ x2``) and its cotangent for
``x2`` is the other operand's helper (``matmul_rhs_bar(cot, g, x2)``).

Products (``prod_of_others``, ``cumprod``) have derivatives of every order that must
stay exact where elements are 0: their rules evaluate the product on jets (truncated
Taylor polynomials, see ``runtime.cumprod_jet``).  A jet helper's JVP evaluates it on
the jet extended by one more variable (``np.concatenate([x, x_dot])``) and reads the
new half.  Its VJP reverses the coefficients (``g[::-1]``: coefficient s pairs with
its complement, as the top coefficient of a product pairs them) around the transposed
map: prod_of_others is a gradient, its Jacobian symmetric, so the same evaluation
again; cumprod's transpose is cumprod_bar, on jets ``cumprod_bar_jet``.
"""

import numpy as np

from .. import runtime
from ..runtime import (
    add_each,
    cumprod_bar,
    cumprod_bar_jet,
    cumprod_jet,
    cumprod_tangent,
    dot_lhs_bar,
    dot_rhs_bar,
    einsum_bar,
    einsum_bars,
    einsum_tangent,
    inner_lhs_bar,
    inner_rhs_bar,
    join_like,
    kron_lhs_bar,
    kron_rhs_bar,
    matmul_lhs_bar,
    matmul_rhs_bar,
    multi_dot_bars,
    multi_dot_tangent,
    only_at,
    prod_of_others_jet,
    rhs_columns,
    special_digamma,
    special_polygamma,
    split_like,
    take_along_axis_bar,
    tensordot_lhs_bar,
    tensordot_rhs_bar,
    unbroadcast,
    weights_along,
)
from .registry import call_spelling, defjvp, defprim, defvjp


def _defhelper(name, sig, diff=None, nondiff=False, note="", batch=None):
    defprim(
        name, getattr(runtime, name), sig, family="runtime",
        spelling=call_spelling(name), diff=diff, nondiff=nondiff, note=note, batch=batch,
    )


# ---- broadcasting and the seed -----------------------------------------------------

# the zero cotangent of a list no later code reads (reverse mode over ``ys.pop()``)
_defhelper("zeros_list", "(ys)", diff=(), nondiff=True,
           note="zeros shaped like a list's items: no derivative")

_defhelper("unbroadcast", "(cot, x)", diff=("cot",),
           note="x gives only a shape: no derivative for it")


@defvjp("unbroadcast")
def unbroadcast_vjp(g, ans, cot, x):
    return np.broadcast_to(g, np.shape(cot))


@defjvp("unbroadcast", "cot")
def unbroadcast_jvp(cot_dot, ans, cot, x):
    return unbroadcast(cot_dot, x)


_defhelper("grad_seed", "(out)", nondiff=True,
           note="ones_like(out): a constant, zero derivative")


# ---- products of two arrays: bilinear in the cotangent and the other operand -------

_defhelper("matmul_lhs_bar", "(cot, x1, x2)", diff=("cot", "x2"),
           note="x1 gives only a shape")


@defvjp("matmul_lhs_bar")
def matmul_lhs_bar_vjp(g, ans, cot, x1, x2):
    return g @ x2, matmul_rhs_bar(cot, g, x2)


@defjvp("matmul_lhs_bar", "cot")
def matmul_lhs_bar_jvp_cot(cot_dot, ans, cot, x1, x2):
    return matmul_lhs_bar(cot_dot, x1, x2)


@defjvp("matmul_lhs_bar", "x2")
def matmul_lhs_bar_jvp_x2(x2_dot, ans, cot, x1, x2):
    return matmul_lhs_bar(cot, x1, x2_dot)


_defhelper("matmul_rhs_bar", "(cot, x1, x2)", diff=("cot", "x1"),
           note="x2 gives only a shape")


@defvjp("matmul_rhs_bar")
def matmul_rhs_bar_vjp(g, ans, cot, x1, x2):
    return x1 @ g, matmul_lhs_bar(cot, x1, g)


@defjvp("matmul_rhs_bar", "cot")
def matmul_rhs_bar_jvp_cot(cot_dot, ans, cot, x1, x2):
    return matmul_rhs_bar(cot_dot, x1, x2)


@defjvp("matmul_rhs_bar", "x1")
def matmul_rhs_bar_jvp_x1(x1_dot, ans, cot, x1, x2):
    return matmul_rhs_bar(cot, x1_dot, x2)


_defhelper("dot_lhs_bar", "(cot, x1, x2)", diff=("cot", "x2"),
           note="x1 gives only a shape")


@defvjp("dot_lhs_bar")
def dot_lhs_bar_vjp(g, ans, cot, x1, x2):
    return np.dot(g, x2), dot_rhs_bar(cot, g, x2)


@defjvp("dot_lhs_bar", "cot")
def dot_lhs_bar_jvp_cot(cot_dot, ans, cot, x1, x2):
    return dot_lhs_bar(cot_dot, x1, x2)


@defjvp("dot_lhs_bar", "x2")
def dot_lhs_bar_jvp_x2(x2_dot, ans, cot, x1, x2):
    return dot_lhs_bar(cot, x1, x2_dot)


_defhelper("dot_rhs_bar", "(cot, x1, x2)", diff=("cot", "x1"),
           note="x2 gives only a shape")


@defvjp("dot_rhs_bar")
def dot_rhs_bar_vjp(g, ans, cot, x1, x2):
    return np.dot(x1, g), dot_lhs_bar(cot, x1, g)


@defjvp("dot_rhs_bar", "cot")
def dot_rhs_bar_jvp_cot(cot_dot, ans, cot, x1, x2):
    return dot_rhs_bar(cot_dot, x1, x2)


@defjvp("dot_rhs_bar", "x1")
def dot_rhs_bar_jvp_x1(x1_dot, ans, cot, x1, x2):
    return dot_rhs_bar(cot, x1_dot, x2)


_defhelper("inner_lhs_bar", "(cot, a, b)", diff=("cot", "b"),
           note="a gives only a shape")


@defvjp("inner_lhs_bar")
def inner_lhs_bar_vjp(g, ans, cot, a, b):
    return np.inner(g, b), inner_rhs_bar(cot, g, b)


@defjvp("inner_lhs_bar", "cot")
def inner_lhs_bar_jvp_cot(cot_dot, ans, cot, a, b):
    return inner_lhs_bar(cot_dot, a, b)


@defjvp("inner_lhs_bar", "b")
def inner_lhs_bar_jvp_b(b_dot, ans, cot, a, b):
    return inner_lhs_bar(cot, a, b_dot)


_defhelper("inner_rhs_bar", "(cot, a, b)", diff=("cot", "a"),
           note="b gives only a shape")


@defvjp("inner_rhs_bar")
def inner_rhs_bar_vjp(g, ans, cot, a, b):
    return np.inner(a, g), inner_lhs_bar(cot, a, g)


@defjvp("inner_rhs_bar", "cot")
def inner_rhs_bar_jvp_cot(cot_dot, ans, cot, a, b):
    return inner_rhs_bar(cot_dot, a, b)


@defjvp("inner_rhs_bar", "a")
def inner_rhs_bar_jvp_a(a_dot, ans, cot, a, b):
    return inner_rhs_bar(cot, a_dot, b)


_defhelper("tensordot_lhs_bar", "(cot, a, b, axes)", diff=("cot", "b"),
           note="a gives only a shape")


@defvjp("tensordot_lhs_bar")
def tensordot_lhs_bar_vjp(g, ans, cot, a, b, axes):
    return np.tensordot(g, b, axes), tensordot_rhs_bar(cot, g, b, axes)


@defjvp("tensordot_lhs_bar", "cot")
def tensordot_lhs_bar_jvp_cot(cot_dot, ans, cot, a, b, axes):
    return tensordot_lhs_bar(cot_dot, a, b, axes)


@defjvp("tensordot_lhs_bar", "b")
def tensordot_lhs_bar_jvp_b(b_dot, ans, cot, a, b, axes):
    return tensordot_lhs_bar(cot, a, b_dot, axes)


_defhelper("tensordot_rhs_bar", "(cot, a, b, axes)", diff=("cot", "a"),
           note="b gives only a shape")


@defvjp("tensordot_rhs_bar")
def tensordot_rhs_bar_vjp(g, ans, cot, a, b, axes):
    return np.tensordot(a, g, axes), tensordot_lhs_bar(cot, a, g, axes)


@defjvp("tensordot_rhs_bar", "cot")
def tensordot_rhs_bar_jvp_cot(cot_dot, ans, cot, a, b, axes):
    return tensordot_rhs_bar(cot_dot, a, b, axes)


@defjvp("tensordot_rhs_bar", "a")
def tensordot_rhs_bar_jvp_a(a_dot, ans, cot, a, b, axes):
    return tensordot_rhs_bar(cot, a_dot, b, axes)


_defhelper("kron_lhs_bar", "(cot, a, b)", diff=("cot", "b"),
           note="a gives only a shape")


@defvjp("kron_lhs_bar")
def kron_lhs_bar_vjp(g, ans, cot, a, b):
    return np.kron(g, b), kron_rhs_bar(cot, g, b)


@defjvp("kron_lhs_bar", "cot")
def kron_lhs_bar_jvp_cot(cot_dot, ans, cot, a, b):
    return kron_lhs_bar(cot_dot, a, b)


@defjvp("kron_lhs_bar", "b")
def kron_lhs_bar_jvp_b(b_dot, ans, cot, a, b):
    return kron_lhs_bar(cot, a, b_dot)


_defhelper("kron_rhs_bar", "(cot, a, b)", diff=("cot", "a"),
           note="b gives only a shape")


@defvjp("kron_rhs_bar")
def kron_rhs_bar_vjp(g, ans, cot, a, b):
    return np.kron(a, g), kron_lhs_bar(cot, a, g)


@defjvp("kron_rhs_bar", "cot")
def kron_rhs_bar_jvp_cot(cot_dot, ans, cot, a, b):
    return kron_rhs_bar(cot_dot, a, b)


@defjvp("kron_rhs_bar", "a")
def kron_rhs_bar_jvp_a(a_dot, ans, cot, a, b):
    return kron_rhs_bar(cot, a_dot, b)


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


@defjvp("einsum_bar", "cot")
def einsum_bar_jvp_cot(cot_dot, ans, cot, subscripts, operands, k):
    return einsum_bar(cot_dot, subscripts, operands, k)


@defjvp("einsum_bar", "operands")
def einsum_bar_jvp_operands(operands_dot, ans, cot, subscripts, operands, k):
    return einsum_bars(cot, subscripts, operands, operands_dot)[k]


# einsum_bars(cot, s, operands, *ts): one result per operand, as many as the
# subscripts name (a count known before it runs).


def _einsum_operand_count(args):
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


# only_at(items, k, value): value in place k, zeros elsewhere (linear in value);
# add_each(first, *rest): tuples added item by item (linear in each)

defprim("only_at", runtime.only_at, "(items, k, value)", family="runtime",
        spelling=call_spelling("only_at"), diff=("value",),
        results=lambda args: len(args["items"]),
        note="items give only shapes; a tuple, value in place k")


@defvjp("only_at")
def only_at_vjp(g, ans, items, k, value):
    return g[k]


@defjvp("only_at", "value")
def only_at_jvp(value_dot, ans, items, k, value):
    return only_at(items, k, value_dot)


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


# ---- reshaping helpers: linear in their first argument ---------------------------

_defhelper("weights_along", "(weights, a, axis)", diff=("weights",),
           note="a reshape of weights; a gives only a rank")


@defvjp("weights_along")
def weights_along_vjp(g, ans, weights, a, axis):
    return np.reshape(g, np.shape(weights))


@defjvp("weights_along", "weights")
def weights_along_jvp(weights_dot, ans, weights, a, axis):
    return weights_along(weights_dot, a, axis)


_defhelper("rhs_columns", "(v, b)", diff=("v",),
           note="a reshape of v; b gives only a rank")


@defvjp("rhs_columns")
def rhs_columns_vjp(g, ans, v, b):
    return np.reshape(g, np.shape(v))


@defjvp("rhs_columns", "v")
def rhs_columns_jvp(v_dot, ans, v, b):
    return rhs_columns(v_dot, b)


_defhelper("pad_sources", "(shape, pad_width, mode)", nondiff=True,
           note="integer indices: no derivative")
_defhelper("batch_axes", "(axis, rank)", nondiff=True,
           note="axis numbers for vmap's batched arrays: no derivative")


# ---- products: exact at zeros, through jets --------------------------------------
# prod_of_others(a) is the gradient of prod(a) (per reduced group): its Jacobian is
# a Hessian, symmetric, so its VJP and JVP are one formula.

_defhelper("prod_of_others", "(a, axis=None)",
           note="the gradient of prod; its derivative through prod_of_others_jet")


@defvjp("prod_of_others")
def prod_of_others_vjp(g, ans, a, axis=None):
    return prod_of_others_jet(np.stack([a, g]), axis)[1]


@defjvp("prod_of_others", "a")
def prod_of_others_jvp(a_dot, ans, a, axis=None):
    return prod_of_others_jet(np.stack([a, a_dot]), axis)[1]


_defhelper("prod_of_others_jet", "(x, axis=None)",
           note="prod_of_others on a jet (leading axis: 2**m coefficients)")


@defvjp("prod_of_others_jet")
def prod_of_others_jet_vjp(g, ans, x, axis=None):
    out = prod_of_others_jet(np.concatenate([x, g[::-1]]), axis)
    return out[np.shape(x)[0]:][::-1]


@defjvp("prod_of_others_jet", "x")
def prod_of_others_jet_jvp(x_dot, ans, x, axis=None):
    return prod_of_others_jet(np.concatenate([x, x_dot]), axis)[np.shape(x)[0]:]


_defhelper("cumprod_bar", "(cot, a, axis=None)",
           note="second derivatives through the jets of cumprod")


@defvjp("cumprod_bar")
def cumprod_bar_vjp(g, ans, cot, a, axis=None):
    cot_jet = np.stack([cot, np.zeros_like(cot)])
    return (cumprod_tangent(g, a, axis),
            cumprod_bar_jet(cot_jet, np.stack([a, g]), axis)[1])


@defjvp("cumprod_bar", "cot")
def cumprod_bar_jvp_cot(cot_dot, ans, cot, a, axis=None):
    return cumprod_bar(cot_dot, a, axis)


@defjvp("cumprod_bar", "a")
def cumprod_bar_jvp_a(a_dot, ans, cot, a, axis=None):
    cot_jet = np.stack([cot, np.zeros_like(cot)])
    return cumprod_bar_jet(cot_jet, np.stack([a, a_dot]), axis)[1]


_defhelper("cumprod_tangent", "(v, a, axis=None)",
           note="second derivatives through the jets of cumprod")


@defvjp("cumprod_tangent")
def cumprod_tangent_vjp(g, ans, v, a, axis=None):
    g_jet = np.stack([g, np.zeros_like(g)])
    return cumprod_bar(g, a, axis), cumprod_bar_jet(g_jet, np.stack([a, v]), axis)[1]


@defjvp("cumprod_tangent", "v")
def cumprod_tangent_jvp_v(v_dot, ans, v, a, axis=None):
    return cumprod_tangent(v_dot, a, axis)


@defjvp("cumprod_tangent", "a")
def cumprod_tangent_jvp_a(a_dot, ans, v, a, axis=None):
    # the coefficient of t1 t2 in cumprod(a + t1 v + t2 a_dot)
    return cumprod_jet(np.stack([a, v, a_dot, np.zeros_like(a)]), axis)[3]


_defhelper("cumprod_jet", "(x, axis=None)",
           note="cumprod on a jet (leading axis: 2**m coefficients)")


@defvjp("cumprod_jet")
def cumprod_jet_vjp(g, ans, x, axis=None):
    return cumprod_bar_jet(g[::-1], x, axis)[::-1]


@defjvp("cumprod_jet", "x")
def cumprod_jet_jvp(x_dot, ans, x, axis=None):
    return cumprod_jet(np.concatenate([x, x_dot]), axis)[np.shape(x)[0]:]


_defhelper("cumprod_bar_jet", "(h, x, axis=None)",
           note="cumprod_bar on jets (leading axis: 2**m coefficients)")


@defvjp("cumprod_bar_jet")
def cumprod_bar_jet_vjp(g, ans, h, x, axis=None):
    n = np.shape(x)[0]
    h_bar = cumprod_jet(np.concatenate([x, g[::-1]]), axis)[n:][::-1]
    h_jet = np.concatenate([h, np.zeros_like(h)])
    x_bar = cumprod_bar_jet(h_jet, np.concatenate([x, g[::-1]]), axis)[n:][::-1]
    return h_bar, x_bar


@defjvp("cumprod_bar_jet", "h")
def cumprod_bar_jet_jvp_h(h_dot, ans, h, x, axis=None):
    return cumprod_bar_jet(h_dot, x, axis)


@defjvp("cumprod_bar_jet", "x")
def cumprod_bar_jet_jvp_x(x_dot, ans, h, x, axis=None):
    h_jet = np.concatenate([h, np.zeros_like(h)])
    return cumprod_bar_jet(h_jet, np.concatenate([x, x_dot]), axis)[np.shape(x)[0]:]


# ---- norms: derivatives of the gradients of norms ---------------------------------
# ``norm`` (the norm, reduced axes kept) is an argument of its own: x / norm depends
# on it.  The orders whose gradient is piecewise constant (1, inf, -inf, 0 for
# vectors; 1, -1, inf, -inf for matrices) have derivative 0 (JAX's: the derivative
# of sign is 0).  The nuclear and spectral norms' gradients u w v^T (w: 1 for each
# singular value, or the extreme one's share) do not depend on ``norm``; their
# derivative, from the SVD's, needs distinct nonzero singular values.  Tests over
# ``ord`` and ``axis`` are decided while inlining (``ord > 1e308``: ord is inf).

_defhelper("vector_norm_grad", "(x, norm, ord, axis=None)", diff=("x", "norm"),
           note="ord 0, 1 and +-inf: piecewise constant, zero derivative")


@defvjp("vector_norm_grad")
def vector_norm_grad_vjp(g, ans, x, norm, ord, axis=None):
    if ord is None or ord == 2:
        return g / norm, unbroadcast(-g * ans / norm, norm)
    if ord == 0 or ord == 1 or ord > 1e308 or ord < -1e308:
        return np.zeros(np.shape(x)), np.zeros(np.shape(norm))
    return (
        g * (ord - 1) * (np.abs(x) / norm) ** (ord - 2) / norm,
        unbroadcast(-(ord - 1) * g * ans / norm, norm),
    )


@defjvp("vector_norm_grad", "x")
def vector_norm_grad_jvp_x(x_dot, ans, x, norm, ord, axis=None):
    if ord is None or ord == 2:
        return x_dot / norm
    if ord == 0 or ord == 1 or ord > 1e308 or ord < -1e308:
        return np.zeros(np.shape(x))
    return x_dot * (ord - 1) * (np.abs(x) / norm) ** (ord - 2) / norm


@defjvp("vector_norm_grad", "norm")
def vector_norm_grad_jvp_norm(norm_dot, ans, x, norm, ord, axis=None):
    if ord is None or ord == 2:
        return -ans / norm * norm_dot
    if ord == 0 or ord == 1 or ord > 1e308 or ord < -1e308:
        return np.zeros(np.shape(x))
    return -(ord - 1) * ans / norm * norm_dot


_defhelper("matrix_norm_grad", "(x, norm, ord, axes=(-2, -1))", diff=("x", "norm"),
           note="ord 1, -1, +-inf: zero derivative; nuc, +-2: distinct singular values")


@defvjp("matrix_norm_grad")
def matrix_norm_grad_vjp(g, ans, x, norm, ord, axes=(-2, -1)):
    if ord is None or ord == "fro":
        return g / norm, unbroadcast(-g * ans / norm, norm)
    if ord == "nuc" or ord == 2 or ord == -2:
        # the gradient's Jacobian is a Hessian: the VJP is the JVP, along g
        x = np.moveaxis(x, axes, (-2, -1))
        d = np.moveaxis(g, axes, (-2, -1))
        usv = np.linalg.svd(x, full_matrices=False)
        u = usv[0]
        s = usv[1]
        vt = usv[2]
        if ord == "nuc":
            w = np.ones_like(s)
        else:
            if ord > 0:
                top = np.max(s, axis=-1, keepdims=True)
            else:
                top = np.min(s, axis=-1, keepdims=True)
            w = (s == top) / np.sum(s == top, axis=-1, keepdims=True)
        s_row = np.expand_dims(s, -2)
        s_col = np.expand_dims(s, -1)
        w_row = np.expand_dims(w, -2)
        eye = np.eye(np.shape(s)[-1])
        f = 1 / (s_row**2 - s_col**2 + eye) - eye
        v = np.matrix_transpose(vt)
        c = np.matrix_transpose(u) @ d @ v
        c_t = np.matrix_transpose(c)
        u_core = f * (c * s_row + s_col * c_t)
        v_core = f * (s_col * c + c_t * s_row)
        u_rest = (d @ v - u @ c) / s_row
        v_rest = (np.matrix_transpose(d) @ u - v @ c_t) / s_row
        core = u_core * w_row + np.matrix_transpose(v_core * w_row)
        out = (u @ core + u_rest * w_row) @ vt + u @ np.matrix_transpose(v_rest * w_row)
        return np.moveaxis(out, (-2, -1), axes), np.zeros(np.shape(norm))
    return np.zeros(np.shape(x)), np.zeros(np.shape(norm))


@defjvp("matrix_norm_grad", "x")
def matrix_norm_grad_jvp_x(x_dot, ans, x, norm, ord, axes=(-2, -1)):
    if ord is None or ord == "fro":
        return x_dot / norm
    if ord == "nuc" or ord == 2 or ord == -2:
        # d(u w v^T), from the SVD's derivative (w constant)
        x = np.moveaxis(x, axes, (-2, -1))
        d = np.moveaxis(x_dot, axes, (-2, -1))
        usv = np.linalg.svd(x, full_matrices=False)
        u = usv[0]
        s = usv[1]
        vt = usv[2]
        if ord == "nuc":
            w = np.ones_like(s)
        else:
            if ord > 0:
                top = np.max(s, axis=-1, keepdims=True)
            else:
                top = np.min(s, axis=-1, keepdims=True)
            w = (s == top) / np.sum(s == top, axis=-1, keepdims=True)
        s_row = np.expand_dims(s, -2)
        s_col = np.expand_dims(s, -1)
        w_row = np.expand_dims(w, -2)
        eye = np.eye(np.shape(s)[-1])
        f = 1 / (s_row**2 - s_col**2 + eye) - eye
        v = np.matrix_transpose(vt)
        c = np.matrix_transpose(u) @ d @ v
        c_t = np.matrix_transpose(c)
        u_core = f * (c * s_row + s_col * c_t)  # u^T du
        v_core = f * (s_col * c + c_t * s_row)  # v^T dv
        u_rest = (d @ v - u @ c) / s_row  # du beyond u's columns
        v_rest = (np.matrix_transpose(d) @ u - v @ c_t) / s_row  # dv beyond v's
        core = u_core * w_row + np.matrix_transpose(v_core * w_row)
        out = (u @ core + u_rest * w_row) @ vt + u @ np.matrix_transpose(v_rest * w_row)
        return np.moveaxis(out, (-2, -1), axes)
    return np.zeros(np.shape(x))


@defjvp("matrix_norm_grad", "norm")
def matrix_norm_grad_jvp_norm(norm_dot, ans, x, norm, ord, axes=(-2, -1)):
    if ord is None or ord == "fro":
        return -ans / norm * norm_dot
    return np.zeros(np.shape(x))


# norm_grad reads its (ord, axis) as np.linalg.norm does: a vector norm over one axis
# (or of a 1-D x), a matrix norm over two (or of a 2-D x).  Where the order does not
# settle which (2, -2, -1), the rule asks at run time (``vector``).

_defhelper("norm_grad", "(x, norm, ord, axis)", diff=("x", "norm"),
           note="as vector_norm_grad or matrix_norm_grad, by NumPy's reading")


@defvjp("norm_grad")
def norm_grad_vjp(g, ans, x, norm, ord, axis):
    if ord is None or ord == "fro":
        return g / norm, unbroadcast(-g * ans / norm, norm)
    if ord != "nuc" and (ord == 0 or ord == 1 or ord > 1e308 or ord < -1e308):
        return np.zeros(np.shape(x)), np.zeros(np.shape(norm))
    if axis is None:
        axes = (-2, -1)
        vector = np.ndim(x) == 1
    else:
        axes = axis
        vector = np.size(axis) == 1
    if ord != "nuc" and vector:
        if ord == 2:
            return g / norm, unbroadcast(-g * ans / norm, norm)
        return (
            g * (ord - 1) * (np.abs(x) / norm) ** (ord - 2) / norm,
            unbroadcast(-(ord - 1) * g * ans / norm, norm),
        )
    if ord == -1:
        return np.zeros(np.shape(x)), np.zeros(np.shape(norm))
    # the nuclear or spectral norm of matrices: as matrix_norm_grad's
    x = np.moveaxis(x, axes, (-2, -1))
    d = np.moveaxis(g, axes, (-2, -1))
    usv = np.linalg.svd(x, full_matrices=False)
    u = usv[0]
    s = usv[1]
    vt = usv[2]
    if ord == "nuc":
        w = np.ones_like(s)
    else:
        if ord > 0:
            top = np.max(s, axis=-1, keepdims=True)
        else:
            top = np.min(s, axis=-1, keepdims=True)
        w = (s == top) / np.sum(s == top, axis=-1, keepdims=True)
    s_row = np.expand_dims(s, -2)
    s_col = np.expand_dims(s, -1)
    w_row = np.expand_dims(w, -2)
    eye = np.eye(np.shape(s)[-1])
    f = 1 / (s_row**2 - s_col**2 + eye) - eye
    v = np.matrix_transpose(vt)
    c = np.matrix_transpose(u) @ d @ v
    c_t = np.matrix_transpose(c)
    u_core = f * (c * s_row + s_col * c_t)
    v_core = f * (s_col * c + c_t * s_row)
    u_rest = (d @ v - u @ c) / s_row
    v_rest = (np.matrix_transpose(d) @ u - v @ c_t) / s_row
    core = u_core * w_row + np.matrix_transpose(v_core * w_row)
    out = (u @ core + u_rest * w_row) @ vt + u @ np.matrix_transpose(v_rest * w_row)
    return np.moveaxis(out, (-2, -1), axes), np.zeros(np.shape(norm))


@defjvp("norm_grad", "x")
def norm_grad_jvp_x(x_dot, ans, x, norm, ord, axis):
    if ord is None or ord == "fro":
        return x_dot / norm
    if ord != "nuc" and (ord == 0 or ord == 1 or ord > 1e308 or ord < -1e308):
        return np.zeros(np.shape(x))
    if axis is None:
        axes = (-2, -1)
        vector = np.ndim(x) == 1
    else:
        axes = axis
        vector = np.size(axis) == 1
    if ord != "nuc" and vector:
        if ord == 2:
            return x_dot / norm
        return x_dot * (ord - 1) * (np.abs(x) / norm) ** (ord - 2) / norm
    if ord == -1:
        return np.zeros(np.shape(x))
    # the nuclear or spectral norm of matrices: as matrix_norm_grad's
    x = np.moveaxis(x, axes, (-2, -1))
    d = np.moveaxis(x_dot, axes, (-2, -1))
    usv = np.linalg.svd(x, full_matrices=False)
    u = usv[0]
    s = usv[1]
    vt = usv[2]
    if ord == "nuc":
        w = np.ones_like(s)
    else:
        if ord > 0:
            top = np.max(s, axis=-1, keepdims=True)
        else:
            top = np.min(s, axis=-1, keepdims=True)
        w = (s == top) / np.sum(s == top, axis=-1, keepdims=True)
    s_row = np.expand_dims(s, -2)
    s_col = np.expand_dims(s, -1)
    w_row = np.expand_dims(w, -2)
    eye = np.eye(np.shape(s)[-1])
    f = 1 / (s_row**2 - s_col**2 + eye) - eye
    v = np.matrix_transpose(vt)
    c = np.matrix_transpose(u) @ d @ v
    c_t = np.matrix_transpose(c)
    u_core = f * (c * s_row + s_col * c_t)
    v_core = f * (s_col * c + c_t * s_row)
    u_rest = (d @ v - u @ c) / s_row
    v_rest = (np.matrix_transpose(d) @ u - v @ c_t) / s_row
    core = u_core * w_row + np.matrix_transpose(v_core * w_row)
    out = (u @ core + u_rest * w_row) @ vt + u @ np.matrix_transpose(v_rest * w_row)
    return np.moveaxis(out, (-2, -1), axes)


@defjvp("norm_grad", "norm")
def norm_grad_jvp_norm(norm_dot, ans, x, norm, ord, axis):
    if ord is None or ord == "fro":
        return -ans / norm * norm_dot
    if ord == "nuc" or ord == 0 or ord == 1 or ord > 1e308 or ord < -1e308:
        return np.zeros(np.shape(x))
    if axis is None:
        vector = np.ndim(x) == 1
    else:
        vector = np.size(axis) == 1
    # (not a bare ``if vector:``: the inliner decides a bare run-time name as true)
    if ord != "nuc" and vector:
        if ord == 2:
            return -ans / norm * norm_dot
        return -(ord - 1) * ans / norm * norm_dot
    return np.zeros(np.shape(x))


# ---- scipy.special through the runtime (SciPy is imported on first call) ---------

_defhelper("special_erf", "(x)", batch="broadcasting")


@defvjp("special_erf")
def special_erf_vjp(g, ans, x):
    return g * (2 / np.sqrt(np.pi)) * np.exp(-(x**2))


@defjvp("special_erf", "x")
def special_erf_jvp(x_dot, ans, x):
    return x_dot * (2 / np.sqrt(np.pi)) * np.exp(-(x**2))


_defhelper("special_erfc", "(x)", batch="broadcasting")


@defvjp("special_erfc")
def special_erfc_vjp(g, ans, x):
    return -g * (2 / np.sqrt(np.pi)) * np.exp(-(x**2))


@defjvp("special_erfc", "x")
def special_erfc_jvp(x_dot, ans, x):
    return -x_dot * (2 / np.sqrt(np.pi)) * np.exp(-(x**2))


_defhelper("special_erfinv", "(x)", note="erfinv'(+-1) = inf, as JAX", batch="broadcasting")


@defvjp("special_erfinv")
def special_erfinv_vjp(g, ans, x):
    return g * (np.sqrt(np.pi) / 2) * np.exp(ans**2)


@defjvp("special_erfinv", "x")
def special_erfinv_jvp(x_dot, ans, x):
    return x_dot * (np.sqrt(np.pi) / 2) * np.exp(ans**2)


_defhelper("special_gammaln", "(x)", note="d/dx is special_digamma(x)", batch="broadcasting")


@defvjp("special_gammaln")
def special_gammaln_vjp(g, ans, x):
    return g * special_digamma(x)


@defjvp("special_gammaln", "x")
def special_gammaln_jvp(x_dot, ans, x):
    return x_dot * special_digamma(x)


_defhelper("special_digamma", "(x)", note="d/dx is special_polygamma(1, x)", batch="broadcasting")


@defvjp("special_digamma")
def special_digamma_vjp(g, ans, x):
    return g * special_polygamma(1, x)


@defjvp("special_digamma", "x")
def special_digamma_jvp(x_dot, ans, x):
    return x_dot * special_polygamma(1, x)


_defhelper("special_polygamma", "(n, x)", diff=("x",),
           note="n an integer order; d/dx is special_polygamma(n + 1, x)", batch="broadcasting")


@defvjp("special_polygamma")
def special_polygamma_vjp(g, ans, n, x):
    return g * special_polygamma(n + 1, x)


@defjvp("special_polygamma", "x")
def special_polygamma_jvp(x_dot, ans, n, x):
    return x_dot * special_polygamma(n + 1, x)


_defhelper("special_expit", "(x)", batch="broadcasting")


@defvjp("special_expit")
def special_expit_vjp(g, ans, x):
    return g * ans * (1 - ans)


@defjvp("special_expit", "x")
def special_expit_jvp(x_dot, ans, x):
    return x_dot * ans * (1 - ans)


_defhelper("special_logit", "(x)", note="logit'(0) = logit'(1) = inf, as JAX", batch="broadcasting")


@defvjp("special_logit")
def special_logit_vjp(g, ans, x):
    return g / (x * (1 - x))


@defjvp("special_logit", "x")
def special_logit_jvp(x_dot, ans, x):
    return x_dot / (x * (1 - x))


_defhelper("special_xlogy", "(x, y)", note="as JAX: d/dx = log(y), d/dy = x / y", batch="broadcasting")


@defvjp("special_xlogy")
def special_xlogy_vjp(g, ans, x, y):
    return unbroadcast(g * np.log(y), x), unbroadcast(g * x / y, y)


@defjvp("special_xlogy", "x")
def special_xlogy_jvp_x(x_dot, ans, x, y):
    return x_dot * np.log(y)


@defjvp("special_xlogy", "y")
def special_xlogy_jvp_y(y_dot, ans, x, y):
    return y_dot * x / y


_defhelper("special_xlog1py", "(x, y)",
           note="as JAX: d/dx = log1p(y), d/dy = x / (1 + y)", batch="broadcasting")


@defvjp("special_xlog1py")
def special_xlog1py_vjp(g, ans, x, y):
    return unbroadcast(g * np.log1p(y), x), unbroadcast(g * x / (1 + y), y)


@defjvp("special_xlog1py", "x")
def special_xlog1py_jvp_x(x_dot, ans, x, y):
    return x_dot * np.log1p(y)


@defjvp("special_xlog1py", "y")
def special_xlog1py_jvp_y(y_dot, ans, x, y):
    return y_dot * x / (1 + y)


_defhelper("special_logsumexp", "(a, axis=None, keepdims=False)", batch="normalizer",
           note="the gradient is the softmax exp(a - ans)")


@defvjp("special_logsumexp")
def special_logsumexp_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        ans = np.expand_dims(ans, axis)
    return g * np.exp(a - ans)


@defjvp("special_logsumexp", "a")
def special_logsumexp_jvp(a_dot, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        ans = np.expand_dims(ans, axis)
    return np.sum(a_dot * np.exp(a - ans), axis=axis, keepdims=keepdims)


_defhelper("special_softmax", "(x, axis=None)", batch="normalizer")


@defvjp("special_softmax")
def special_softmax_vjp(g, ans, x, axis=None):
    return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))


@defjvp("special_softmax", "x")
def special_softmax_jvp(x_dot, ans, x, axis=None):
    return ans * (x_dot - np.sum(x_dot * ans, axis=axis, keepdims=True))


_defhelper("special_log_softmax", "(x, axis=None)", batch="normalizer")


@defvjp("special_log_softmax")
def special_log_softmax_vjp(g, ans, x, axis=None):
    return g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)


@defjvp("special_log_softmax", "x")
def special_log_softmax_jvp(x_dot, ans, x, axis=None):
    return x_dot - np.sum(np.exp(ans) * x_dot, axis=axis, keepdims=True)


# ---- joins undone: split_like(cot, arrays, axis) is one piece of cot per array, shaped
# like it (a tuple as long as the list: reverse mode counts it from the list's kind)

defprim("split_like", runtime.split_like, "(cot, arrays, axis)", family="runtime",
        spelling=call_spelling("split_like"), diff=("cot",),
        results=lambda args: len(args["arrays"]),
        note="arrays give only shapes; a tuple of one piece per array")


@defvjp("split_like")
def split_like_vjp(g, ans, cot, arrays, axis):
    # the pieces' cotangents joined back along the axis they were cut from
    return join_like(g, cot, arrays, axis)


@defjvp("split_like", "cot")
def split_like_jvp(cot_dot, ans, cot, arrays, axis):
    return split_like(cot_dot, arrays, axis)


# join_like(pieces, cot, arrays, axis) undoes split_like: linear in the pieces, and
# split_like is its transpose

defprim("join_like", runtime.join_like, "(pieces, cot, arrays, axis)", family="runtime",
        spelling=call_spelling("join_like"), diff=("pieces",),
        note="pieces a tuple; cot and arrays give only shapes")


@defvjp("join_like")
def join_like_vjp(g, ans, pieces, cot, arrays, axis):
    return split_like(g, arrays, axis)


@defjvp("join_like", "pieces")
def join_like_jvp(pieces_dot, ans, pieces, cot, arrays, axis):
    return join_like(pieces_dot, cot, arrays, axis)


# take_along_axis_bar(cot, indices, arr, axis): cot added at the places indices took
# from (linear in cot; np.take_along_axis is its transpose)

_defhelper("take_along_axis_bar", "(cot, indices, arr, axis=-1)", diff=("cot",),
           note="indices are integers and arr gives only a shape: no derivative")


@defvjp("take_along_axis_bar")
def take_along_axis_bar_vjp(g, ans, cot, indices, arr, axis=-1):
    return np.take_along_axis(g, indices, axis=axis)


@defjvp("take_along_axis_bar", "cot")
def take_along_axis_bar_jvp(cot_dot, ans, cot, indices, arr, axis=-1):
    return take_along_axis_bar(cot_dot, indices, arr, axis)
