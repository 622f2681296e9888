"""Functions for test_vmap_linalg.py: the batching rules of linear algebra, reductions,
special functions and the runtime helpers, on the cases the rule table does not reach
(operands batched other than the first, ranks that differ, axes of every kind).

Plain NumPy, returning the arrays themselves (so shapes are checked too); the JAX
twin (support.jax_twin rebinds the NumPy import to jax.numpy) runs the same source,
with the runtime helpers' JAX twins (tests/jax_runtime_twins.py).
"""

import numpy as np
import scipy.special as sp

from s2s.runtime import (
    cumprod_bar,
    cumprod_bar_jet,
    cumprod_jet,
    cumprod_tangent,
    dot_lhs_bar,
    dot_rhs_bar,
    einsum_bar,
    kron_lhs_bar,
    kron_rhs_bar,
    matrix_norm_grad,
    multi_dot_bars,
    norm_grad,
    prod_of_others,
    prod_of_others_jet,
    special_log_softmax,
    special_logsumexp,
    special_softmax,
    tensordot_lhs_bar,
    tensordot_rhs_bar,
    vector_norm_grad,
)

if np.__name__ == "jax.numpy":  # this module's JAX twin
    import jax.scipy.special as sp
    from jax_runtime_twins import (  # noqa: F811
        cumprod_bar, cumprod_bar_jet, cumprod_jet, cumprod_tangent, dot_lhs_bar,
        dot_rhs_bar, einsum_bar, kron_lhs_bar, kron_rhs_bar, matrix_norm_grad,
        multi_dot_bars, norm_grad, prod_of_others, prod_of_others_jet,
        special_log_softmax, special_logsumexp, special_softmax, tensordot_lhs_bar,
        tensordot_rhs_bar, vector_norm_grad,
    )


# ---- products -------------------------------------------------------------------------


def v_tensordot(x, y):  # x (2, 3, 4), y (4, 3)
    return (np.tensordot(x, y, axes=1), np.tensordot(x, y, axes=([1, 2], [1, 0])),
            np.tensordot(x, y, 0))


def v_dot_inner(x, y):  # x (2, 3, 4), y (5, 4, 2)
    return (np.dot(x, y), np.dot(x, y[0, :, 0]), np.inner(x, y[:3, :, 0]),
            np.vdot(x[0], y[:3, :, 0]), np.dot(2.0, x))


def v_kron(x, y):  # x (2, 3), y (2,)
    return np.kron(x, y), np.kron(y, x), np.kron(x, x * 0.5), np.kron(y, y)


def v_diag(v):  # v (3,)
    return np.diag(v, 1), np.diag(v, -2), np.diag(v), np.diag(np.outer(v, v) + 1.0, -1)


def v_vecdot_cross(x, y):  # x (3, 2), y (3, 2)
    return (np.linalg.vecdot(x, y, axis=0), np.vecdot(x.T, y[:, 0]),
            np.cross(x, y, axis=0), np.linalg.cross(x.T, y.T), np.cross(x.T, y[:, 1]))


def v_matvec(m, v):  # m (2, 3, 4), v (4,)
    return np.matvec(m, v), np.vecmat(m[:, :, 0], m), np.vecmat(m[0, :, 0], m)


def v_einsum(x, y):  # x (2, 3, 4), y (4, 3)
    return (np.einsum("...ij,jk", x, y), np.einsum("ijk->", x),
            np.einsum("i...j->...", x), np.einsum("ba,cb", y, x[0]),
            np.einsum("ij,jk->ik", x[0], y, optimize=True))


def v_multi_dot(x, y):  # x (3, 3), y (3, 3)
    return (np.linalg.multi_dot([x, y, x]), np.linalg.multi_dot([y[0], x, y]),
            np.linalg.multi_dot([x, y[:, 1]]))


def v_lstsq(a, b):  # a (5, 2), b (5, 3)
    solution, residuals, rank, sv = np.linalg.lstsq(a, b)
    column, residual, _, _ = np.linalg.lstsq(a, b[:, 0])
    return solution, residuals, rank, sv, column, residual


# ---- reductions and special functions ---------------------------------------------


def v_average(x, w):  # x (2, 3), w (3,)
    return (np.average(x, axis=1, weights=w), np.average(x, axis=-1, weights=w * w),
            np.average(x, weights=x * x + 1.0), np.average(x.T, axis=0, weights=w,
                                                           keepdims=True))


def v_axis_argument(x, ax):  # x (2, 3), ax an int
    return (np.sum(x, axis=ax), np.cumsum(x, axis=ax), np.mean(x, ax),
            np.cumprod(x, axis=ax), sp.softmax(x, axis=ax), np.cumsum(x),
            np.max(x, axis=None))


def v_axis_by_name(x, flag):  # x (2, 3, 3); axes from a branch, a loop, a rank
    if flag > 0:
        ax = 0
    else:
        ax = 1
    total = np.zeros(3)
    k = 0
    for _ in range(2):
        total = total + np.sum(x[0], axis=k)
        k = k + 1
    lead = np.ndim(x) - 1
    return np.sum(x, axis=ax), total, np.tensordot(x, x[0], lead)


def v_special(x):  # x (2, 3)
    return (sp.logsumexp(x), sp.logsumexp(x, axis=1, keepdims=True),
            sp.softmax(x, axis=0), sp.log_softmax(x), special_logsumexp(x, axis=(0, 1)),
            special_softmax(x), special_log_softmax(x, axis=-1), sp.xlogy(x * x, 2.0),
            sp.erf(x))


# ---- the runtime helpers of emitted derivatives ---------------------------------------


def v_tensordot_bars(g, a, b):  # g (2, 2), a (2, 3), b (3, 2)
    return (tensordot_lhs_bar(g, a, b, 1), tensordot_rhs_bar(g, a, b, 1),
            tensordot_lhs_bar(g[0], a, b[:, 0], ([1], [0])))


def v_kron_bars(g, a, b):  # g (4, 6), a (2, 3), b (2, 2)
    return (kron_lhs_bar(g, a, b), kron_rhs_bar(g, a, b),
            kron_lhs_bar(g[:2], a, b[0]), kron_rhs_bar(g[:2], a, b[0]),
            kron_lhs_bar(g[0, :4], b[1], b[0]))


def v_einsum_bars(g, a, b):  # g (2, 2), a (2, 3), b (3, 2)
    return (einsum_bar(g, "ij,jk->ik", [a, b], 0), einsum_bar(g, "ij,jk", [a, b], 1),
            einsum_bar(g[0], "i...,i...->...", [a.T, b], 1))


def v_multi_dot_bars(g, a, b):  # g (2, 2), a (2, 2), b (2, 2)
    bars = multi_dot_bars(g, [a, b])
    return bars[0], bars[1]


def v_dot_bars(g, s, x):  # g (3,), s (), x (3,)
    return (dot_lhs_bar(g, s, x), dot_rhs_bar(g, s, x), dot_lhs_bar(g * s, x, s),
            dot_rhs_bar(g * s, x, s))


def v_dot_bars_high(g, x, y):  # g (2, 3, 5, 2), x (2, 3, 4), y (5, 4, 2)
    return dot_lhs_bar(g, x, y), dot_rhs_bar(g, x, y)


def v_products(a, v):  # a (2, 3) with zeros, v (2, 3)
    return (prod_of_others(a), prod_of_others(a, 0), prod_of_others(a, (0, 1)),
            cumprod_bar(np.ravel(v), a), cumprod_bar(v, a, -1), cumprod_tangent(v, a, 0),
            cumprod_tangent(v, a))


def v_jets(x, h):  # x (2, 2, 3), h (2, 2, 3): jets of two coefficients
    return (cumprod_jet(x), cumprod_jet(x, 1), prod_of_others_jet(x),
            prod_of_others_jet(x, -1), cumprod_bar_jet(np.reshape(h, (2, 6)), x),
            cumprod_bar_jet(h, x, 0))


def v_norm_grads(x):  # x (3, 2), well separated singular values
    rows = np.sum(np.abs(x) ** 3, axis=1, keepdims=True) ** (1 / 3)
    whole = np.sqrt(np.sum(x * x))
    nuclear = np.sum(np.linalg.svdvals(x))
    return (vector_norm_grad(x, rows, 3, 1), vector_norm_grad(x, whole, None),
            vector_norm_grad(x, rows, np.inf, 1), matrix_norm_grad(x, nuclear, "nuc"),
            matrix_norm_grad(x.T, whole, "fro", (1, 0)), norm_grad(x, whole, None, None),
            norm_grad(x[0], rows[0], 1, None), norm_grad(x, rows, 3, 1))
