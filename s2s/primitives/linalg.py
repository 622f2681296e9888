"""Linear algebra: products, diagonals and triangles, polynomials and convolutions
(inverses, solves, factorisations and norms are in :mod:`.linalg_solve`).

Where a cotangent depends on the operands' ranks, which emitted code learns only when
it runs (matmul, dot, tensordot, kron, einsum, multi_dot, norms of either kind), the
rule calls a small rank-aware helper from the runtime.  Matrix rules work on stacks
(..., M, N): ``np.matrix_transpose`` swaps the last two axes.  The derivatives of
factorisations follow JAX's (its JVP rules, transposed for the VJPs), including its
conventions: cholesky and eigh read their input as symmetric, (a + a.T) / 2.
"""

import operator

import numpy as np

from ..ir.nodes import Const, Let, Var
from ..ir.spelling import atom_text
from ..runtime import (
    dot_lhs_bar,
    dot_rhs_bar,
    einsum_bars,
    inner_lhs_bar,
    inner_rhs_bar,
    kron_lhs_bar,
    kron_rhs_bar,
    matmul_lhs_bar,
    matmul_rhs_bar,
    multi_dot_bars,
    multi_dot_tangent,
    tensordot_lhs_bar,
    tensordot_rhs_bar,
    unbroadcast,
)
from .batching import (
    Batch,
    NoBatchRule,
    _einsum,
    _einsum_terms,
    _items,
    _known,
    _lined,
    _paren,
    _static,
    _tensordot_axes,
    _tensordot_terms,
    align,
    args_text,
    batch_rule,
    broadcasting,
    only_first_batched,
    operand,
    static,
)
from .registry import Refused, defbilinear, defjvp, deflinear, defprim, defvjp, infix

defprim(
    "matmul", np.matmul, "(x1, x2)", family="linalg", spelling=infix("@"),
    aliases=(operator.matmul, np.linalg.matmul),
)


@defvjp("matmul")
def matmul_vjp(g, ans, x1, x2):
    return matmul_lhs_bar(g, x1, x2), matmul_rhs_bar(g, x1, x2)


defbilinear("matmul", "x1", "x2")


@batch_rule("matmul")
def matmul_rule(b: Batch, s: Let) -> str:
    """``@`` with a batch axis in front.  NumPy's matmul broadcasts over leading
    (stack) axes, so matrices only need their stacks lined up; per-example vectors
    need care, since a batched ``(B, n)`` vector looks like a matrix."""
    x, w = s.args
    bx, bw = b.batched(x), b.batched(w)
    rx, rw = b.rank(x), b.rank(w)
    tx, tw = atom_text(x), atom_text(w)
    if rx == 1 and rw == 1:
        if bx and bw:
            return f"np.sum({tx} * {tw}, axis=-1)"
        return f"{tx} @ {tw}" if bx else f"{tw} @ {tx}"
    if rx == 1:  # (n,) @ (..., n, m)
        if not bx or rw == 2 and not bw:
            return f"{tx} @ {tw}"
        return f"({align(b, x, rw - 1)}[..., None, :] @ {tw})[..., 0, :]"
    if rw == 1:  # (..., k, n) @ (n,)
        if not bw:
            return f"{tx} @ {tw}"
        return f"({tx} @ {align(b, w, rx - 1)}[..., None])[..., 0]"
    rank = max(rx, rw)
    return f"{align(b, x, rank)} @ {align(b, w, rank)}"


defprim("dot", np.dot, "(a, b)", family="linalg", methods=("dot",))


@defvjp("dot")
def dot_vjp(g, ans, a, b):
    return dot_lhs_bar(g, a, b), dot_rhs_bar(g, a, b)


defbilinear("dot", "a", "b")


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


# ---- products -------------------------------------------------------------------

defprim("vdot", np.vdot, "(a, b)", family="linalg",
        note="the sum of the flattened product, a conjugated (JAX's convention)")


@defvjp("vdot")
def vdot_vjp(g, ans, a, b):  # sum(conj(a) * b): conj-linear in a
    return np.conj(g * np.reshape(b, np.shape(a))), g * np.conj(np.reshape(a, np.shape(b)))


defbilinear("vdot", "a", "b")


@batch_rule("vdot")
def vdot_rule(b: Batch, s: Let) -> str:
    """The sum of the flattened product: each example flattened."""
    n = b.use_batch_size()
    x, y = (f"np.reshape({atom_text(a)}, ({n}, -1))" if b.batched(a)
            else f"np.ravel({atom_text(a)})" for a in s.args)
    return f"np.sum({x} * {y}, axis=-1)"


defprim("inner", np.inner, "(a, b)", family="linalg",
        note="the last axes contracted; a scalar operand multiplies")


@defvjp("inner")
def inner_vjp(g, ans, a, b):
    # g's leading axes are a's, its trailing axes b's (each less the summed last axis);
    # a scalar operand multiplies (the helpers know the ranks when the code runs)
    return inner_lhs_bar(g, a, b), inner_rhs_bar(g, a, b)


defbilinear("inner", "a", "b")


@batch_rule("inner")
def inner_rule(b: Batch, s: Let) -> str:
    """The last axes contracted: an einsum (a scalar operand multiplies)."""
    x, y = s.args
    rx, ry = b.rank(x), b.rank(y)
    if rx == 0 or ry == 0:
        return broadcasting(b, Let(s.target, "multiply", s.args, {}, s.loc))
    ta, tb, out = _tensordot_terms(rx, ry, ([rx - 1], [ry - 1]))
    return _einsum(b, [ta, tb], out, [x, y])


# np.outer flattens its operands; np.linalg.outer takes vectors only
for _name, _impl, _sig in (("outer", np.outer, "(a, b)"),
                           ("linalg.outer", np.linalg.outer, "(a, b)")):
    defprim(_name, _impl, _sig, family="linalg")

    @defvjp(_name)
    def outer_vjp(g, ans, a, b):
        a_bar = np.reshape(g @ np.ravel(b), np.shape(a))
        b_bar = np.reshape(np.ravel(a) @ g, np.shape(b))
        return a_bar, b_bar

    @defjvp(_name, "a")
    def outer_jvp_a(a_dot, ans, a, b):
        return np.outer(a_dot, b)

    @defjvp(_name, "b")
    def outer_jvp_b(b_dot, ans, a, b):
        return np.outer(a, b_dot)


@batch_rule("outer", "linalg.outer")
def outer_rule(b: Batch, s: Let) -> str:
    x, w = s.args
    n = b.use_batch_size()
    tx = f"np.reshape({atom_text(x)}, ({n}, -1, 1))" if b.batched(x) else \
        f"np.reshape({atom_text(x)}, (-1, 1))"
    tw = f"np.reshape({atom_text(w)}, ({n}, 1, -1))" if b.batched(w) else \
        f"np.ravel({atom_text(w)})"
    return f"{tx} * {tw}"


defprim("tensordot", np.tensordot, "(a, b, axes=2)", family="linalg",
        aliases=(np.linalg.tensordot,))


@defvjp("tensordot")
def tensordot_vjp(g, ans, a, b, axes=2):
    return tensordot_lhs_bar(g, a, b, axes), tensordot_rhs_bar(g, a, b, axes)


defbilinear("tensordot", "a", "b", keywords=True)


@batch_rule("tensordot")
def tensordot_rule(b: Batch, s: Let) -> str:
    """``np.tensordot`` as the einsum its ``axes`` describe, with a batch letter."""
    x, y = s.args
    ta, tb, out = _tensordot_terms(b.rank(x), b.rank(y), _tensordot_axes(b, s))
    return _einsum(b, [ta, tb], out, [x, y])


def _einsum_subscripts(args, kwargs):
    """np.einsum's interleaved form, ``np.einsum(x, [0, 1], y, [1, 2], [0, 2])``, as
    its subscripts string, ``np.einsum("ab,bc->ac", x, y)``: the sublists must be
    constants.  The string form is left as it is."""
    first = args[0] if args else None
    if isinstance(first, Const) and isinstance(first.value, str):
        return args, kwargs
    if not any(_is_sublist(a) for a in args[1:]):
        return args, kwargs  # subscripts computed in the function: a string, if anything
    if len(args) % 2:  # the last one names the output
        operands, sublists, output = args[0:-1:2], list(args[1:-1:2]), args[-1]
    else:
        operands, sublists, output = args[0::2], list(args[1::2]), None
    for sub in sublists + ([output] if output is not None else []):
        if not _is_sublist(sub):
            raise Refused("its sublists must be constants written in the call (lists "
                          "of integers from 0 to 51, and ...)",
                          "write them in the call, or give the subscripts as a string: "
                          "np.einsum('ij,jk->ik', x, y)")
    labels = [_sublist_letters(sub.value) for sub in sublists]
    if output is None:  # NumPy's implicit output: labels seen once, in integer order
        counts: dict = {}
        for sub in sublists:
            for k in sub.value:
                counts[k] = counts.get(k, 0) + 1
        once = sorted(k for k, n in counts.items() if n == 1 and k is not Ellipsis)
        dots = [Ellipsis] if Ellipsis in counts else []
        out = _sublist_letters(dots + once)
    else:
        out = _sublist_letters(output.value)
    text = ",".join(labels) + "->" + out
    return [Const(text, repr(text)), *operands], kwargs


def _is_sublist(atom):
    return isinstance(atom, Const) and isinstance(atom.value, (list, tuple)) and all(
        k is Ellipsis or (isinstance(k, int) and not isinstance(k, bool) and 0 <= k < 52)
        for k in atom.value)


def _sublist_letters(sublist):
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return "".join("..." if k is Ellipsis else letters[k] for k in sublist)


defprim(
    "einsum", np.einsum, "(subscripts, *operands, optimize=False)", family="linalg",
    diff=("operands",), canonical=_einsum_subscripts,
    note="subscripts a string (explicit '->' or implicit output, '...' allowed), or "
    "constant sublists (np.einsum(x, [0, 1], [1, 0])), rewritten as a string",
)


@defvjp("einsum")
def einsum_vjp(g, ans, subscripts, *operands, optimize=False):
    # each operand's cotangent: the einsum of g with the others, to its subscripts (one
    # call for all, so that code transforming this gradient again can count them)
    return einsum_bars(g, subscripts, operands)


@defjvp("einsum", "operands")
def einsum_jvp(operands_dot, ans, subscripts, *operands, optimize=False):
    return sum(
        np.einsum(subscripts, *operands[:k], t, *operands[k + 1:], optimize=optimize)
        for k, t in enumerate(operands_dot)
    )


@batch_rule("einsum")
def einsum_rule(b: Batch, s: Let) -> str:
    """A batch letter on each batched operand's subscripts and on the output's (an
    implicit output is written out first)."""
    spec = operand(s, "subscripts")
    known = _known(b, spec) if isinstance(spec, (Const, Var)) else None
    operands = list(s.args[1:])
    optimize = s.params.get("optimize")
    extra = f", optimize={atom_text(optimize)}" if optimize is not None else ""
    if isinstance(known, str):
        terms, output = _einsum_terms(known)
        return _einsum(b, terms, output, operands, extra=extra)
    if not isinstance(spec, Var) or b.batched(spec):
        raise NoBatchRule("np.einsum without subscripts it can read",
                          "give the subscripts as a string (a literal, or a string "
                          "argument)")
    # (subscripts known only when the code runs, a string argument: the batch label
    # put on them then, by the runtime's einsum_batched)
    marks = tuple(b.batched(a) for a in operands)
    texts = ", ".join(atom_text(a) for a in operands)
    return f"np.einsum(einsum_batched({spec.name}, {marks!r}), {texts}{extra})"


defprim("kron", np.kron, "(a, b)", family="linalg")


@defvjp("kron")
def kron_vjp(g, ans, a, b):
    return kron_lhs_bar(g, a, b), kron_rhs_bar(g, a, b)


defbilinear("kron", "a", "b")


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


# np.cross of 3-vectors, each operand's along its own axis (axisa, axisb; the result's
# along axisc; axis= sets all three); np.linalg.cross takes 3-vectors along axis only


def _cross_axes(args, kwargs):
    """``axis=`` given is each of ``axisa``, ``axisb`` and ``axisc`` (as NumPy)."""
    names = ("a", "b", "axisa", "axisb", "axisc", "axis")
    given = dict(zip(names, args))
    given.update(kwargs)
    axis = given.pop("axis", None)
    if axis is not None and not (isinstance(axis, Const) and axis.value is None):
        given.update(axisa=axis, axisb=axis, axisc=axis)
    return [], given


defprim("cross", np.cross, "(a, b, axisa=-1, axisb=-1, axisc=-1)", family="linalg",
        canonical=_cross_axes,
        note="3-vectors along axisa, axisb (the result along axisc; axis= sets all "
        "three); NumPy's 2-vector form is deprecated")


@defvjp("cross")
def cross_vjp(g, ans, a, b, axisa=-1, axisb=-1, axisc=-1):
    # <g, a x b> = <a, b x g> = <b, g x a>, each vector along its operand's axis
    a_bar = np.cross(b, g, axisa=axisb, axisb=axisc, axisc=axisa)
    b_bar = np.cross(g, a, axisa=axisc, axisb=axisa, axisc=axisb)
    return unbroadcast(a_bar, a), unbroadcast(b_bar, b)


defbilinear("cross", "a", "b", keywords=True)

defprim("linalg.cross", np.linalg.cross, "(a, b, axis=-1)", family="linalg",
        note="3-vectors along axis")


@defvjp("linalg.cross")
def linalg_cross_vjp(g, ans, a, b, axis=-1):
    a_bar = np.cross(b, g, axis=axis)
    b_bar = np.cross(g, a, axis=axis)
    return unbroadcast(a_bar, a), unbroadcast(b_bar, b)


@defjvp("linalg.cross", "a")
def linalg_cross_jvp_a(a_dot, ans, a, b, axis=-1):
    return np.cross(a_dot, b, axis=axis)


@defjvp("linalg.cross", "b")
def linalg_cross_jvp_b(b_dot, ans, a, b, axis=-1):
    return np.cross(a, b_dot, axis=axis)


@batch_rule("cross", "linalg.cross")
def cross_rule(b: Batch, s: Let) -> str:
    """3-vectors along each operand's axis: moved last in each operand, crossed, the
    result's moved back to its axis."""
    if s.prim == "cross":
        axes = [_static(b, s, name, -1) for name in ("axisa", "axisb", "axisc")]
    else:
        axes = [_static(b, s, "axis", -1)] * 3
    texts = []
    for a, axis in zip(s.args, axes):
        r, t = b.rank(a), atom_text(a)
        if axis % r != r - 1:
            t = f"np.moveaxis({t}, {axis % r + b.batched(a)}, -1)"
        texts.append(t)
    r_out = b.out_rank(s)
    texts = [_lined(b, a, t, r_out) for a, t in zip(s.args, texts)]
    text = f"np.{s.prim}({texts[0]}, {texts[1]})"
    if axes[2] % r_out != r_out - 1:
        text = f"np.moveaxis({text}, -1, {axes[2] % r_out + 1})"
    return text


# np.vecdot (a ufunc) and np.linalg.vecdot: sum(x1 * x2, axis), broadcasting
for _name, _impl in (("vecdot", np.vecdot), ("linalg.vecdot", np.linalg.vecdot)):
    defprim(_name, _impl, "(x1, x2, axis=-1)", family="linalg")

    @defvjp(_name)
    def vecdot_vjp(g, ans, x1, x2, axis=-1):
        g = np.expand_dims(g, axis)  # sum(conj(x1) * x2): conj-linear in x1
        return unbroadcast(np.conj(g * x2), x1), unbroadcast(g * np.conj(x1), x2)

    @defjvp(_name, "x1")
    def vecdot_jvp_x1(x1_dot, ans, x1, x2, axis=-1):
        return np.vecdot(x1_dot, x2, axis=axis)

    @defjvp(_name, "x2")
    def vecdot_jvp_x2(x2_dot, ans, x1, x2, axis=-1):
        return np.vecdot(x1, x2_dot, axis=axis)


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


defprim("matvec", np.matvec, "(x1, x2)", family="linalg")


@defvjp("matvec")
def matvec_vjp(g, ans, x1, x2):
    x1_bar = np.expand_dims(g, -1) * np.expand_dims(x2, -2)
    return unbroadcast(x1_bar, x1), unbroadcast(np.vecmat(np.conj(g), x1), x2)


defbilinear("matvec", "x1", "x2")


defprim("vecmat", np.vecmat, "(x1, x2)", family="linalg")


@defvjp("vecmat")
def vecmat_vjp(g, ans, x1, x2):
    # sum(conj(x1) * x2, axis=-2): conj-linear in x1 (np.vecmat conjugates its vector)
    x2_bar = np.expand_dims(np.conj(x1), -1) * np.expand_dims(g, -2)
    return unbroadcast(np.conj(np.matvec(x2, g)), x1), unbroadcast(x2_bar, x2)


defbilinear("vecmat", "x1", "x2")


@batch_rule("matvec", "vecmat")
def matvec_rule(b: Batch, s: Let) -> str:
    """Gufuncs broadcast over leading (loop) axes: a batched operand's loop axes are
    lined up with the other's, so its batch axis stays in front."""
    x1, x2 = s.args
    c1, c2 = (2, 1) if s.prim == "matvec" else (1, 2)
    loop = max(b.rank(x1) - c1, b.rank(x2) - c2)
    return args_text(s, [align(b, x1, loop + c1), align(b, x2, loop + c2)])


defprim("linalg.multi_dot", np.linalg.multi_dot, "(arrays)", family="linalg",
        note="the first and last array may be 1-D, the others 2-D")


@defvjp("linalg.multi_dot")
def multi_dot_vjp(g, ans, arrays):
    return multi_dot_bars(g, arrays)


@defjvp("linalg.multi_dot", "arrays")
def multi_dot_jvp(arrays_dot, ans, arrays):
    # one product per array with its tangent in its place (arrays is a list the code
    # built, not spelled out here: the helper sums them)
    return multi_dot_tangent(arrays, arrays_dot)


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


# ---- diagonals, triangles, transposes -------------------------------------------

defprim("trace", np.trace, "(a, offset=0, axis1=0, axis2=1)", family="linalg",
        methods=("trace",))


@defvjp("trace")
def trace_vjp(g, ans, a, offset=0, axis1=0, axis2=1):
    eye = np.eye(np.shape(a)[axis1], np.shape(a)[axis2], offset)
    return np.moveaxis(np.expand_dims(g, (-2, -1)) * eye, (-2, -1), (axis1, axis2))


deflinear("trace", "a")


defprim("linalg.trace", np.linalg.trace, "(x, offset=0)", family="linalg",
        batch="trailing_axes",
        note="the trace of the last two axes")


@defvjp("linalg.trace")
def linalg_trace_vjp(g, ans, x, offset=0):
    eye = np.eye(np.shape(x)[-2], np.shape(x)[-1], offset)
    return np.expand_dims(g, (-2, -1)) * eye


deflinear("linalg.trace", "x", keywords=True)


defprim("diagonal", np.diagonal, "(a, offset=0, axis1=0, axis2=1)", family="linalg",
        methods=("diagonal",))


@defvjp("diagonal")
def diagonal_vjp(g, ans, a, offset=0, axis1=0, axis2=1):
    # g's last axis onto the diagonal: a_bar[i, j] = sum_l rows[i, l] g[l] cols[l, j]
    n = np.shape(g)[-1]
    if offset >= 0:
        rows = np.eye(np.shape(a)[axis1], n)
        cols = np.eye(n, np.shape(a)[axis2], offset)
    else:
        rows = np.eye(np.shape(a)[axis1], n, offset)
        cols = np.eye(n, np.shape(a)[axis2])
    return np.moveaxis(rows * np.expand_dims(g, -2) @ cols, (-2, -1), (axis1, axis2))


deflinear("diagonal", "a")


@batch_rule("trace", "diagonal")
def trace_rule(b: Batch, s: Let) -> str:
    only_first_batched(b, s)
    r = b.rank(s.args[0])
    a1, a2 = static(s, "axis1", 0), static(s, "axis2", 1)
    offset = static(s, "offset", 0)
    return (f"np.{s.prim}({atom_text(s.args[0])}, offset={offset}, "
            f"axis1={a1 % r + 1}, axis2={a2 % r + 1})")


defprim("linalg.diagonal", np.linalg.diagonal, "(x, offset=0)", family="linalg",
        batch="trailing_axes",
        note="the diagonal of the last two axes")


@defvjp("linalg.diagonal")
def linalg_diagonal_vjp(g, ans, x, offset=0):
    # g's last axis onto the diagonal: x_bar[i, j] = sum_l rows[i, l] g[l] cols[l, j]
    n = np.shape(g)[-1]
    if offset >= 0:
        rows = np.eye(np.shape(x)[-2], n)
        cols = np.eye(n, np.shape(x)[-1], offset)
    else:
        rows = np.eye(np.shape(x)[-2], n, offset)
        cols = np.eye(n, np.shape(x)[-1])
    return rows * np.expand_dims(g, -2) @ cols


deflinear("linalg.diagonal", "x", keywords=True)


defprim("diag", np.diag, "(v, k=0)", family="linalg",
        note="a 1-D v gives a matrix, a 2-D v its k-th diagonal")


@defvjp("diag")
def diag_vjp(g, ans, v, k=0):
    if np.ndim(v) == 1:  # decided when the derivative runs
        return np.diagonal(g, k)
    # g onto the k-th diagonal: v_bar[i, j] = sum_l rows[i, l] g[l] cols[l, j]
    n = np.shape(g)[-1]
    if k >= 0:
        rows = np.eye(np.shape(v)[0], n)
        cols = np.eye(n, np.shape(v)[1], k)
    else:
        rows = np.eye(np.shape(v)[0], n, k)
        cols = np.eye(n, np.shape(v)[1])
    return rows * g @ cols


deflinear("diag", "v")


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


defprim("tril", np.tril, "(m, k=0)", family="linalg", batch="trailing_axes",
        note="m of rank >= 2 (stacks of matrices), as JAX requires")


@defvjp("tril")
def tril_vjp(g, ans, m, k=0):
    return np.tril(g, k)


deflinear("tril", "m")


defprim("triu", np.triu, "(m, k=0)", family="linalg", batch="trailing_axes",
        note="m of rank >= 2 (stacks of matrices), as JAX requires")


@defvjp("triu")
def triu_vjp(g, ans, m, k=0):
    return np.triu(g, k)


deflinear("triu", "m")


for _name, _impl in (("matrix_transpose", np.matrix_transpose),
                     ("linalg.matrix_transpose", np.linalg.matrix_transpose)):
    defprim(_name, _impl, "(x)", family="linalg", batch="trailing_axes",
            note="swaps the last two axes")

    @defvjp(_name)
    def matrix_transpose_vjp(g, ans, x):
        return np.matrix_transpose(g)

    @defjvp(_name, "x")
    def matrix_transpose_jvp(x_dot, ans, x):
        return np.matrix_transpose(x_dot)


# ---- polynomials (coefficients highest power first, as np.polyval) -----------------
# The linear ones (polyder, polyint, polyadd, polysub) are rules over their own
# constants: np.polyder(np.ones(n), m) is the factor each coefficient is multiplied by.

defprim("vander", np.vander, "(x, N=None, increasing=False)", diff=("x",),
        family="linalg", note="x 1-D; column j is x ** (N - 1 - j), or x ** j increasing")


@defvjp("vander")
def vander_vjp(g, ans, x, N=None, increasing=False):
    powers = np.arange(np.shape(ans)[1] - 1, -1, -1)
    if increasing:
        powers = np.arange(np.shape(ans)[1])
    return np.sum(g * powers * x[:, None] ** np.maximum(powers - 1, 0), axis=1)


@defjvp("vander", "x")
def vander_jvp(x_dot, ans, x, N=None, increasing=False):
    powers = np.arange(np.shape(ans)[1] - 1, -1, -1)
    if increasing:
        powers = np.arange(np.shape(ans)[1])
    return x_dot[:, None] * powers * x[:, None] ** np.maximum(powers - 1, 0)


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


defprim("polyval", np.polyval, "(p, x)", family="linalg",
        note="d/dp the powers of x, d/dx the derivative polynomial; coefficients may be "
        "arrays (p's axes after the first broadcast against x's)")

# ans = sum over k of p[k] * x ** (n - 1 - k).  With the coefficients' axis moved last,
# p[k] given as arrays (np.polyval([a, b], x)) broadcast against x as NumPy does.


@defvjp("polyval")
def polyval_vjp(g, ans, p, x):
    n = np.shape(p)[0]
    coefficients = np.moveaxis(p, 0, -1)
    x_k = np.expand_dims(x, -1)
    g_k = np.expand_dims(g, -1)
    powers = x_k ** np.arange(n - 1, -1, -1)
    p_bar = np.moveaxis(unbroadcast(g_k * powers, coefficients), -1, 0)
    slopes = np.arange(n - 1, 0, -1) * x_k ** np.arange(n - 2, -1, -1)
    x_bar = unbroadcast(np.sum(g_k * coefficients[..., :-1] * slopes, axis=-1), x)
    return p_bar, x_bar


deflinear("polyval", "p")


@defjvp("polyval", "x")
def polyval_jvp_x(x_dot, ans, p, x):
    n = np.shape(p)[0]
    coefficients = np.moveaxis(p, 0, -1)
    slopes = np.arange(n - 1, 0, -1) * np.expand_dims(x, -1) ** np.arange(n - 2, -1, -1)
    return x_dot * np.sum(coefficients[..., :-1] * slopes, axis=-1)


@batch_rule("polyval")
def polyval_rule(b: Batch, s: Let) -> str:
    """np.polyval itself (Horner's rule keeps the dtype): x lined up past the batch
    axis with the coefficients' other axes; batched coefficients with their axis moved
    in front of the batch axis, each coefficient then a batched array.  An unbatched x
    is then broadcast over the batch (a view): np.polyval of no coefficients (of
    ``np.polyder`` of a constant) is ``np.zeros_like(x)``, which must keep the batch."""
    p, x = s.args
    rp, r = b.rank(p), b.rank(x)
    rank = max(rp - 1, r)  # of the output, per example
    x_text = align(b, x, rank)
    if not b.batched(p):
        return f"np.polyval({atom_text(p)}, {x_text})"
    if not b.batched(x):
        ones = " 1," * (rank - r)
        x_text = f"np.broadcast_to({x_text}, ({b.use_batch_size()},{ones} *np.shape({x_text})))"
    coefficients = f"np.moveaxis({atom_text(p)}, 1, 0)"
    if rank > rp - 1:
        units = tuple(range(2, 2 + rank - (rp - 1)))
        coefficients = f"np.expand_dims({coefficients}, {units})"
    return f"np.polyval({coefficients}, {x_text})"


defprim("polyder", np.polyder, "(p, m=1)", diff=("p",), family="linalg",
        note="linear: coefficient k times (n-1-k)!/(n-1-k-m)!, m < len(p)")


@defvjp("polyder")
def polyder_vjp(g, ans, p, m=1):
    factors = np.polyder(np.ones(np.size(p)), m)
    return (g * factors) @ np.eye(np.size(g), np.size(p))


deflinear("polyder", "p")


@batch_rule("polyder")
def polyder_rule(b: Batch, s: Let) -> str:
    """Each example's coefficients times the factors ``np.polyder(ones, m)``."""
    only_first_batched(b, s)
    p, m = atom_text(s.args[0]), _static(b, s, "m", 1)
    n = f"np.shape({p})[1]"
    return f"{p}[:, :{n} - {m}] * np.polyder(np.ones({n}), {m})"


defprim("polyint", np.polyint, "(p, m=1, k=None)", diff=("p",), family="linalg",
        note="linear in p; the integration constants k are constants (no derivative)")


@defvjp("polyint")
def polyint_vjp(g, ans, p, m=1, k=None):
    factors = np.polyint(np.ones(np.size(p)), m)[: np.size(p)]
    return g[: np.size(p)] * factors


@defjvp("polyint", "p")
def polyint_jvp(p_dot, ans, p, m=1, k=None):
    return np.polyint(p_dot, m)


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


defprim("polyadd", np.polyadd, "(a1, a2)", family="linalg",
        note="the shorter polynomial is aligned at the constant term")


@defvjp("polyadd")
def polyadd_vjp(g, ans, a1, a2):
    return g[np.size(g) - np.size(a1):], g[np.size(g) - np.size(a2):]


@defjvp("polyadd", "a1")
def polyadd_jvp_a1(a1_dot, ans, a1, a2):
    return np.polyadd(a1_dot, np.zeros_like(a2))


@defjvp("polyadd", "a2")
def polyadd_jvp_a2(a2_dot, ans, a1, a2):
    return np.polyadd(np.zeros_like(a1), a2_dot)


defprim("polysub", np.polysub, "(a1, a2)", family="linalg",
        note="the shorter polynomial is aligned at the constant term")


@defvjp("polysub")
def polysub_vjp(g, ans, a1, a2):
    return g[np.size(g) - np.size(a1):], -g[np.size(g) - np.size(a2):]


@defjvp("polysub", "a1")
def polysub_jvp_a1(a1_dot, ans, a1, a2):
    return np.polysub(a1_dot, np.zeros_like(a2))


@defjvp("polysub", "a2")
def polysub_jvp_a2(a2_dot, ans, a1, a2):
    return np.polysub(np.zeros_like(a1), a2_dot)


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


# ---- 1-D convolution and correlation: bilinear --------------------------------------
# Each input's cotangent correlates g, placed into the full-length output (at the
# offset the mode cuts it from), with the other input: a 'valid' correlation.  The
# placing is g @ np.eye(len(g), full, offset), linear and batchable.

defprim("convolve", np.convolve, "(a, v, mode='full')", family="linalg",
        note="1-D a and v, modes full, same and valid")


@defvjp("convolve")
def convolve_vjp(g, ans, a, v, mode="full"):
    full = np.size(a) + np.size(v) - 1
    offset = 0
    if mode == "same":
        offset = (full - np.size(g)) // 2
    if mode == "valid":
        offset = np.minimum(np.size(a), np.size(v)) - 1
    placed = g @ np.eye(np.size(g), full, offset)
    # (np.correlate conjugates its second operand: conj undoes it, JAX's transpose)
    return (np.correlate(placed, np.conj(v), "valid"),
            np.correlate(placed, np.conj(a), "valid"))


defbilinear("convolve", "a", "v")


defprim("correlate", np.correlate, "(a, v, mode='valid')", family="linalg",
        note="1-D a and v (np.convolve(a, np.flip(np.conj(v)))), modes valid, same, full")


@defvjp("correlate")
def correlate_vjp(g, ans, a, v, mode="valid"):
    full = np.size(a) + np.size(v) - 1
    offset = 0
    if mode == "same":
        offset = (full - np.size(g)) // 2
    if mode == "valid":
        offset = np.minimum(np.size(a), np.size(v)) - 1
    placed = g @ np.eye(np.size(g), full, offset)
    a_bar = np.correlate(placed, np.flip(v), "valid")
    # conj-linear in v (np.correlate conjugates it): v_bar = conj(sum g a)
    return a_bar, np.conj(np.flip(np.correlate(placed, np.conj(a), "valid")))


defbilinear("correlate", "a", "v")


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


defprim("polymul", np.polymul, "(a1, a2)", family="linalg",
        note="1-D coefficients: np.convolve(a1, a2), with its rules")


@defvjp("polymul")
def polymul_vjp(g, ans, a1, a2):
    # (np.correlate conjugates its second operand: conj undoes it, JAX's transpose)
    return np.correlate(g, np.conj(a2), "valid"), np.correlate(g, np.conj(a1), "valid")


# np.convolve, not np.polymul: polymul drops a tangent's leading zeros (a basis
# direction [0, 1, 0] would give a shorter product than the primal's)


@defjvp("polymul", "a1")
def polymul_jvp_a1(a1_dot, ans, a1, a2):
    return np.convolve(a1_dot, a2)


@defjvp("polymul", "a2")
def polymul_jvp_a2(a2_dot, ans, a1, a2):
    return np.convolve(a1, a2_dot)


batch_rule("polymul")(convolve_rule)  # np.convolve's full mode


