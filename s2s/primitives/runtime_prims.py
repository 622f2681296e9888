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

from typing import Any

import numpy as np

from .. import runtime
from ..ir.kinds import LEAF, Seq
from ..ir.nodes import Const, Let, Var
from ..ir.spelling import atom_text
from ..runtime import (
    cumprod_bar,
    cumprod_bar_jet,
    cumprod_jet,
    cumprod_tangent,
    cumprod_tangent2,
    join_like,
    prod_of_others_jet,
    sign_turn,
    special_digamma,
    special_polygamma,
    split_like,
    unbroadcast,
)
from .batching import (
    _UNKNOWN,
    Batch,
    NoBatchRule,
    _all_axes,
    _axis,
    _known,
    _seq_texts,
    _static,
    _with_batch,
    align,
    along,
    args_text,
    batch_rule,
    operand,
    shifted,
    static,
)
from .registry import call_spelling, defjvp, deflinear, defprim, defvjp


def _defhelper(name, sig, diff=None, nondiff=False, note="", batch=None):
    defprim(
        name, getattr(runtime, name), sig, family="runtime",
        spelling=call_spelling(name), diff=diff, nondiff=nondiff, note=note, batch=batch,
    )


# ---- broadcasting and the seed -----------------------------------------------------

# the zero cotangent of a list no later code reads (reverse mode over ``ys.pop()``)
_defhelper("zeros_list", "(ys)", diff=(), nondiff=True,
           note="zeros shaped like a list's items: no derivative")

_defhelper("stop_gradient", "(x)", diff=(), nondiff=True, batch="broadcasting",
           note="s2s.stop_gradient: x as a constant, no derivative flows through it")

_defhelper("python_float", "(x)", batch="broadcasting",
           note="math.*'s result (math.log(v) is np.log(v)): a NumPy scalar as a "
           "Python float, weak as math's; the identity for derivatives")


@defvjp("python_float")
def python_float_vjp(g, ans, x):
    return g


deflinear("python_float", "x")

_defhelper("own_copy", "(x)", batch="broadcasting",
           note="an array passed to a callee that writes into it (`y += v`), copied where "
           "emitted code calls the callee as written; a number as it is; the identity "
           "for derivatives")


@defvjp("own_copy")
def own_copy_vjp(g, ans, x):
    return g


deflinear("own_copy", "x")


_defhelper("list_item", "(x, items, index)", diff=("x",),
           note="a list's item read at a run-time index through its array (x): the "
           "item itself where it is a Python number (weak, as Python's read of the "
           "list), else x; the identity for derivatives")


@defvjp("list_item")
def list_item_vjp(g, ans, x, items, index):
    return g


deflinear("list_item", "x")


@batch_rule("list_item")
def list_item_batch(b: Any, s: Let) -> str:
    """As it is: a batched item or index is an array, which the helper returns."""
    return args_text(s, [atom_text(a) for a in s.args])

_defhelper("in_place", "(value, target)", diff=("value",),
           note="`y += v` (any operator) of a name: value is y + v, cast to y's dtype "
           "where y is an array of one or more axes (NumPy writes into it), as it is "
           "where y is a number or a NumPy scalar; the identity for derivatives")


@defvjp("in_place")
def in_place_vjp(g, ans, value, target):
    return g


deflinear("in_place", "value")


@batch_rule("in_place")
def in_place_batch(b: Any, s: Let) -> str:
    """As it is, but for a batched target of one number per example (a NumPy scalar,
    rebound to the promoted value: the batch is no array the example writes into)."""
    value, target = s.args
    if b.batched(target) and b.rank(target) == 0:
        return atom_text(value)
    return args_text(s, [atom_text(a) for a in s.args])


_defhelper("real_only", "(x, what)", diff=("x",), batch="broadcasting",
           note="x itself; complex values refused where a rule is written for real ones")


@defvjp("real_only")
def real_only_vjp(g, ans, x, what):
    return g


deflinear("real_only", "x")

_defhelper("unbroadcast", "(cot, x)", diff=("cot",),
           note="x gives only a shape: no derivative for it")


@defvjp("unbroadcast")
def unbroadcast_vjp(g, ans, cot, x):
    return np.broadcast_to(g, np.shape(cot))


deflinear("unbroadcast", "cot")


@batch_rule("unbroadcast")
def unbroadcast_rule(b: Batch, s: Let) -> str:
    """Per example: sum the axes broadcasting added (they follow the batch axis), then
    the stretched ones, against a batched view of the target's shape."""
    g, x = s.args
    extra = b.rank(g) - b.rank(x)
    g_text = _with_batch(b, g)
    if extra > 0:
        axes = tuple(range(1, extra + 1))
        g_text = f"np.sum({g_text}, axis={axes[0] if extra == 1 else axes})"
    return f"unbroadcast({g_text}, {_with_batch(b, x)})"


_defhelper("grad_seed", "(out, holomorphic=False)", nondiff=True,
           note="ones_like(out): a constant, zero derivative")


@batch_rule("grad_seed")
def grad_seed_rule(b: Batch, s: Let) -> str:
    """One seed per example (the probe checked that an example's output is a scalar)."""
    return f"np.ones_like({atom_text(s.args[0])})"


# ---- reshaping helpers: linear in their first argument ---------------------------

_defhelper("weights_along", "(weights, a, axis)", diff=("weights",),
           note="a reshape of weights; a gives only a rank")


@defvjp("weights_along")
def weights_along_vjp(g, ans, weights, a, axis):
    return np.reshape(g, np.shape(weights))


deflinear("weights_along", "weights")


@batch_rule("weights_along")
def weights_along_rule(b: Batch, s: Let) -> str:
    """``np.average``'s 1-D weights laid along the averaged axis of each example
    (``a`` gives only its rank)."""
    weights, a, _ = s.args
    axis = static(s, "axis")
    rw, ra = b.rank(weights), b.rank(a)
    if axis is None or rw == ra:
        return _with_batch(b, weights)
    shape = (b.use_batch_size(), -1) + (1,) * (ra - 1 - axis % ra)
    return f"np.reshape({_with_batch(b, weights)}, ({', '.join(map(str, shape))}))"


_defhelper("rhs_columns", "(v, b)", diff=("v",),
           note="a reshape of v; b gives only a rank")


@defvjp("rhs_columns")
def rhs_columns_vjp(g, ans, v, b):
    return np.reshape(g, np.shape(v))


deflinear("rhs_columns", "v")


@batch_rule("rhs_columns")
def rhs_columns_rule(b: Batch, s: Let) -> str:
    """``v`` as columns where each example's ``b`` is a vector (``b`` gives only its
    rank)."""
    v, rhs = s.args
    text = _with_batch(b, v)
    return f"np.expand_dims({text}, -1)" if b.rank(rhs) == 1 else text


_defhelper("pad_sources", "(shape, pad_width, mode)", nondiff=True,
           note="integer indices: no derivative")


@batch_rule("pad_sources")
def pad_sources_rule(b: Batch, s: Let) -> str:
    """Its arguments are per-example facts (a shape, widths, a mode): a batched one
    would give each example its own index mesh."""
    raise NoBatchRule("pad_sources with widths that differ per example",
                      "pad by widths that are the same for every example")


_defhelper("cov_weights", "(w, name)", diff=("w",),
           note="np.cov's fweights=/aweights= checked as NumPy checks them (TypeError, "
           "RuntimeError, ValueError for a negative weight), then w itself: the "
           "identity for derivatives")


@defvjp("cov_weights")
def cov_weights_vjp(g, ans, w, name):
    return g


@defjvp("cov_weights", "w")
def cov_weights_jvp(w_dot, ans, w, name):
    return w_dot  # (the tangent is no weight: not checked)


@batch_rule("cov_weights")
def cov_weights_rule(b: Batch, s: Let) -> str:
    """Checked for every example at once: a negative weight of any example raises."""
    w, name = s.args
    return f"cov_weights({atom_text(w)}, {atom_text(name)}, True)"


_defhelper("batch_axes", "(axis, rank)", nondiff=True,
           note="axis numbers for vmap's batched arrays: no derivative")


@batch_rule("batch_axes")
def batch_axes_rule(b: Batch, s: Let) -> str:
    raise NoBatchRule("axis numbers that differ between examples")


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


@batch_rule("prod_of_others")
def prod_of_others_rule(b: Batch, s: Let) -> str:
    """Per example, over its ``axis`` (None: all its axes)."""
    a = s.args[0]
    if b.rank(a) == 0:
        return f"np.ones_like({atom_text(a)})"
    return args_text(s, [atom_text(a)], {"axis": _axis(b, s, "axis", b.rank(a))})


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


deflinear("cumprod_bar", "cot")


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


deflinear("cumprod_tangent", "v")


@defjvp("cumprod_tangent", "a")
def cumprod_tangent_jvp_a(a_dot, ans, v, a, axis=None):
    # the coefficient of t1 t2 in cumprod(a + t1 v + t2 a_dot), JAX's (not the jet's,
    # whose 0 coefficient of t1 t2 meets an inf)
    return cumprod_tangent2(v, a_dot, a, axis)


_defhelper("cumprod_tangent2", "(v, w, a, axis=None)",
           note="second derivatives of cumprod along JAX's tree (third: the jets)")


@defvjp("cumprod_tangent2")
def cumprod_tangent2_vjp(g, ans, v, w, a, axis=None):
    g_jet = np.stack([g, np.zeros_like(g)])
    zero = np.zeros_like(g)
    a_bar = cumprod_bar_jet(np.stack([g, zero, zero, zero]),
                            np.stack([a, v, w, np.zeros_like(a)]), axis)[3]
    return (cumprod_bar_jet(g_jet, np.stack([a, w]), axis)[1],
            cumprod_bar_jet(g_jet, np.stack([a, v]), axis)[1], a_bar)


deflinear("cumprod_tangent2", "v", "w")


@defjvp("cumprod_tangent2", "a")
def cumprod_tangent2_jvp_a(a_dot, ans, v, w, a, axis=None):
    zero = np.zeros_like(a)
    return cumprod_jet(np.stack([a, v, w, zero, a_dot, zero, zero, zero]), axis)[7]


@batch_rule("cumprod_bar", "cumprod_tangent", "cumprod_tangent2")
def cumprod_helpers_rule(b: Batch, s: Let) -> str:
    """Along ``axis + 1``; ``axis=None`` on each example flattened (``cumprod_bar``'s
    result shaped as the batched ``a`` again)."""
    arrays = s.args[:3] if s.prim == "cumprod_tangent2" else s.args[:2]
    texts = [_with_batch(b, t) for t in arrays]
    p = operand(s, "axis")
    if p is None or isinstance(p, Const) and p.value is None:
        n = b.use_batch_size()
        flat = ", ".join(f"np.reshape({t}, ({n}, -1))" for t in texts)
        call = f"{s.prim}({flat}, 1)"
        if s.prim != "cumprod_bar":  # a tangent of the flat cumprod: flat
            return call
        return f"np.reshape({call}, np.shape({texts[-1]}))"
    return args_text(s, texts, {"axis": _axis(b, s, "axis", b.rank(arrays[-1]))})


_defhelper("cumprod_jet", "(x, axis=None)",
           note="cumprod on a jet (leading axis: 2**m coefficients)")


@defvjp("cumprod_jet")
def cumprod_jet_vjp(g, ans, x, axis=None):
    return cumprod_bar_jet(g[::-1], x, axis)[::-1]


@defjvp("cumprod_jet", "x")
def cumprod_jet_jvp(x_dot, ans, x, axis=None):
    return cumprod_jet(np.concatenate([x, x_dot]), axis)[np.shape(x)[0]:]


def _jet_axis(b: Batch, s: Let, x: Any) -> str:
    """A jet helper's ``axis`` (an axis of the array behind the jet axis) once the
    batch axis is the first array axis."""
    return _axis(b, s, "axis", b.rank(x) - 1)


def _behind_jet(text: str) -> str:
    return f"np.moveaxis({text}, 0, 1)"


@batch_rule("prod_of_others_jet", "cumprod_jet")
def jet_rule(b: Batch, s: Let) -> str:
    """Jets carry their coefficients on axis 0: the batch axis moves behind it for
    the call and back in front after it.  ``cumprod_jet`` with ``axis=None`` runs
    over each example flattened."""
    x = s.args[0]
    moved = _behind_jet(atom_text(x))
    p = operand(s, "axis")
    flat = s.prim == "cumprod_jet" and (p is None or isinstance(p, Const)
                                        and p.value is None)
    if flat:
        n = b.use_batch_size()
        t = atom_text(x)
        moved = _behind_jet(f"np.reshape({t}, ({n}, np.shape({t})[1], -1))")
        call = f"{s.prim}({moved}, -1)"
    else:
        call = args_text(s, [moved], {"axis": _jet_axis(b, s, x)})
    return f"np.moveaxis({call}, 1, 0)"


_defhelper("cumprod_bar_jet", "(h, x, axis=None)",
           note="cumprod_bar on jets (leading axis: 2**m coefficients)")


@defvjp("cumprod_bar_jet")
def cumprod_bar_jet_vjp(g, ans, h, x, axis=None):
    n = np.shape(x)[0]
    h_bar = cumprod_jet(np.concatenate([x, g[::-1]]), axis)[n:][::-1]
    h_jet = np.concatenate([h, np.zeros_like(h)])
    x_bar = cumprod_bar_jet(h_jet, np.concatenate([x, g[::-1]]), axis)[n:][::-1]
    return h_bar, x_bar


deflinear("cumprod_bar_jet", "h")


@defjvp("cumprod_bar_jet", "x")
def cumprod_bar_jet_jvp_x(x_dot, ans, h, x, axis=None):
    h_jet = np.concatenate([h, np.zeros_like(h)])
    return cumprod_bar_jet(h_jet, np.concatenate([x, x_dot]), axis)[np.shape(x)[0]:]


@batch_rule("cumprod_bar_jet")
def cumprod_bar_jet_rule(b: Batch, s: Let) -> str:
    """As the other jet helpers: both jets get the batch axis behind the jet axis."""
    h, x = s.args
    hs, xs = _with_batch(b, h), _with_batch(b, x)
    p = operand(s, "axis")
    if p is None or isinstance(p, Const) and p.value is None:
        n = b.use_batch_size()
        flat = [_behind_jet(f"np.reshape({t}, ({n}, np.shape({t})[1], -1))")
                for t in (hs, xs)]
        call = f"cumprod_bar_jet({flat[0]}, {flat[1]}, -1)"
        return f"np.reshape(np.moveaxis({call}, 1, 0), np.shape({xs}))"
    call = args_text(s, [_behind_jet(hs), _behind_jet(xs)],
                     {"axis": _jet_axis(b, s, x)})
    return f"np.moveaxis({call}, 1, 0)"


# ---- norms: derivatives of the gradients of norms ---------------------------------
# ``norm`` (the norm, reduced axes kept) is an argument of its own: x / norm depends
# on it.  The orders whose gradient is piecewise constant (1, inf, -inf, 0 for
# vectors; 1, -1, inf, -inf for matrices) have derivative 0 for real x (JAX's: the
# derivative of sign is 0); a complex x's sign conj(x)/|x| turns with it (sign_turn).  The nuclear and spectral norms' gradients u w v^T (w: 1 for each
# singular value, or the extreme one's share) do not depend on ``norm``; their
# derivative, from the SVD's, needs distinct nonzero singular values.  Tests over
# ``ord`` and ``axis`` are decided while inlining (``ord > 1e308``: ord is inf).

defprim("sign_turn", runtime.sign_turn, "(x, t)", family="runtime",
        spelling=call_spelling("sign_turn"), diff=("t",), batch="broadcasting",
        underived={"x": "a third derivative of a 1- or inf-norm of complex values"},
        note="d(conj(x)/|x|) along t (zero for real x): linear in t, its own transpose")


@defvjp("sign_turn")
def sign_turn_vjp(g, ans, x, t):
    return sign_turn(x, g)


deflinear("sign_turn", "t")

_defhelper("vector_norm_grad", "(x, norm, ord, axis=None)", diff=("x", "norm"),
           note="ord 0, 1 and +-inf: piecewise constant, zero derivative")


@defvjp("vector_norm_grad")
def vector_norm_grad_vjp(g, ans, x, norm, ord, axis=None):
    if ord is None or ord == 2:
        return np.conj(g) / norm, unbroadcast(-g * ans / norm, norm)
    if ord == 0 or ord == 1 or ord > 1e308 or ord < -1e308:
        # sign(x)' * share: zero for real x; a complex x's sign turns
        return sign_turn(x, g * np.abs(ans)), np.zeros(np.shape(norm))
    # conj(g), and along x's phase (ord - 2) times g's part there ((ord - 1) g
    # for real x): the second derivative of |x|^ord of complex x, as JAX's
    phase = np.where(x == 0, 1.0, np.conj(x) / np.where(x == 0, 1.0, np.abs(x)))
    turn = np.conj(g) + (ord - 2) * phase * np.real(g * phase)
    return (
        turn * (np.abs(x) / norm) ** (ord - 2) / norm,
        unbroadcast(-(ord - 1) * g * ans / norm, norm),
    )


@defjvp("vector_norm_grad", "x")
def vector_norm_grad_jvp_x(x_dot, ans, x, norm, ord, axis=None):
    if ord is None or ord == 2:
        return np.conj(x_dot) / norm
    if ord == 0 or ord == 1 or ord > 1e308 or ord < -1e308:
        return sign_turn(x, x_dot) * np.abs(ans)
    # (as the VJP: the map is its own transpose)
    phase = np.where(x == 0, 1.0, np.conj(x) / np.where(x == 0, 1.0, np.abs(x)))
    turn = np.conj(x_dot) + (ord - 2) * phase * np.real(x_dot * phase)
    return turn * (np.abs(x) / norm) ** (ord - 2) / norm


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
        return np.conj(g) / norm, unbroadcast(-g * ans / norm, norm)
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
        v = np.conj(np.matrix_transpose(vt))
        c = np.conj(np.matrix_transpose(u)) @ d @ v
        c_t = np.conj(np.matrix_transpose(c))
        u_core = f * (c * s_row + s_col * c_t) + eye * (c - c_t) / (2 * s_row)
        v_core = f * (s_col * c + c_t * s_row)
        u_rest = (d @ v - u @ c) / s_row
        v_rest = (np.conj(np.matrix_transpose(d)) @ u - v @ c_t) / s_row
        core = u_core * w_row + np.conj(np.matrix_transpose(v_core * w_row))
        out = (u @ core + u_rest * w_row) @ vt + u @ np.conj(np.matrix_transpose(v_rest * w_row))
        return np.moveaxis(np.conj(out), (-2, -1), axes), np.zeros(np.shape(norm))
    # sign(x)' * share: zero for real x; a complex x's sign turns
    return sign_turn(x, g * np.abs(ans)), np.zeros(np.shape(norm))


@defjvp("matrix_norm_grad", "x")
def matrix_norm_grad_jvp_x(x_dot, ans, x, norm, ord, axes=(-2, -1)):
    if ord is None or ord == "fro":
        return np.conj(x_dot) / norm
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
        v = np.conj(np.matrix_transpose(vt))
        c = np.conj(np.matrix_transpose(u)) @ d @ v
        c_t = np.conj(np.matrix_transpose(c))
        u_core = f * (c * s_row + s_col * c_t) + eye * (c - c_t) / (2 * s_row)  # u^T du
        v_core = f * (s_col * c + c_t * s_row)  # v^T dv
        u_rest = (d @ v - u @ c) / s_row  # du beyond u's columns
        v_rest = (np.conj(np.matrix_transpose(d)) @ u - v @ c_t) / s_row  # dv beyond v's
        core = u_core * w_row + np.conj(np.matrix_transpose(v_core * w_row))
        out = (u @ core + u_rest * w_row) @ vt + u @ np.conj(np.matrix_transpose(v_rest * w_row))
        return np.moveaxis(np.conj(out), (-2, -1), axes)
    return sign_turn(x, x_dot) * np.abs(ans)


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
        return np.conj(g) / norm, unbroadcast(-g * ans / norm, norm)
    if ord != "nuc" and (ord == 0 or ord == 1 or ord > 1e308 or ord < -1e308):
        # sign(x)' * share: zero for real x; a complex x's sign turns
        return sign_turn(x, g * np.abs(ans)), np.zeros(np.shape(norm))
    if ord != "nuc" and ord != 2 and ord != -2 and ord != -1:
        # an order only vectors take: as below, decided now (no SVD in the code)
        phase = np.where(x == 0, 1.0, np.conj(x) / np.where(x == 0, 1.0, np.abs(x)))
        turn = np.conj(g) + (ord - 2) * phase * np.real(g * phase)
        return (
            turn * (np.abs(x) / norm) ** (ord - 2) / norm,
            unbroadcast(-(ord - 1) * g * ans / norm, norm),
        )
    if axis is None:
        axes = (-2, -1)
        vector = np.ndim(x) == 1
    else:
        axes = axis
        vector = np.size(axis) == 1
    if ord != "nuc" and vector:
        if ord == 2:
            return np.conj(g) / norm, unbroadcast(-g * ans / norm, norm)
        # conj(g), and along x's phase (ord - 2) times g's part there ((ord - 1) g
        # for real x): the second derivative of |x|^ord of complex x, as JAX's
        phase = np.where(x == 0, 1.0, np.conj(x) / np.where(x == 0, 1.0, np.abs(x)))
        turn = np.conj(g) + (ord - 2) * phase * np.real(g * phase)
        return (
            turn * (np.abs(x) / norm) ** (ord - 2) / norm,
            unbroadcast(-(ord - 1) * g * ans / norm, norm),
        )
    if ord == -1:
        # sign(x)' * share: zero for real x; a complex x's sign turns
        return sign_turn(x, g * np.abs(ans)), np.zeros(np.shape(norm))
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
    v = np.conj(np.matrix_transpose(vt))
    c = np.conj(np.matrix_transpose(u)) @ d @ v
    c_t = np.conj(np.matrix_transpose(c))
    u_core = f * (c * s_row + s_col * c_t) + eye * (c - c_t) / (2 * s_row)
    v_core = f * (s_col * c + c_t * s_row)
    u_rest = (d @ v - u @ c) / s_row
    v_rest = (np.conj(np.matrix_transpose(d)) @ u - v @ c_t) / s_row
    core = u_core * w_row + np.conj(np.matrix_transpose(v_core * w_row))
    out = (u @ core + u_rest * w_row) @ vt + u @ np.conj(np.matrix_transpose(v_rest * w_row))
    return np.moveaxis(np.conj(out), (-2, -1), axes), np.zeros(np.shape(norm))


@defjvp("norm_grad", "x")
def norm_grad_jvp_x(x_dot, ans, x, norm, ord, axis):
    if ord is None or ord == "fro":
        return np.conj(x_dot) / norm
    if ord != "nuc" and (ord == 0 or ord == 1 or ord > 1e308 or ord < -1e308):
        return sign_turn(x, x_dot) * np.abs(ans)
    if ord != "nuc" and ord != 2 and ord != -2 and ord != -1:
        # an order only vectors take: as below, decided now (no SVD in the code)
        phase = np.where(x == 0, 1.0, np.conj(x) / np.where(x == 0, 1.0, np.abs(x)))
        turn = np.conj(x_dot) + (ord - 2) * phase * np.real(x_dot * phase)
        return turn * (np.abs(x) / norm) ** (ord - 2) / norm
    if axis is None:
        axes = (-2, -1)
        vector = np.ndim(x) == 1
    else:
        axes = axis
        vector = np.size(axis) == 1
    if ord != "nuc" and vector:
        if ord == 2:
            return np.conj(x_dot) / norm
        # (as the VJP: the map is its own transpose)
        phase = np.where(x == 0, 1.0, np.conj(x) / np.where(x == 0, 1.0, np.abs(x)))
        turn = np.conj(x_dot) + (ord - 2) * phase * np.real(x_dot * phase)
        return turn * (np.abs(x) / norm) ** (ord - 2) / norm
    if ord == -1:
        return sign_turn(x, x_dot) * np.abs(ans)
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
    v = np.conj(np.matrix_transpose(vt))
    c = np.conj(np.matrix_transpose(u)) @ d @ v
    c_t = np.conj(np.matrix_transpose(c))
    u_core = f * (c * s_row + s_col * c_t) + eye * (c - c_t) / (2 * s_row)
    v_core = f * (s_col * c + c_t * s_row)
    u_rest = (d @ v - u @ c) / s_row
    v_rest = (np.conj(np.matrix_transpose(d)) @ u - v @ c_t) / s_row
    core = u_core * w_row + np.conj(np.matrix_transpose(v_core * w_row))
    out = (u @ core + u_rest * w_row) @ vt + u @ np.conj(np.matrix_transpose(v_rest * w_row))
    return np.moveaxis(np.conj(out), (-2, -1), axes)


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


@batch_rule("vector_norm_grad", "matrix_norm_grad", "norm_grad")
def norm_grad_rule(b: Batch, s: Let) -> str:
    """The norm's axes past the batch axis (None: every per-example axis); the norm
    (reduced axes kept, or a scalar per example) lined up with ``x``."""
    x, norm, order = s.args[:3]
    if b.batched(order):
        raise NoBatchRule(f"`{s.prim}` with an order that differs between examples")
    r = b.rank(x)
    texts = [_with_batch(b, x), align(b, norm, r), atom_text(order)]
    if s.prim == "matrix_norm_grad":
        return args_text(s, texts, {"axes": shifted(_static(b, s, "axes", (-2, -1)), r)})
    if s.prim == "vector_norm_grad":
        return args_text(s, texts, {"axis": _axis(b, s, "axis", r)})
    axis = _known(b, s.args[3])
    if axis is _UNKNOWN:
        raise NoBatchRule("norm_grad with an axis computed when the code runs")
    return args_text(s, texts + [_all_axes(r) if axis is None else shifted(axis, r)])


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


_defhelper("special_digamma", "(x)", note="d/dx is special_polygamma(1, x)",
batch="broadcasting")


@defvjp("special_digamma")
def special_digamma_vjp(g, ans, x):
    return g * special_polygamma(1, x)


@defjvp("special_digamma", "x")
def special_digamma_jvp(x_dot, ans, x):
    return x_dot * special_polygamma(1, x)


_defhelper("special_polygamma", "(n, x)", diff=("x",),
           note="n an integer order; d/dx is special_polygamma(n + 1, x)",
           batch="broadcasting")


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


_defhelper("special_logit", "(x)", note="logit'(0) = logit'(1) = inf, as JAX",
batch="broadcasting")


@defvjp("special_logit")
def special_logit_vjp(g, ans, x):
    return g / (x * (1 - x))


@defjvp("special_logit", "x")
def special_logit_jvp(x_dot, ans, x):
    return x_dot / (x * (1 - x))


_defhelper("special_xlogy", "(x, y)", note="as JAX: d/dx = log(y), d/dy = x / y",
batch="broadcasting")


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


_defhelper("special_logsumexp", "(a, axis=None, b=None, keepdims=False)", diff=("a", "b"),
           batch="normalizer",
           note="the gradient is the softmax exp(a - ans) (times b, with b=)")


@defvjp("special_logsumexp")
def special_logsumexp_vjp(g, ans, a, axis=None, b=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        ans = np.expand_dims(ans, axis)
    if b is None:
        return g * np.exp(a - ans), None
    weights = g * np.exp(a - ans)
    return unbroadcast(weights * b, a), unbroadcast(weights, b)


@defjvp("special_logsumexp", "a")
def special_logsumexp_jvp(a_dot, ans, a, axis=None, b=None, keepdims=False):
    if axis is not None and not keepdims:
        ans = np.expand_dims(ans, axis)
    if b is None:
        return np.sum(a_dot * np.exp(a - ans), axis=axis, keepdims=keepdims)
    return np.sum(a_dot * b * np.exp(a - ans), axis=axis, keepdims=keepdims)


@defjvp("special_logsumexp", "b")
def special_logsumexp_jvp_b(b_dot, ans, a, axis=None, b=None, keepdims=False):
    if axis is not None and not keepdims:
        ans = np.expand_dims(ans, axis)
    return np.sum(b_dot * np.exp(a - ans), axis=axis, keepdims=keepdims)


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


deflinear("split_like", "cot")


@batch_rule("split_like")
def split_like_rule(b: Batch, s: Let) -> str:
    """Every array viewed with the batch axis (each example's pieces differ), and the
    example's axis one further on."""
    cot, arrays, axis = s.args
    if not isinstance(axis, Const) or type(axis.value) is not int:
        raise NoBatchRule("split_like with an axis computed when the code runs")
    rank = b.rank(cot)
    cut = (min(axis.value, rank - 1) if axis.value >= 0 else axis.value) % rank
    return f"split_like({_with_batch(b, cot)}, {_shapes_list(b, arrays, 'split_like')}, " \
        f"{cut + 1})"


def _shapes_list(b: Batch, arrays: Any, what: str) -> str:
    """The arrays a join put together, each with the batch axis: a list built here, a
    tuple popped from a loop's tape (its items' kinds), or a list a loop grew (its
    items all batched, or each repeated for every example)."""
    kind = b.kind(arrays.name) if isinstance(arrays, Var) else None
    if not isinstance(kind, Seq):
        return "[" + ", ".join(_seq_texts(b, arrays, what)) + "]"
    if kind.item != LEAF:
        raise NoBatchRule(f"`{what}` of a list of containers")
    if b.batched(arrays):
        return atom_text(arrays)
    return f"[np.broadcast_to(a, ({b.use_batch_size()}, *np.shape(a))) for a in " \
        f"{atom_text(arrays)}]"


# join_like(pieces, cot, arrays, axis) undoes split_like: linear in the pieces, and
# split_like is its transpose

defprim("join_like", runtime.join_like, "(pieces, cot, arrays, axis)", family="runtime",
        spelling=call_spelling("join_like"), diff=("pieces",),
        note="pieces a tuple; cot and arrays give only shapes")


@defvjp("join_like")
def join_like_vjp(g, ans, pieces, cot, arrays, axis):
    return split_like(g, arrays, axis)


deflinear("join_like", "pieces")


@batch_rule("join_like")
def join_like_rule(b: Batch, s: Let) -> str:
    """The pieces (a tuple) and the shapes they are joined to, each with the batch
    axis, joined along the example's axis one further on (as split_like)."""

    pieces, cot, arrays, axis = s.args
    if not isinstance(axis, Const) or type(axis.value) is not int:
        raise NoBatchRule("join_like with an axis computed when the code runs")
    rank = b.rank(cot)
    cut = (min(axis.value, rank - 1) if axis.value >= 0 else axis.value) % rank
    parts = ", ".join(_seq_texts(b, pieces, "join_like"))
    return f"join_like(({parts},), {_with_batch(b, cot)}, " \
        f"{_shapes_list(b, arrays, 'join_like')}, {cut + 1})"


# take_along_axis_bar(cot, indices, arr, axis): cot added at the places indices took
# from (linear in cot; np.take_along_axis is its transpose)

_defhelper("take_along_axis_bar", "(cot, indices, arr, axis=-1)", diff=("cot",),
           note="indices are integers and arr gives only a shape: no derivative")


@defvjp("take_along_axis_bar")
def take_along_axis_bar_vjp(g, ans, cot, indices, arr, axis=-1):
    return np.take_along_axis(g, indices, axis=axis)


deflinear("take_along_axis_bar", "cot")


@batch_rule("take_along_axis_bar")
def take_along_axis_bar_rule(b: Batch, s: Let) -> str:
    """As take_along_axis: the axis moves past the batch axis (without one: each
    flattened example), unbatched positions get a batch axis of length 1, and the
    cotangent and the array's shape get the batch axis."""
    cot, idx, arr = s.args[:3]
    g, x = _with_batch(b, cot), _with_batch(b, arr)
    i = atom_text(idx) if b.batched(idx) else f"{atom_text(idx)}[None]"
    n = b.use_batch_size()

    def flat_call():
        i_flat = (f"np.reshape({i}, ({n}, -1))" if b.batched(idx)
                  else f"np.reshape({atom_text(idx)}, (1, -1))")
        call = (f"take_along_axis_bar(np.reshape({g}, ({n}, -1)), {i_flat}, "
                f"np.reshape({x}, ({n}, -1)), 1)")
        return f"np.reshape({call}, np.shape({x}))"

    return along(b, s, -1, b.rank(arr),
                 lambda ax: f"take_along_axis_bar({g}, {i}, {x}, {ax})", flat_call)


