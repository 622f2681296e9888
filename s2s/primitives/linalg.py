"""Linear algebra: products, diagonals and triangles, inverses and solves,
factorisations (Cholesky, eigh, SVD, QR) and norms.

Where a cotangent depends on the operands' ranks, which emitted code learns only when
it runs (matmul, dot, tensordot, kron, einsum, multi_dot, norms of either kind), the
rule calls a small rank-aware helper from the runtime.  Matrix rules work on stacks
(..., M, N): ``np.matrix_transpose`` swaps the last two axes.  The derivatives of
factorisations follow JAX's (its JVP rules, transposed for the VJPs), including its
conventions: cholesky and eigh read their input as symmetric, (a + a.T) / 2.
"""

import operator

import numpy as np

from ..ir.nodes import Const
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
    matrix_norm_grad,
    multi_dot_bars,
    multi_dot_tangent,
    norm_grad,
    rhs_columns,
    tensordot_lhs_bar,
    tensordot_rhs_bar,
    unbroadcast,
    vector_norm_grad,
)
from .registry import Refused, defjvp, defprim, defvjp, infix

defprim(
    "matmul", np.matmul, "(x1, x2)", family="linalg", spelling=infix("@"),
    aliases=(operator.matmul, np.linalg.matmul),
)


@defvjp("matmul")
def matmul_vjp(g, ans, x1, x2):
    return matmul_lhs_bar(g, x1, x2), matmul_rhs_bar(g, x1, x2)


@defjvp("matmul", "x1")
def matmul_jvp_x1(x1_dot, ans, x1, x2):
    return x1_dot @ x2


@defjvp("matmul", "x2")
def matmul_jvp_x2(x2_dot, ans, x1, x2):
    return x1 @ x2_dot


defprim("dot", np.dot, "(a, b)", family="linalg", methods=("dot",))


@defvjp("dot")
def dot_vjp(g, ans, a, b):
    return dot_lhs_bar(g, a, b), dot_rhs_bar(g, a, b)


@defjvp("dot", "a")
def dot_jvp_a(a_dot, ans, a, b):
    return np.dot(a_dot, b)


@defjvp("dot", "b")
def dot_jvp_b(b_dot, ans, a, b):
    return np.dot(a, b_dot)


# ---- products -------------------------------------------------------------------

defprim("vdot", np.vdot, "(a, b)", family="linalg",
        note="real arrays: the sum of the flattened product")


@defvjp("vdot")
def vdot_vjp(g, ans, a, b):
    return g * np.reshape(b, np.shape(a)), g * np.reshape(a, np.shape(b))


@defjvp("vdot", "a")
def vdot_jvp_a(a_dot, ans, a, b):
    return np.vdot(a_dot, b)


@defjvp("vdot", "b")
def vdot_jvp_b(b_dot, ans, a, b):
    return np.vdot(a, b_dot)


defprim("inner", np.inner, "(a, b)", family="linalg",
        note="the last axes contracted; a scalar operand multiplies")


@defvjp("inner")
def inner_vjp(g, ans, a, b):
    # g's leading axes are a's, its trailing axes b's (each less the summed last axis);
    # a scalar operand multiplies (the helpers know the ranks when the code runs)
    return inner_lhs_bar(g, a, b), inner_rhs_bar(g, a, b)


@defjvp("inner", "a")
def inner_jvp_a(a_dot, ans, a, b):
    return np.inner(a_dot, b)


@defjvp("inner", "b")
def inner_jvp_b(b_dot, ans, a, b):
    return np.inner(a, b_dot)


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


defprim("tensordot", np.tensordot, "(a, b, axes=2)", family="linalg",
        aliases=(np.linalg.tensordot,))


@defvjp("tensordot")
def tensordot_vjp(g, ans, a, b, axes=2):
    return tensordot_lhs_bar(g, a, b, axes), tensordot_rhs_bar(g, a, b, axes)


@defjvp("tensordot", "a")
def tensordot_jvp_a(a_dot, ans, a, b, axes=2):
    return np.tensordot(a_dot, b, axes=axes)


@defjvp("tensordot", "b")
def tensordot_jvp_b(b_dot, ans, a, b, axes=2):
    return np.tensordot(a, b_dot, axes=axes)


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


defprim("kron", np.kron, "(a, b)", family="linalg")


@defvjp("kron")
def kron_vjp(g, ans, a, b):
    return kron_lhs_bar(g, a, b), kron_rhs_bar(g, a, b)


@defjvp("kron", "a")
def kron_jvp_a(a_dot, ans, a, b):
    return np.kron(a_dot, b)


@defjvp("kron", "b")
def kron_jvp_b(b_dot, ans, a, b):
    return np.kron(a, b_dot)


# np.cross of 3-vectors; np.linalg.cross takes 3-vectors only
for _name, _impl in (("cross", np.cross), ("linalg.cross", np.linalg.cross)):
    defprim(_name, _impl, "(a, b, axis=-1)", family="linalg",
            note="3-vectors along axis (NumPy's 2-vector form is deprecated)")

    @defvjp(_name)
    def cross_vjp(g, ans, a, b, axis=-1):
        # <g, a x b> = <a, b x g> = <b, g x a>
        a_bar = np.cross(b, g, axis=axis)
        b_bar = np.cross(g, a, axis=axis)
        return unbroadcast(a_bar, a), unbroadcast(b_bar, b)

    @defjvp(_name, "a")
    def cross_jvp_a(a_dot, ans, a, b, axis=-1):
        return np.cross(a_dot, b, axis=axis)

    @defjvp(_name, "b")
    def cross_jvp_b(b_dot, ans, a, b, axis=-1):
        return np.cross(a, b_dot, axis=axis)


# np.vecdot (a ufunc) and np.linalg.vecdot: sum(x1 * x2, axis), broadcasting
for _name, _impl in (("vecdot", np.vecdot), ("linalg.vecdot", np.linalg.vecdot)):
    defprim(_name, _impl, "(x1, x2, axis=-1)", family="linalg")

    @defvjp(_name)
    def vecdot_vjp(g, ans, x1, x2, axis=-1):
        g = np.expand_dims(g, axis)
        return unbroadcast(g * x2, x1), unbroadcast(g * x1, x2)

    @defjvp(_name, "x1")
    def vecdot_jvp_x1(x1_dot, ans, x1, x2, axis=-1):
        return np.vecdot(x1_dot, x2, axis=axis)

    @defjvp(_name, "x2")
    def vecdot_jvp_x2(x2_dot, ans, x1, x2, axis=-1):
        return np.vecdot(x1, x2_dot, axis=axis)


defprim("matvec", np.matvec, "(x1, x2)", family="linalg")


@defvjp("matvec")
def matvec_vjp(g, ans, x1, x2):
    x1_bar = np.expand_dims(g, -1) * np.expand_dims(x2, -2)
    return unbroadcast(x1_bar, x1), unbroadcast(np.vecmat(g, x1), x2)


@defjvp("matvec", "x1")
def matvec_jvp_x1(x1_dot, ans, x1, x2):
    return np.matvec(x1_dot, x2)


@defjvp("matvec", "x2")
def matvec_jvp_x2(x2_dot, ans, x1, x2):
    return np.matvec(x1, x2_dot)


defprim("vecmat", np.vecmat, "(x1, x2)", family="linalg")


@defvjp("vecmat")
def vecmat_vjp(g, ans, x1, x2):
    x2_bar = np.expand_dims(x1, -1) * np.expand_dims(g, -2)
    return unbroadcast(np.matvec(x2, g), x1), unbroadcast(x2_bar, x2)


@defjvp("vecmat", "x1")
def vecmat_jvp_x1(x1_dot, ans, x1, x2):
    return np.vecmat(x1_dot, x2)


@defjvp("vecmat", "x2")
def vecmat_jvp_x2(x2_dot, ans, x1, x2):
    return np.vecmat(x1, x2_dot)


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


# ---- diagonals, triangles, transposes -------------------------------------------

defprim("trace", np.trace, "(a, offset=0, axis1=0, axis2=1)", family="linalg",
        methods=("trace",))


@defvjp("trace")
def trace_vjp(g, ans, a, offset=0, axis1=0, axis2=1):
    eye = np.eye(np.shape(a)[axis1], np.shape(a)[axis2], offset)
    return np.moveaxis(np.expand_dims(g, (-2, -1)) * eye, (-2, -1), (axis1, axis2))


@defjvp("trace", "a")
def trace_jvp(a_dot, ans, a, offset=0, axis1=0, axis2=1):
    return np.trace(a_dot, offset, axis1, axis2)


defprim("linalg.trace", np.linalg.trace, "(x, offset=0)", family="linalg",
        note="the trace of the last two axes")


@defvjp("linalg.trace")
def linalg_trace_vjp(g, ans, x, offset=0):
    eye = np.eye(np.shape(x)[-2], np.shape(x)[-1], offset)
    return np.expand_dims(g, (-2, -1)) * eye


@defjvp("linalg.trace", "x")
def linalg_trace_jvp(x_dot, ans, x, offset=0):
    return np.linalg.trace(x_dot, offset=offset)


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


@defjvp("diagonal", "a")
def diagonal_jvp(a_dot, ans, a, offset=0, axis1=0, axis2=1):
    return np.diagonal(a_dot, offset, axis1, axis2)


defprim("linalg.diagonal", np.linalg.diagonal, "(x, offset=0)", family="linalg",
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


@defjvp("linalg.diagonal", "x")
def linalg_diagonal_jvp(x_dot, ans, x, offset=0):
    return np.linalg.diagonal(x_dot, offset=offset)


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


@defjvp("diag", "v")
def diag_jvp(v_dot, ans, v, k=0):
    return np.diag(v_dot, k)


defprim("tril", np.tril, "(m, k=0)", family="linalg",
        note="m of rank >= 2 (stacks of matrices), as JAX requires")


@defvjp("tril")
def tril_vjp(g, ans, m, k=0):
    return np.tril(g, k)


@defjvp("tril", "m")
def tril_jvp(m_dot, ans, m, k=0):
    return np.tril(m_dot, k)


defprim("triu", np.triu, "(m, k=0)", family="linalg",
        note="m of rank >= 2 (stacks of matrices), as JAX requires")


@defvjp("triu")
def triu_vjp(g, ans, m, k=0):
    return np.triu(g, k)


@defjvp("triu", "m")
def triu_jvp(m_dot, ans, m, k=0):
    return np.triu(m_dot, k)


for _name, _impl in (("matrix_transpose", np.matrix_transpose),
                     ("linalg.matrix_transpose", np.linalg.matrix_transpose)):
    defprim(_name, _impl, "(x)", family="linalg", note="swaps the last two axes")

    @defvjp(_name)
    def matrix_transpose_vjp(g, ans, x):
        return np.matrix_transpose(g)

    @defjvp(_name, "x")
    def matrix_transpose_jvp(x_dot, ans, x):
        return np.matrix_transpose(x_dot)


# ---- inverses and solves ----------------------------------------------------------
# Matrices may be stacked (..., M, M); np.matrix_transpose swaps the last two axes.

defprim("linalg.inv", np.linalg.inv, "(a)", family="linalg")


@defvjp("linalg.inv")
def inv_vjp(g, ans, a):
    ans_t = np.matrix_transpose(ans)
    return -ans_t @ g @ ans_t


@defjvp("linalg.inv", "a")
def inv_jvp(a_dot, ans, a):
    return -ans @ a_dot @ ans


defprim("linalg.solve", np.linalg.solve, "(a, b)", family="linalg",
        note="b a vector (1-D) or a stack of matrices, as NumPy 2 reads it")


@defvjp("linalg.solve")
def solve_vjp(g, ans, a, b):
    # rhs_columns: a 1-D b (and its g, ans) as one column
    b_bar = np.linalg.solve(np.matrix_transpose(a), rhs_columns(g, b))
    a_bar = -b_bar @ np.matrix_transpose(rhs_columns(ans, b))
    return unbroadcast(a_bar, a), unbroadcast(np.reshape(b_bar, np.shape(ans)), b)


@defjvp("linalg.solve", "a")
def solve_jvp_a(a_dot, ans, a, b):
    x_dot = -np.linalg.solve(a, a_dot @ rhs_columns(ans, b))
    return np.reshape(x_dot, np.shape(ans))


@defjvp("linalg.solve", "b")
def solve_jvp_b(b_dot, ans, a, b):
    return np.linalg.solve(a, b_dot)


defprim("linalg.det", np.linalg.det, "(a)", family="linalg",
        note="invertible a (the cotangent is det(a) * inv(a).T)")


@defvjp("linalg.det")
def det_vjp(g, ans, a):
    return np.expand_dims(g * ans, (-2, -1)) * np.linalg.inv(np.matrix_transpose(a))


@defjvp("linalg.det", "a")
def det_jvp(a_dot, ans, a):
    return ans * np.trace(np.linalg.solve(a, a_dot), axis1=-2, axis2=-1)


defprim("linalg.slogdet", np.linalg.slogdet, "(a)", family="linalg", results=2,
        note="(sign, logabsdet): the sign is piecewise constant, no derivative flows")


@defvjp("linalg.slogdet")
def slogdet_vjp(g, ans, a):
    return np.expand_dims(g[1], (-2, -1)) * np.linalg.inv(np.matrix_transpose(a))


@defjvp("linalg.slogdet", "a")
def slogdet_jvp(a_dot, ans, a):
    logdet_dot = np.trace(np.linalg.solve(a, a_dot), axis1=-2, axis2=-1)
    return np.zeros_like(ans[0]), logdet_dot


defprim("linalg.matrix_power", np.linalg.matrix_power, "(a, n)", family="linalg",
        diff=("a",), note="n a Python int, any sign")


@defvjp("linalg.matrix_power")
def matrix_power_vjp(g, ans, a, n):
    # d(a^n)[da] = sum_k a^k da a^(n-1-k) is the top right block of [[a, da], [0, a]]^n
    # (for n < 0 too); its adjoint is the same with a's transpose: array operations
    # only, so code that transforms this gradient again reads no sum over k
    if n == 0:
        return np.zeros_like(a)
    a_t = np.matrix_transpose(a)
    m = np.shape(a)[-1]
    top = np.concatenate([a_t, g], axis=-1)
    bottom = np.concatenate([np.zeros_like(a_t), a_t], axis=-1)
    block_power = np.linalg.matrix_power(np.concatenate([top, bottom], axis=-2), n)
    return block_power[..., :m, m:]


@defjvp("linalg.matrix_power", "a")
def matrix_power_jvp(a_dot, ans, a, n):
    if n == 0:
        return np.zeros_like(ans)
    m = np.shape(a)[-1]
    top = np.concatenate([a, a_dot], axis=-1)
    bottom = np.concatenate([np.zeros_like(a), a], axis=-1)
    block_power = np.linalg.matrix_power(np.concatenate([top, bottom], axis=-2), n)
    return block_power[..., :m, m:]


defprim("linalg.pinv", np.linalg.pinv, "(a, rcond=None, hermitian=False)",
        family="linalg", note="a of full rank (the rank must not change nearby)")


@defvjp("linalg.pinv")
def pinv_vjp(g, ans, a, rcond=None, hermitian=False):
    # transposes the terms of Golub & Pereyra's derivative (JAX's pinv JVP)
    p_t = np.matrix_transpose(ans)
    g_t = np.matrix_transpose(g)
    out_proj = np.eye(np.shape(a)[-2]) - a @ ans  # I - a pinv(a)
    in_proj = np.eye(np.shape(a)[-1]) - ans @ a  # I - pinv(a) a
    return -p_t @ g @ p_t + out_proj @ g_t @ ans @ p_t + p_t @ ans @ g_t @ in_proj


@defjvp("linalg.pinv", "a")
def pinv_jvp(a_dot, ans, a, rcond=None, hermitian=False):
    p_t = np.matrix_transpose(ans)
    a_dot_t = np.matrix_transpose(a_dot)
    out_proj = np.eye(np.shape(a)[-2]) - a @ ans
    in_proj = np.eye(np.shape(a)[-1]) - ans @ a
    return (-ans @ a_dot @ ans + ans @ p_t @ a_dot_t @ out_proj
            + in_proj @ a_dot_t @ p_t @ ans)


defprim(
    "linalg.lstsq", np.linalg.lstsq, "(a, b, rcond=None)", family="linalg", results=4,
    note="a (M, N) of full rank; (x, residuals, rank, s): rank is an integer, "
    "residuals are empty unless M > N",
)


@defvjp("linalg.lstsq")
def lstsq_vjp(g, ans, a, b, rcond=None):
    # x = pinv(a) @ b; residuals = |b - a x|^2 per column; s = a's singular values
    p = np.linalg.pinv(a)
    p_t = np.matrix_transpose(p)
    x = np.reshape(ans[0], (np.shape(a)[1], -1))  # b's columns (one if b is 1-D)
    x_bar = np.reshape(g[0], np.shape(x))
    rhs = np.reshape(b, (np.shape(a)[0], -1))
    p_bar = x_bar @ rhs.T  # the cotangent of pinv(a), then pinv's VJP
    out_proj = np.eye(np.shape(a)[0]) - a @ p
    in_proj = np.eye(np.shape(a)[1]) - p @ a
    a_bar = (-p_t @ p_bar @ p_t + out_proj @ p_bar.T @ p @ p_t
             + p_t @ p @ p_bar.T @ in_proj)
    res_bar = 2 * (rhs - a @ x) * (g[1] if np.size(g[1]) else 0.0)
    usv = np.linalg.svd(a, full_matrices=False)
    a_bar = a_bar - res_bar @ x.T + (usv[0] * g[3]) @ usv[2]
    b_bar = np.reshape(p_t @ x_bar + res_bar, np.shape(b))
    return a_bar, b_bar


@defjvp("linalg.lstsq", "a")
def lstsq_jvp_a(a_dot, ans, a, b, rcond=None):
    p = np.linalg.pinv(a)
    p_t = np.matrix_transpose(p)
    out_proj = np.eye(np.shape(a)[0]) - a @ p
    in_proj = np.eye(np.shape(a)[1]) - p @ a
    p_dot = -p @ a_dot @ p + p @ p_t @ a_dot.T @ out_proj + in_proj @ a_dot.T @ p_t @ p
    residual = b - a @ ans[0]
    res_dot = -2 * np.sum(residual * (a_dot @ ans[0]), axis=0)
    res_dot = np.reshape(res_dot, np.shape(ans[1])) if np.size(ans[1]) else ans[1] * 0.0
    usv = np.linalg.svd(a, full_matrices=False)
    s_dot = np.sum(usv[0] * (a_dot @ usv[2].T), axis=0)
    return p_dot @ b, res_dot, np.zeros_like(ans[2]), s_dot


@defjvp("linalg.lstsq", "b")
def lstsq_jvp_b(b_dot, ans, a, b, rcond=None):
    residual = b - a @ ans[0]
    res_dot = 2 * np.sum(residual * b_dot, axis=0)
    res_dot = np.reshape(res_dot, np.shape(ans[1])) if np.size(ans[1]) else ans[1] * 0.0
    x_dot = np.linalg.pinv(a) @ b_dot
    return x_dot, res_dot, np.zeros_like(ans[2]), np.zeros_like(ans[3])


# ---- factorisations ---------------------------------------------------------------
# JAX reads the input of cholesky and eigh as symmetric, (a + a.T) / 2: so do these
# rules (NumPy reads one triangle), and their cotangents are symmetric.

defprim("linalg.cholesky", np.linalg.cholesky, "(a, upper=False)", family="linalg",
        note="symmetric positive definite a; symmetric cotangent (JAX's convention)")


@defvjp("linalg.cholesky")
def cholesky_vjp(g, ans, a, upper=False):
    # l = cholesky(a): a_bar = sym(l^-T phi(l^T g) l^-1), phi: the lower triangle with
    # the diagonal halved (the transpose of JAX's Cholesky derivative)
    l = ans
    if upper:
        l = np.matrix_transpose(ans)
        g = np.matrix_transpose(g)
    l_t = np.matrix_transpose(l)
    p = l_t @ g
    p = np.tril(p) - 0.5 * p * np.eye(np.shape(a)[-1])
    s = np.linalg.solve(l_t, np.matrix_transpose(np.linalg.solve(l_t, p)))
    return (s + np.matrix_transpose(s)) / 2


@defjvp("linalg.cholesky", "a")
def cholesky_jvp(a_dot, ans, a, upper=False):
    # l_dot = l phi(l^-1 sym(a_dot) l^-T)
    l = ans
    if upper:
        l = np.matrix_transpose(ans)
    sym = (a_dot + np.matrix_transpose(a_dot)) / 2
    x = np.linalg.solve(l, np.matrix_transpose(np.linalg.solve(l, sym)))
    l_dot = l @ (np.tril(x) - 0.5 * x * np.eye(np.shape(a)[-1]))
    if upper:
        return np.matrix_transpose(l_dot)
    return l_dot


defprim("linalg.eigh", np.linalg.eigh, "(a, UPLO='L')", family="linalg", results=2,
        note="symmetric a with distinct eigenvalues; symmetric cotangent (JAX's)")


@defvjp("linalg.eigh")
def eigh_vjp(g, ans, a, UPLO="L"):
    # (w, v): a_bar = v (diag(w_bar) + f * (v^T v_bar)) v^T, f = 1 / (w_j - w_i)
    w = ans[0]
    v = ans[1]
    eye = np.eye(np.shape(a)[-1])
    f = 1 / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye) - eye
    inner = f * (np.matrix_transpose(v) @ g[1]) + np.expand_dims(g[0], -2) * eye
    a_bar = v @ inner @ np.matrix_transpose(v)
    return (a_bar + np.matrix_transpose(a_bar)) / 2


@defjvp("linalg.eigh", "a")
def eigh_jvp(a_dot, ans, a, UPLO="L"):
    w = ans[0]
    v = ans[1]
    eye = np.eye(np.shape(a)[-1])
    f = 1 / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye) - eye
    sym = (a_dot + np.matrix_transpose(a_dot)) / 2
    x = np.matrix_transpose(v) @ sym @ v
    return np.diagonal(x, axis1=-2, axis2=-1), v @ (f * x)


defprim("linalg.eigvalsh", np.linalg.eigvalsh, "(a, UPLO='L')", family="linalg",
        note="symmetric a with distinct eigenvalues")


@defvjp("linalg.eigvalsh")
def eigvalsh_vjp(g, ans, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    return (v * np.expand_dims(g, -2)) @ np.matrix_transpose(v)


@defjvp("linalg.eigvalsh", "a")
def eigvalsh_jvp(a_dot, ans, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    return np.sum(v * (a_dot @ v), axis=-2)


defprim(
    "linalg.svd", np.linalg.svd, "(a, full_matrices=True)", family="linalg", results=3,
    note="distinct nonzero singular values; full_matrices=True only for square a "
    "(JAX's); for singular values alone use np.linalg.svdvals",
)


@defvjp("linalg.svd")
def svd_vjp(g, ans, a, full_matrices=True):
    # (u, s, vt), JAX's SVD derivative transposed; f = 1 / (s_j^2 - s_i^2)
    u = ans[0]
    s = np.expand_dims(ans[1], -2)  # a row: scales columns
    vt = ans[2]
    u_t = np.matrix_transpose(u)
    v = np.matrix_transpose(vt)
    s_t = np.matrix_transpose(s)
    eye = np.eye(np.shape(s)[-1])
    f = 1 / (s**2 - s_t**2 + eye) - eye
    j = f * (u_t @ g[0])
    k = f * (vt @ np.matrix_transpose(g[2]))
    core = (j + np.matrix_transpose(j)) * s + s_t * (k + np.matrix_transpose(k))
    core = core + np.expand_dims(g[1], -2) * eye
    u_rest = (g[0] - u @ (u_t @ g[0])) / s  # beyond u's columns (a tall a)
    v_rest = (g[2] - (g[2] @ v) @ vt) / s_t  # beyond v's columns (a wide a)
    return u @ core @ vt + u_rest @ vt + u @ v_rest


@defjvp("linalg.svd", "a")
def svd_jvp(a_dot, ans, a, full_matrices=True):
    u = ans[0]
    s = np.expand_dims(ans[1], -2)
    vt = ans[2]
    u_t = np.matrix_transpose(u)
    v = np.matrix_transpose(vt)
    s_t = np.matrix_transpose(s)
    eye = np.eye(np.shape(s)[-1])
    f = 1 / (s**2 - s_t**2 + eye) - eye
    ds = u_t @ a_dot @ v
    u_dot = u @ (f * (ds * s + s_t * np.matrix_transpose(ds)))
    v_dot = v @ (f * (s_t * ds + np.matrix_transpose(ds) * s))
    a_dot_t = np.matrix_transpose(a_dot)
    u_dot = u_dot + (a_dot @ v - u @ (u_t @ a_dot @ v)) / s  # beyond u's columns
    v_dot = v_dot + (a_dot_t @ u - v @ (vt @ a_dot_t @ u)) / s  # beyond v's columns
    return u_dot, np.diagonal(ds, axis1=-2, axis2=-1), np.matrix_transpose(v_dot)


defprim("linalg.svdvals", np.linalg.svdvals, "(x)", family="linalg",
        note="distinct singular values")


@defvjp("linalg.svdvals")
def svdvals_vjp(g, ans, x):
    usv = np.linalg.svd(x, full_matrices=False)
    return (usv[0] * np.expand_dims(g, -2)) @ usv[2]


@defjvp("linalg.svdvals", "x")
def svdvals_jvp(x_dot, ans, x):
    usv = np.linalg.svd(x, full_matrices=False)
    return np.sum(usv[0] * (x_dot @ np.matrix_transpose(usv[2])), axis=-2)


defprim("linalg.qr", np.linalg.qr, "(a, mode='reduced')", family="linalg", results=2,
        note="mode='reduced', a (..., M, N) with M >= N of full rank (JAX's)")


@defvjp("linalg.qr")
def qr_vjp(g, ans, a, mode="reduced"):
    # (q, r): with m = r_bar r^T - q^T q_bar, its upper half copied down,
    # a_bar = (q_bar + q m) r^-T (JAX's QR derivative, transposed)
    q = ans[0]
    r = ans[1]
    m = g[1] @ np.matrix_transpose(r) - np.matrix_transpose(q) @ g[0]
    m = np.triu(m) + np.matrix_transpose(np.triu(m, 1))  # copy the upper half down
    c_bar = g[0] + q @ m
    return np.matrix_transpose(np.linalg.solve(r, np.matrix_transpose(c_bar)))


@defjvp("linalg.qr", "a")
def qr_jvp(a_dot, ans, a, mode="reduced"):
    q = ans[0]
    r = ans[1]
    r_t = np.matrix_transpose(r)
    c = np.matrix_transpose(np.linalg.solve(r_t, np.matrix_transpose(a_dot)))  # a_dot r^-1
    x = np.matrix_transpose(q) @ c
    lower = np.tril(x, -1)
    omega = lower - np.matrix_transpose(lower)
    return q @ (omega - x) + c, (x - omega) @ r


# ---- norms ------------------------------------------------------------------------
# The 2-norm and Frobenius norm inline (x / norm: NaN at 0, as in JAX); the others
# through the runtime's *_norm_grad, which know NumPy's vector/matrix reading.

defprim("linalg.norm", np.linalg.norm, "(x, ord=None, axis=None, keepdims=False)",
        family="linalg",
        note="NaN derivative at 0 for the 2-norm, JAX's; |x|' = 1 at 0; ties share")


@defvjp("linalg.norm")
def norm_vjp(g, ans, x, ord=None, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        ans = np.expand_dims(ans, axis)
    if ord is None or ord == "fro":
        return g * x / ans
    return g * norm_grad(x, ans, ord, axis)


@defjvp("linalg.norm", "x")
def norm_jvp(x_dot, ans, x, ord=None, axis=None, keepdims=False):
    if ord is None or ord == "fro":
        return np.sum(x * x_dot, axis=axis, keepdims=keepdims) / ans
    norm = ans
    if axis is not None and not keepdims:
        norm = np.expand_dims(ans, axis)
    return np.sum(norm_grad(x, norm, ord, axis) * x_dot, axis=axis, keepdims=keepdims)


defprim(
    "linalg.vector_norm", np.linalg.vector_norm,
    "(x, axis=None, keepdims=False, ord=2)", family="linalg", note="NaN derivative at 0 for ord=2, JAX's; |x|' = 1 at 0",
)


@defvjp("linalg.vector_norm")
def vector_norm_vjp(g, ans, x, axis=None, keepdims=False, ord=2):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        ans = np.expand_dims(ans, axis)
    if ord == 2:
        return g * x / ans
    return g * vector_norm_grad(x, ans, ord, axis)


@defjvp("linalg.vector_norm", "x")
def vector_norm_jvp(x_dot, ans, x, axis=None, keepdims=False, ord=2):
    if ord == 2:
        return np.sum(x * x_dot, axis=axis, keepdims=keepdims) / ans
    norm = ans
    if axis is not None and not keepdims:
        norm = np.expand_dims(ans, axis)
    grad = vector_norm_grad(x, norm, ord, axis)
    return np.sum(grad * x_dot, axis=axis, keepdims=keepdims)


defprim("linalg.matrix_norm", np.linalg.matrix_norm, "(x, keepdims=False, ord='fro')",
        family="linalg",
        note="norms of the last two axes; NaN derivative at 0 for 'fro'")


@defvjp("linalg.matrix_norm")
def matrix_norm_vjp(g, ans, x, keepdims=False, ord="fro"):
    if not keepdims:
        g = np.expand_dims(g, (-2, -1))
        ans = np.expand_dims(ans, (-2, -1))
    if ord == "fro":
        return g * x / ans
    return g * matrix_norm_grad(x, ans, ord)


@defjvp("linalg.matrix_norm", "x")
def matrix_norm_jvp(x_dot, ans, x, keepdims=False, ord="fro"):
    norm = ans
    if not keepdims:
        norm = np.expand_dims(ans, (-2, -1))
    grad = matrix_norm_grad(x, norm, ord)
    return np.sum(grad * x_dot, axis=(-2, -1), keepdims=keepdims)


defprim("linalg.matrix_rank", np.linalg.matrix_rank, "(A, tol=None, hermitian=False)",
        family="linalg", nondiff=True, note="an integer: no derivative flows")


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


@defjvp("polyval", "p")
def polyval_jvp_p(p_dot, ans, p, x):
    return np.polyval(p_dot, x)


@defjvp("polyval", "x")
def polyval_jvp_x(x_dot, ans, p, x):
    n = np.shape(p)[0]
    coefficients = np.moveaxis(p, 0, -1)
    slopes = np.arange(n - 1, 0, -1) * np.expand_dims(x, -1) ** np.arange(n - 2, -1, -1)
    return x_dot * np.sum(coefficients[..., :-1] * slopes, axis=-1)


defprim("polyder", np.polyder, "(p, m=1)", diff=("p",), family="linalg",
        note="linear: coefficient k times (n-1-k)!/(n-1-k-m)!, m < len(p)")


@defvjp("polyder")
def polyder_vjp(g, ans, p, m=1):
    factors = np.polyder(np.ones(np.size(p)), m)
    return (g * factors) @ np.eye(np.size(g), np.size(p))


@defjvp("polyder", "p")
def polyder_jvp(p_dot, ans, p, m=1):
    return np.polyder(p_dot, m)


defprim("polyint", np.polyint, "(p, m=1, k=None)", diff=("p",), family="linalg",
        note="linear in p; the integration constants k are constants (no derivative)")


@defvjp("polyint")
def polyint_vjp(g, ans, p, m=1, k=None):
    factors = np.polyint(np.ones(np.size(p)), m)[: np.size(p)]
    return g[: np.size(p)] * factors


@defjvp("polyint", "p")
def polyint_jvp(p_dot, ans, p, m=1, k=None):
    return np.polyint(p_dot, m)


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


# ---- condition number, tensor inverse and solve ------------------------------------

defprim(
    "linalg.cond", np.linalg.cond, "(x)", family="linalg",
    note="the 2-norm condition number s_max / s_min (no p argument); ds_i = u_i' dx v_i",
)


@defvjp("linalg.cond")
def cond_vjp(g, ans, x):
    usv = np.linalg.svd(x, full_matrices=False)
    u = usv[0]
    s = usv[1]
    vt = usv[2]
    top = u[..., :, :1] @ vt[..., :1, :]
    bottom = u[..., :, -1:] @ vt[..., -1:, :]
    ratio = np.expand_dims(ans, (-2, -1))
    return np.expand_dims(g, (-2, -1)) * (top - ratio * bottom) / s[..., -1:, None]


@defjvp("linalg.cond", "x")
def cond_jvp(x_dot, ans, x):
    usv = np.linalg.svd(x, full_matrices=False)
    u = usv[0]
    s = usv[1]
    vt = usv[2]
    top = np.sum(u[..., :, :1] @ vt[..., :1, :] * x_dot, axis=(-2, -1))
    bottom = np.sum(u[..., :, -1:] @ vt[..., -1:, :] * x_dot, axis=(-2, -1))
    return (top - ans * bottom) / s[..., -1]


defprim(
    "linalg.tensorinv", np.linalg.tensorinv, "(a, ind=2)", diff=("a",), family="linalg",
    note="the inverse of a reshaped to a square matrix, reshaped back: inv's rules",
)


@defvjp("linalg.tensorinv")
def tensorinv_vjp(g, ans, a, ind=2):
    inv = np.reshape(ans, (-1, np.prod(np.shape(a)[:ind])))
    inv_t = np.matrix_transpose(inv)
    return np.reshape(-inv_t @ np.reshape(g, np.shape(inv)) @ inv_t, np.shape(a))


@defjvp("linalg.tensorinv", "a")
def tensorinv_jvp(a_dot, ans, a, ind=2):
    inv = np.reshape(ans, (-1, np.prod(np.shape(a)[:ind])))
    a_dot = np.reshape(a_dot, (np.shape(inv)[1], -1))
    return np.reshape(-inv @ a_dot @ inv, np.shape(ans))


defprim(
    "linalg.tensorsolve", np.linalg.tensorsolve, "(a, b)", family="linalg",
    note="x with tensordot(a, x, x.ndim) = b (no axes argument): solve's rules on a "
    "reshaped to a square matrix",
)


@defvjp("linalg.tensorsolve")
def tensorsolve_vjp(g, ans, a, b):
    m = np.reshape(a, (np.size(b), -1))
    b_bar = np.linalg.solve(np.matrix_transpose(m), np.ravel(g))
    a_bar = np.reshape(np.outer(b_bar, np.ravel(ans)), np.shape(a))
    return -a_bar, np.reshape(b_bar, np.shape(b))


@defjvp("linalg.tensorsolve", "a")
def tensorsolve_jvp_a(a_dot, ans, a, b):
    m = np.reshape(a, (np.size(b), -1))
    m_dot = np.reshape(a_dot, (np.size(b), -1))
    return -np.reshape(np.linalg.solve(m, m_dot @ np.ravel(ans)), np.shape(ans))


@defjvp("linalg.tensorsolve", "b")
def tensorsolve_jvp_b(b_dot, ans, a, b):
    m = np.reshape(a, (np.size(b), -1))
    return np.reshape(np.linalg.solve(m, np.ravel(b_dot)), np.shape(ans))


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
    return np.correlate(placed, v, "valid"), np.correlate(placed, a, "valid")


@defjvp("convolve", "a")
def convolve_jvp_a(a_dot, ans, a, v, mode="full"):
    return np.convolve(a_dot, v, mode)


@defjvp("convolve", "v")
def convolve_jvp_v(v_dot, ans, a, v, mode="full"):
    return np.convolve(a, v_dot, mode)


defprim("correlate", np.correlate, "(a, v, mode='valid')", family="linalg",
        note="1-D real a and v (np.convolve(a, np.flip(v))), modes valid, same, full")


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
    return a_bar, np.flip(np.correlate(placed, a, "valid"))


@defjvp("correlate", "a")
def correlate_jvp_a(a_dot, ans, a, v, mode="valid"):
    return np.correlate(a_dot, v, mode)


@defjvp("correlate", "v")
def correlate_jvp_v(v_dot, ans, a, v, mode="valid"):
    return np.correlate(a, v_dot, mode)


defprim("polymul", np.polymul, "(a1, a2)", family="linalg",
        note="1-D coefficients: np.convolve(a1, a2), with its rules")


@defvjp("polymul")
def polymul_vjp(g, ans, a1, a2):
    return np.correlate(g, a2, "valid"), np.correlate(g, a1, "valid")


# np.convolve, not np.polymul: polymul drops a tangent's leading zeros (a basis
# direction [0, 1, 0] would give a shorter product than the primal's)


@defjvp("polymul", "a1")
def polymul_jvp_a1(a1_dot, ans, a1, a2):
    return np.convolve(a1_dot, a2)


@defjvp("polymul", "a2")
def polymul_jvp_a2(a2_dot, ans, a1, a2):
    return np.convolve(a1, a2_dot)
