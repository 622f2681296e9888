"""Linear algebra that inverts or factorises: inverses and solves, factorisations
(Cholesky, eigh, SVD, QR), norms, the condition number and tensor inverse and solve
(the products, diagonals, polynomials and convolutions are in :mod:`.linalg`).

The derivatives of factorisations follow JAX's (its JVP rules, transposed for the
VJPs), including its conventions: cholesky and eigh read their input as symmetric,
(a + a.T) / 2.
"""


import numpy as np

from .. import runtime
from ..ir.nodes import Const, Let
from ..ir.spelling import atom_text
from ..runtime import (
    det_cofactor,
    matrix_norm_grad,
    norm_grad,
    prod_of_others,
    real_only,
    rhs_columns,
    stop_gradient,
    unbroadcast,
    vector_norm_grad,
)
from .batching import (
    Batch,
    NoBatchRule,
    _repeat,
    _static,
    _with_batch,
    align,
    args_text,
    batch_rule,
    only_first_batched,
    operand,
    shifted,
    static,
)
from .registry import call_spelling, defjvp, defprim, defvjp

# ---- inverses and solves ----------------------------------------------------------
# Matrices may be stacked (..., M, M); np.matrix_transpose swaps the last two axes.

defprim("linalg.inv", np.linalg.inv, "(a)", family="linalg", batch="trailing_axes")


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


@batch_rule("linalg.solve")
def solve_rule(b: Batch, s: Let) -> str:
    """NumPy 2 (and JAX) read a 1-D ``b`` as one vector for every matrix of ``a``'s
    stack, and otherwise broadcast the stacks of ``a`` and ``b``.  Batched operands get
    unit axes after the batch axis, so that the batch axis stays in front of both
    stacks; a batched vector is solved as a column of that shape."""
    a, v = s.args
    ra, rv = b.rank(a), b.rank(v)
    if rv == 1:
        if not b.batched(v):  # one vector for every matrix of the batched stack
            return f"np.linalg.solve({atom_text(a)}, {atom_text(v)})"
        column = align(b, v, ra - 1)  # (n, 1, ..., M): lined up with a's stack
        if not column.isidentifier():
            column = f"({column})" if not column.endswith("]") else column
        return f"np.linalg.solve({align(b, a, ra)}, {column}[..., None])[..., 0]"
    rank = max(ra, rv)
    return f"np.linalg.solve({align(b, a, rank)}, {align(b, v, rank)})"


defprim("linalg.det", np.linalg.det, "(a)", family="linalg", batch="trailing_axes",
        note="the cofactor matrix det_cofactor(a, det(a)): det(a) * inv(a).T, or where "
        "a is singular (its least singular value negligible) JAX's adjugate")


@defvjp("linalg.det")
def det_vjp(g, ans, a):
    return np.expand_dims(g, (-2, -1)) * det_cofactor(a, ans)


@defjvp("linalg.det", "a")
def det_jvp(a_dot, ans, a):
    return np.sum(det_cofactor(a, ans) * a_dot, axis=(-2, -1))


defprim("det_cofactor", runtime.det_cofactor, "(a, det_a)", family="runtime",
        spelling=call_spelling("det_cofactor"), diff=("a",),
        note="det's gradient; det_a = det(a) carries no derivative of its own: the "
        "rules take the whole derivative through a, exact at any rank (a third "
        "derivative of det NaN at a singular a)")


# det_cofactor's derivative, det's second.  Invertible a: d(det(a) inv(a).T) =
# det(a) (tr(inv(a) da) inv(a).T - (inv(a) da inv(a)).T).  Singular a (the SVD read as a
# constant; its derivative at a singular a is not the adjugate's): with a = u s vt and
# k = u^H da vt^H, d cof = det(u) det(vt) conj(u) step conj(vt), step = diag(pairs @
# diag(k)) - pairs * k.T, pairs the products of the s other than two (0 on the
# diagonal), exact at any rank, so that det's second derivative is the true one
# (JAX's).  0 * |da|^0.5 adds a derivative which is NaN there (det's third derivative
# is NaN, not a wrong number).  The VJP is the transpose of each branch (pairs is
# symmetric).  Each branch reads a matrix where the other is taken: the one not taken
# passes no NaN back.
@defjvp("det_cofactor", "a")
def det_cofactor_jvp(a_dot, ans, a, det_a):
    usv = np.linalg.svd(stop_gradient(a))
    top = np.sum(usv[1][..., :1], axis=-1)  # (0 x 0: 0)
    # singular: the least below n * eps * top, NumPy's matrix_rank's tolerance
    least = np.sum(usv[1][..., -1:], axis=-1) / (2 * np.shape(a)[-1])
    singular = np.expand_dims(top + least == top, (-2, -1))
    spread = np.diag(np.arange(1, np.shape(a)[-1] + 1)) + np.zeros_like(a)
    at = np.where(singular, a, spread)
    da = at - stop_gradient(at)
    nan_later = 0.0 * np.sum(np.abs(da) ** 0.5, axis=(-2, -1), keepdims=True)
    turn = np.expand_dims(np.linalg.det(usv[0]) * np.linalg.det(usv[2]), (-2, -1))
    eye = np.eye(np.shape(a)[-1]) == 1
    pairs = np.where(eye, 0, prod_of_others(np.where(eye, 1, usv[1][..., None, :]), -1))
    inv_t = np.linalg.inv(np.matrix_transpose(np.where(singular, spread, a)))
    u_c, vt_c = np.conj(usv[0]), np.conj(usv[2])
    k = np.matrix_transpose(u_c) @ a_dot @ np.matrix_transpose(vt_c)
    k_diag = np.sum(pairs * np.diagonal(k, axis1=-2, axis2=-1)[..., None, :], axis=-1)
    step = np.where(eye, k_diag[..., :, None], 0) - pairs * np.matrix_transpose(k)
    adj_dot = turn * (u_c @ step @ vt_c) + nan_later
    tr = np.sum(inv_t * a_dot, axis=(-2, -1), keepdims=True)
    inv_dot = inv_t @ np.matrix_transpose(a_dot) @ inv_t
    cof_dot = np.expand_dims(det_a, (-2, -1)) * (tr * inv_t - inv_dot)
    return np.where(singular, adj_dot, cof_dot)


@defvjp("det_cofactor")
def det_cofactor_vjp(g, ans, a, det_a):
    usv = np.linalg.svd(stop_gradient(a))
    top = np.sum(usv[1][..., :1], axis=-1)  # (0 x 0: 0)
    # singular: the least below n * eps * top, NumPy's matrix_rank's tolerance
    least = np.sum(usv[1][..., -1:], axis=-1) / (2 * np.shape(a)[-1])
    singular = np.expand_dims(top + least == top, (-2, -1))
    spread = np.diag(np.arange(1, np.shape(a)[-1] + 1)) + np.zeros_like(a)
    at = np.where(singular, a, spread)
    da = at - stop_gradient(at)
    nan_later = 0.0 * np.sum(np.abs(da) ** 0.5, axis=(-2, -1), keepdims=True)
    turn = np.expand_dims(np.linalg.det(usv[0]) * np.linalg.det(usv[2]), (-2, -1))
    eye = np.eye(np.shape(a)[-1]) == 1
    pairs = np.where(eye, 0, prod_of_others(np.where(eye, 1, usv[1][..., None, :]), -1))
    inv_t = np.linalg.inv(np.matrix_transpose(np.where(singular, spread, a)))
    u_c, vt_c = np.conj(usv[0]), np.conj(usv[2])
    step_bar = turn * (np.matrix_transpose(u_c) @ g @ np.matrix_transpose(vt_c))
    s_diag = np.sum(pairs * np.diagonal(step_bar, axis1=-2, axis2=-1)[..., None, :], axis=-1)
    k_bar = np.where(eye, s_diag[..., :, None], 0) - np.matrix_transpose(pairs * step_bar)
    adj_bar = u_c @ k_bar @ vt_c + nan_later
    tr_bar = np.sum(g * inv_t, axis=(-2, -1), keepdims=True)
    inv_bar = inv_t @ np.matrix_transpose(g) @ inv_t
    cof_bar = np.expand_dims(det_a, (-2, -1)) * (tr_bar * inv_t - inv_bar)
    return np.where(singular, adj_bar, cof_bar)


@batch_rule("det_cofactor")
def det_cofactor_rule(b: Batch, s: Let) -> str:
    """Batched over its leading axes: each operand with the batch axis in front."""
    return f"det_cofactor({_with_batch(b, s.args[0])}, {_with_batch(b, s.args[1])})"


defprim("linalg.slogdet", np.linalg.slogdet, "(a)", family="linalg",
        batch="trailing_axes", results=2,
        note="(sign, logabsdet): the sign is piecewise constant, no derivative flows")


@defvjp("linalg.slogdet")
def slogdet_vjp(g, ans, a):
    # d logabsdet = Re(tr), d sign = sign * 1j * Im(tr), tr = trace(a^-1 da) (JAX's);
    # of a real a the sign carries nothing (unbroadcast: the real part)
    c = np.real(g[1]) + 1j * np.imag(g[0] * ans[0])
    return unbroadcast(np.expand_dims(c, (-2, -1)) * np.linalg.inv(np.matrix_transpose(a)), a)


@defjvp("linalg.slogdet", "a")
def slogdet_jvp(a_dot, ans, a):
    tr = np.trace(np.linalg.solve(a, a_dot), axis1=-2, axis2=-1)
    return unbroadcast(ans[0] * 1j * np.imag(tr), ans[0]), np.real(tr)


defprim("linalg.matrix_power", np.linalg.matrix_power, "(a, n)", family="linalg",
        batch="trailing_axes",
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
        family="linalg",
        batch="trailing_axes", note="a of full rank (the rank must not change nearby)")


@defvjp("linalg.pinv")
def pinv_vjp(g, ans, a, rcond=None, hermitian=False):
    # transposes the terms of Golub & Pereyra's derivative (JAX's pinv JVP)
    # (of a complex a the terms in a_dot^H are conjugate-linear: their parts conjugated)
    p_t = np.matrix_transpose(ans)
    p_h = np.conj(p_t)
    g_t = np.matrix_transpose(g)
    out_proj = np.eye(np.shape(a)[-2]) - a @ ans  # I - a pinv(a)
    in_proj = np.eye(np.shape(a)[-1]) - ans @ a  # I - pinv(a) a
    return -p_t @ g @ p_t + np.conj(out_proj @ g_t @ ans @ p_h + p_h @ ans @ g_t @ in_proj)


@defjvp("linalg.pinv", "a")
def pinv_jvp(a_dot, ans, a, rcond=None, hermitian=False):
    p_h = np.conj(np.matrix_transpose(ans))
    a_dot_h = np.conj(np.matrix_transpose(a_dot))
    out_proj = np.eye(np.shape(a)[-2]) - a @ ans
    in_proj = np.eye(np.shape(a)[-1]) - ans @ a
    return (-ans @ a_dot @ ans + ans @ p_h @ a_dot_h @ out_proj
            + in_proj @ a_dot_h @ p_h @ ans)


defprim(
    "linalg.lstsq", np.linalg.lstsq, "(a, b, rcond=None)", family="linalg", results=4,
    note="a (M, N) of full rank; (x, residuals, rank, s): rank is an integer, "
    "residuals are empty unless M > N",
)


@defvjp("linalg.lstsq")
def lstsq_vjp(g, ans, a, b, rcond=None):
    # x = pinv(a) @ b; residuals = |b - a x|^2 per column; s = a's singular values
    p = real_only(np.linalg.pinv(a), "np.linalg.lstsq")
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
    p = real_only(np.linalg.pinv(a), "np.linalg.lstsq")
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
    residual = real_only(b - a @ ans[0], "np.linalg.lstsq")
    res_dot = 2 * np.sum(residual * b_dot, axis=0)
    res_dot = np.reshape(res_dot, np.shape(ans[1])) if np.size(ans[1]) else ans[1] * 0.0
    x_dot = np.linalg.pinv(a) @ b_dot
    return x_dot, res_dot, np.zeros_like(ans[2]), np.zeros_like(ans[3])


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


# ---- factorisations ---------------------------------------------------------------
# JAX reads the input of cholesky and eigh as symmetric, (a + a.T) / 2: so do these
# rules (NumPy reads one triangle), and their cotangents are symmetric.

defprim("linalg.cholesky", np.linalg.cholesky, "(a, upper=False)", family="linalg",
        batch="trailing_axes",
        note="symmetric positive definite a; symmetric cotangent (JAX's convention)")


@defvjp("linalg.cholesky")
def cholesky_vjp(g, ans, a, upper=False):
    # l = cholesky(a): a_bar = sym(l^-T phi(l^T g) l^-1), phi: the lower triangle with
    # the diagonal halved (the transpose of JAX's Cholesky derivative)
    l = ans
    if upper:  # u = l^H
        l = np.conj(np.matrix_transpose(ans))
        g = np.conj(np.matrix_transpose(g))
    # (of a complex a: conjugate transposes, and the cotangent conjugated, JAX's)
    l_h = np.conj(np.matrix_transpose(l))
    p = l_h @ np.conj(g)
    p = np.tril(p) - 0.5 * p * np.eye(np.shape(a)[-1])
    s = np.linalg.solve(l_h, np.conj(np.matrix_transpose(np.linalg.solve(l_h, p))))
    return np.conj(s + np.conj(np.matrix_transpose(s))) / 2


@defjvp("linalg.cholesky", "a")
def cholesky_jvp(a_dot, ans, a, upper=False):
    # l_dot = l phi(l^-1 sym(a_dot) l^-T)
    l = ans
    if upper:  # u = l^H
        l = np.conj(np.matrix_transpose(ans))
    sym = (a_dot + np.conj(np.matrix_transpose(a_dot))) / 2
    x = np.linalg.solve(l, np.conj(np.matrix_transpose(np.linalg.solve(l, sym))))
    l_dot = l @ (np.tril(x) - 0.5 * x * np.eye(np.shape(a)[-1]))
    if upper:
        return np.conj(np.matrix_transpose(l_dot))
    return l_dot


defprim("linalg.eigh", np.linalg.eigh, "(a, UPLO='L')", family="linalg",
        batch="trailing_axes", results=2,
        note="symmetric a with distinct eigenvalues; symmetric cotangent (JAX's)")


@defvjp("linalg.eigh")
def eigh_vjp(g, ans, a, UPLO="L"):
    # (w, v): a_bar = v (diag(w_bar) + f * (v^T v_bar)) v^T, f = 1 / (w_j - w_i)
    w = ans[0]
    v = real_only(ans[1], "np.linalg.eigh")
    eye = np.eye(np.shape(a)[-1])
    f = 1 / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye) - eye
    inner = f * (np.matrix_transpose(v) @ g[1]) + np.expand_dims(g[0], -2) * eye
    a_bar = v @ inner @ np.matrix_transpose(v)
    return (a_bar + np.matrix_transpose(a_bar)) / 2


@defjvp("linalg.eigh", "a")
def eigh_jvp(a_dot, ans, a, UPLO="L"):
    w = ans[0]
    v = real_only(ans[1], "np.linalg.eigh")
    eye = np.eye(np.shape(a)[-1])
    f = 1 / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye) - eye
    sym = (a_dot + np.matrix_transpose(a_dot)) / 2
    x = np.matrix_transpose(v) @ sym @ v
    return np.diagonal(x, axis1=-2, axis2=-1), v @ (f * x)


defprim("linalg.eigvalsh", np.linalg.eigvalsh, "(a, UPLO='L')", family="linalg",
        batch="trailing_axes",
        note="symmetric a with distinct eigenvalues")


@defvjp("linalg.eigvalsh")
def eigvalsh_vjp(g, ans, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]  # dw_i = Re(v_i^H da v_i), a Hermitian
    return np.conj(v * np.expand_dims(np.real(g), -2)) @ np.matrix_transpose(v)


@defjvp("linalg.eigvalsh", "a")
def eigvalsh_jvp(a_dot, ans, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    return np.sum(np.real(np.conj(v) * (a_dot @ v)), axis=-2)


# eig of a general square matrix: JAX's JVP (nondegenerate perturbation theory), its
# transpose for the VJP.  The eigenvalues are complex (real where NumPy's came out
# real: their derivatives are then real too).  The eigenvectors are LAPACK's, as JAX
# differentiates them (jax.lax.linalg.eig(..., enable_eigvec_derivs=True)): each of
# unit 2-norm with its largest-magnitude component real, which fixes the free factor
# c_j of dv_j = u_j + c_j v_j.  f = 1 / (w_j - w_i): distinct eigenvalues.  At a
# repeated eigenvalue (JAX's eigenvectors' derivative is undefined there, its grad of
# eig refused altogether): the eigenvalues' derivative is eigvals' (JAX's), the
# eigenvectors' NaN where the tangent or cotangent reaches them.

defprim("linalg.eig", np.linalg.eig, "(a)", family="linalg", batch="trailing_axes",
        results=2,
        note="distinct eigenvalues; eigenvectors as LAPACK normalises them (JAX's "
        "lax.linalg.eig with enable_eigvec_derivs=True)")


@defvjp("linalg.eig")
def eig_vjp(g, ans, a):
    w = ans[0]
    v = ans[1]
    eye = np.eye(np.shape(a)[-1])
    f = 1 / (eye + np.expand_dims(w, -2) - np.expand_dims(w, -1)) - eye
    # c_j's two constraints: Re(v_j^H dv_j) = 0 and Im(dv_kj) = 0, k the largest |v_kj|
    top = np.argmax(np.abs(v), axis=-2)
    mask = np.expand_dims(np.arange(np.shape(a)[-1]), -1) == np.expand_dims(top, -2)
    h = np.sum(g[1] * v, axis=-2, keepdims=True)
    peak = np.real(np.sum(mask * v, axis=-2, keepdims=True))
    u_bar = g[1] - np.real(h) * np.conj(v) - 1j * mask * (np.imag(h) / peak)
    # (at a repeated eigenvalue f is inf: the eigenvectors' derivative is undefined
    # there, NaN, where their cotangent reaches it; where it does not, as when only w
    # is read, eigvals' derivative)
    u_part = np.matrix_transpose(v) @ u_bar
    p_bar = np.where(u_part == 0, 0.0, f * u_part) + eye * np.expand_dims(g[0], -2)
    a_bar = np.linalg.solve(np.matrix_transpose(v), p_bar @ np.matrix_transpose(v))
    return unbroadcast(a_bar, a)


@defjvp("linalg.eig", "a")
def eig_jvp(a_dot, ans, a):
    w = ans[0]
    v = ans[1]
    eye = np.eye(np.shape(a)[-1])
    f = 1 / (eye + np.expand_dims(w, -2) - np.expand_dims(w, -1)) - eye
    p = np.linalg.solve(v, a_dot @ v)  # v^-1 da v
    u = v @ (f * p)
    top = np.argmax(np.abs(v), axis=-2)
    mask = np.expand_dims(np.arange(np.shape(a)[-1]), -1) == np.expand_dims(top, -2)
    peak = np.real(np.sum(mask * v, axis=-2, keepdims=True))
    c = -np.real(np.sum(np.conj(v) * u, axis=-2, keepdims=True)) - 1j * np.imag(
        np.sum(mask * u, axis=-2, keepdims=True)) / peak
    w_dot = np.diagonal(p, axis1=-2, axis2=-1)
    return unbroadcast(w_dot, w), unbroadcast(u + v * c, v)


defprim("linalg.eigvals", np.linalg.eigvals, "(a)", family="linalg",
        batch="trailing_axes",
        note="distinct eigenvalues; complex (real where NumPy's came out real)")


@defvjp("linalg.eigvals")
def eigvals_vjp(g, ans, a):
    v = np.linalg.eig(a)[1]  # dw_i = (v^-1 da v)_ii: a_bar = v^-T diag(g) v^T
    a_bar = np.linalg.solve(np.matrix_transpose(v), np.expand_dims(g, -1) * np.matrix_transpose(v))
    return unbroadcast(a_bar, a)


@defjvp("linalg.eigvals", "a")
def eigvals_jvp(a_dot, ans, a):
    v = np.linalg.eig(a)[1]
    w_dot = np.sum(np.linalg.solve(v, a_dot) * np.matrix_transpose(v), axis=-1)
    return unbroadcast(w_dot, ans)  # (real where the eigenvalues are)


defprim(
    "linalg.svd", np.linalg.svd, "(a, full_matrices=True)", family="linalg",
    batch="trailing_axes", results=3,
    note="distinct nonzero singular values; full_matrices=True only for square a "
    "(JAX's); for singular values alone use np.linalg.svdvals",
)


@defvjp("linalg.svd")
def svd_vjp(g, ans, a, full_matrices=True):
    # (u, s, vt), JAX's SVD derivative transposed; f = 1 / (s_j^2 - s_i^2)
    u = real_only(ans[0], "np.linalg.svd")
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
    u = real_only(ans[0], "np.linalg.svd")
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


defprim("linalg.svdvals", np.linalg.svdvals, "(x)", family="linalg", batch="trailing_axes",
        note="distinct singular values")


@defvjp("linalg.svdvals")
def svdvals_vjp(g, ans, x):
    usv = np.linalg.svd(x, full_matrices=False)  # ds_i = Re(u_i^H dx v_i)
    return np.conj((usv[0] * np.expand_dims(np.real(g), -2)) @ usv[2])


@defjvp("linalg.svdvals", "x")
def svdvals_jvp(x_dot, ans, x):
    usv = np.linalg.svd(x, full_matrices=False)
    v = np.conj(np.matrix_transpose(usv[2]))
    return np.sum(np.real(np.conj(usv[0]) * (x_dot @ v)), axis=-2)


defprim("linalg.qr", np.linalg.qr, "(a, mode='reduced')", family="linalg",
        batch="trailing_axes", results=2,
        note="mode='reduced', a (..., M, N) with M >= N of full rank (JAX's)")


@defvjp("linalg.qr")
def qr_vjp(g, ans, a, mode="reduced"):
    # (q, r): with m = r_bar r^T - q^T q_bar, its upper half copied down,
    # a_bar = (q_bar + q m) r^-T (JAX's QR derivative, transposed)
    q = real_only(ans[0], "np.linalg.qr")
    r = ans[1]
    m = g[1] @ np.matrix_transpose(r) - np.matrix_transpose(q) @ g[0]
    m = np.triu(m) + np.matrix_transpose(np.triu(m, 1))  # copy the upper half down
    c_bar = g[0] + q @ m
    return np.matrix_transpose(np.linalg.solve(r, np.matrix_transpose(c_bar)))


@defjvp("linalg.qr", "a")
def qr_jvp(a_dot, ans, a, mode="reduced"):
    q = real_only(ans[0], "np.linalg.qr")
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
    g = np.real(g)  # (the cotangent of a real value)
    if ord is None or ord == "fro":
        return g * np.conj(x) / ans
    return g * norm_grad(x, ans, ord, axis)


@defjvp("linalg.norm", "x")
def norm_jvp(x_dot, ans, x, ord=None, axis=None, keepdims=False):
    if ord is None or ord == "fro":
        return np.sum(np.real(np.conj(x) * x_dot), axis=axis, keepdims=keepdims) / ans
    norm = ans
    if axis is not None and not keepdims:
        norm = np.expand_dims(ans, axis)
    return np.sum(np.real(norm_grad(x, norm, ord, axis) * x_dot), axis=axis,
                  keepdims=keepdims)


@batch_rule("linalg.norm")
def norm_rule(b: Batch, s: Let) -> str:
    only_first_batched(b, s)
    r = b.rank(s.args[0])
    axis = static(s, "axis")
    if axis is None and r > 2:
        raise NoBatchRule("np.linalg.norm without an axis of an array with more than "
                          "two axes")
    return args_text(s, [atom_text(s.args[0])], {"axis": shifted(axis, r)})


defprim(
    "linalg.vector_norm", np.linalg.vector_norm,
    "(x, axis=None, keepdims=False, ord=2)", family="linalg", note="NaN derivative at 0 for ord=2, JAX's; |x|' = 1 at 0",
)


@defvjp("linalg.vector_norm")
def vector_norm_vjp(g, ans, x, axis=None, keepdims=False, ord=2):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        ans = np.expand_dims(ans, axis)
    g = np.real(g)  # (the cotangent of a real value)
    if ord == 2:
        return g * np.conj(x) / ans
    return g * vector_norm_grad(x, ans, ord, axis)


@defjvp("linalg.vector_norm", "x")
def vector_norm_jvp(x_dot, ans, x, axis=None, keepdims=False, ord=2):
    if ord == 2:
        return np.sum(np.real(np.conj(x) * x_dot), axis=axis, keepdims=keepdims) / ans
    norm = ans
    if axis is not None and not keepdims:
        norm = np.expand_dims(ans, axis)
    grad = vector_norm_grad(x, norm, ord, axis)
    return np.sum(np.real(grad * x_dot), axis=axis, keepdims=keepdims)


@batch_rule("linalg.vector_norm")
def vector_norm_rule(b: Batch, s: Let) -> str:
    only_first_batched(b, s)
    return args_text(s, [atom_text(s.args[0])],
                     {"axis": shifted(static(s, "axis"), b.rank(s.args[0]))})


defprim("linalg.matrix_norm", np.linalg.matrix_norm, "(x, keepdims=False, ord='fro')",
        family="linalg", batch="trailing_axes",
        note="norms of the last two axes; NaN derivative at 0 for 'fro'")


@defvjp("linalg.matrix_norm")
def matrix_norm_vjp(g, ans, x, keepdims=False, ord="fro"):
    if not keepdims:
        g = np.expand_dims(g, (-2, -1))
        ans = np.expand_dims(ans, (-2, -1))
    g = np.real(g)  # (the cotangent of a real value)
    if ord == "fro":
        return g * np.conj(x) / ans
    return g * matrix_norm_grad(x, ans, ord)


@defjvp("linalg.matrix_norm", "x")
def matrix_norm_jvp(x_dot, ans, x, keepdims=False, ord="fro"):
    norm = ans
    if not keepdims:
        norm = np.expand_dims(ans, (-2, -1))
    grad = matrix_norm_grad(x, norm, ord)
    return np.sum(np.real(grad * x_dot), axis=(-2, -1), keepdims=keepdims)


defprim("linalg.matrix_rank", np.linalg.matrix_rank, "(A, tol=None, hermitian=False)",
        family="linalg",
        batch="trailing_axes", nondiff=True, note="an integer: no derivative flows")


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
    ratio = np.expand_dims(ans, (-2, -1))  # (conjugated: ds_i = Re(conj(u_i vh_i) dx))
    g = np.expand_dims(np.real(g), (-2, -1))
    return g * np.conj(top - ratio * bottom) / s[..., -1:, None]


@defjvp("linalg.cond", "x")
def cond_jvp(x_dot, ans, x):
    usv = np.linalg.svd(x, full_matrices=False)
    u = usv[0]
    s = usv[1]
    vt = usv[2]
    top = np.sum(np.real(np.conj(u[..., :, :1] @ vt[..., :1, :]) * x_dot), axis=(-2, -1))
    bottom = np.sum(np.real(np.conj(u[..., :, -1:] @ vt[..., -1:, :]) * x_dot),
                    axis=(-2, -1))
    return (top - ans * bottom) / s[..., -1]


@batch_rule("linalg.cond")
def cond_rule(b: Batch, s: Let) -> str:
    """np.linalg.cond works on stacks of matrices."""
    only_first_batched(b, s)
    return args_text(s, [atom_text(a) for a in s.args])


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


@batch_rule("linalg.tensorsolve")
def tensorsolve_rule(b: Batch, s: Let) -> str:
    """A stack of square systems, one per example, solved for one column each."""
    a, rhs = s.args
    n = b.use_batch_size()
    at, bt = _with_batch(b, a), _with_batch(b, rhs)
    square = f"np.reshape({at}, ({n}, np.size({bt}) // {n}, -1))"
    solved = f"np.linalg.solve({square}, np.reshape({bt}, ({n}, -1, 1)))"
    return f"np.reshape({solved}, ({n}, *np.shape({at})[{1 + b.rank(rhs)}:]))"


