"""Rule-table entries for linear algebra (s2s/primitives/linalg.py; rule_fns_linalg.py).

Matrices are drawn well conditioned: diagonally dominant for inverses and solves,
Q diag(spread) Q^T (+ shift) for symmetric ones, U diag(spread) V^T for singular
values, so derivatives that divide by eigenvalue or singular-value gaps are tame.
Several-result primitives (slogdet, eigh, svd, qr, lstsq) are checked end to end here
and rule by rule against JAX in test_linalg_results.py (eig in test_leftovers.py).
"""

import jax.numpy as jnp
import numpy as np

import rule_fns_linalg as F
from rule_table import E2ECase, Row, const, normal


def orthogonal(r, n, batch=()):
    return np.linalg.qr(r.normal(size=(*batch, n, n)))[0]


def dominant(n, *batch):
    """A square matrix (stack) whose diagonal dominates: far from singular."""
    return lambda r: r.normal(size=(*batch, n, n)) + 2.0 * n * np.eye(n)


def symmetric(n, *batch, shift=0.0):
    """Q diag(w) Q^T with well separated eigenvalues w (positive if shift > 0)."""
    def draw(r):
        q = orthogonal(r, n, batch)
        w = np.linspace(-1.5, 2.0, n) + r.uniform(-0.1, 0.1, size=(*batch, n)) + shift
        return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)
    return draw


def spread(m, n, *batch):
    """U diag(s) V^T, (..., m, n), with well separated singular values s."""
    def draw(r):
        k = min(m, n)
        u = orthogonal(r, m, batch)[..., :k]
        v = orthogonal(r, n, batch)[..., :k]
        s = np.linspace(3.0, 1.0, k) + r.uniform(-0.1, 0.1, size=(*batch, k))
        return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)
    return draw


def arrays(*shapes):
    """A list of arrays (a sequence argument); JAX sees them stacked, same result."""
    return lambda r: [r.normal(size=s) for s in shapes]


def values(*items):
    """A fixed array: ties and zeros on purpose."""
    return const(np.array(items, dtype=float))


def pair(prim, variant, s1, s2, params=None, **kw):
    return Row(prim, variant, (normal(*s1), normal(*s2)), params or {}, **kw)


EINSUMS = {  # variant -> (subscripts, operand shapes)
    "matmul": ("ij,jk->ik", ((2, 3), (3, 4))),
    "implicit": ("ij,kj", ((2, 3), (4, 3))),
    "trace": ("ii", ((3, 3),)),
    "diagonal": ("ii->i", ((3, 3),)),
    "batch": ("bij,bjk->bik", ((2, 2, 3), (2, 3, 4))),
    "ellipsis_broadcast": ("...ij,...jk->...ik", ((5, 2, 3), (3, 4))),
    "repeated_and_shared": ("iij,jk->ik", ((2, 2, 3), (3, 4))),
    "three": ("i,ij,j->", ((3,), (3, 4), (4,))),
}

NORMS = {  # variant -> (drawer of x, keyword parameters)
    "default": (normal(2, 3), {}),
    "vector_ord1": (normal(5), {"ord": 1}),
    "vector_ord2": (normal(5), {"ord": 2}),
    "vector_inf": (normal(5), {"ord": np.inf}),
    "vector_neg_inf": (normal(5), {"ord": -np.inf}),
    "vector_ord3": (normal(5), {"ord": 3}),
    "vector_ord_half": (normal(5), {"ord": 0.5}),
    "vector_ord0": (normal(5), {"ord": 0}),
    "nuc": (spread(3, 2), {"ord": "nuc"}),
    "matrix_2": (spread(2, 3), {"ord": 2}),
    "matrix_neg2": (spread(3, 3), {"ord": -2}),
    "matrix_1": (normal(3, 4), {"ord": 1}),
    "matrix_inf": (normal(3, 4), {"ord": np.inf}),
    "matrix_neg_inf": (normal(3, 4), {"ord": -np.inf}),
    "axis_neg_keepdims": (normal(2, 3, 4), {"axis": -1, "keepdims": True}),
    "axis0_ord1": (normal(3, 4), {"axis": 0, "ord": 1}),
    "axis_inf_keepdims": (normal(3, 4), {"axis": 1, "ord": np.inf, "keepdims": True}),
    "axis_pair_fro": (normal(2, 3, 4), {"axis": (0, 2)}),
    "axis_pair_nuc": (spread(3, 2, 2), {"axis": (1, 2), "ord": "nuc"}),
    "axis_pair_2_keepdims": (normal(2, 3, 3), {"axis": (0, 1), "ord": 2,
                                               "keepdims": True}),
    "axis_pair_1": (normal(2, 3, 4), {"axis": (2, 0), "ord": 1}),
    "rank3": (normal(2, 3, 4), {}),
    # JAX's conventions: NaN at 0 for the 2-norm, |x|' = 1 at 0, ties share
    "zero_vector": (values(0.0, 0.0, 0.0), {}),
    "ord1_zeros": (values(0.0, 1.5, 0.0, -2.0), {"ord": 1}),
    "inf_ties": (values(1.0, -3.0, 3.0, 0.0), {"ord": np.inf}),
    "inf_all_zero": (values(0.0, 0.0), {"ord": np.inf}),
    "matrix_1_ties": (const(np.array([[1.0, -2.0], [-2.0, 1.0]])), {"ord": 1}),
}

ROWS = (
    [
        pair("vdot", "reshaped", (2, 3), (3, 2)),
        pair("inner", "vec_vec", (3,), (3,)),
        pair("inner", "vec_mat", (3,), (2, 3)),
        pair("inner", "batch_mat", (2, 2, 3), (4, 3)),
        pair("outer", "vectors", (3,), (4,)),
        pair("outer", "flattened", (2, 3), (2, 2)),
        pair("linalg.outer", "vectors", (3,), (4,)),
        pair("tensordot", "axes2", (2, 3, 4), (3, 4, 5)),
        pair("tensordot", "axes0", (2, 3), (4,), {"axes": 0}),
        pair("tensordot", "pairs", (3, 2, 4), (2, 3, 5), {"axes": ([1, 0], [0, 1])}),
        pair("tensordot", "negative", (2, 3, 4), (4, 5), {"axes": ([-1], [0])}),
        pair("tensordot", "scalar_pairs", (2, 3), (4, 2), {"axes": (0, 1)}),
    ]
    + [
        Row("einsum", v, (const(subscripts), *(normal(*s) for s in shapes)))
        for v, (subscripts, shapes) in EINSUMS.items()
    ]
    + [
        pair("kron", "matrices", (2, 3), (4, 2)),
        pair("kron", "mixed_ranks", (2, 3), (4,)),
        pair("kron", "rank3", (2, 1, 2), (3, 2, 1)),
        Row("trace", "offset", (normal(3, 4),), {"offset": 1}),
        Row("trace", "neg_offset", (normal(4, 3),), {"offset": -2}),
        Row("trace", "neg_axes", (normal(3, 2, 4),), {"axis1": -1, "axis2": 0}),
        Row("linalg.trace", "offset", (normal(2, 3, 4),), {"offset": 1}),
        Row("diagonal", "wide_offset", (normal(3, 5),), {"offset": 1}),
        Row("diagonal", "tall_neg_offset", (normal(4, 3),), {"offset": -1}),
        Row("diagonal", "offset_axes", (normal(3, 2, 4),), {"offset": 2, "axis1": -1,
                                                             "axis2": 0}),
        Row("linalg.diagonal", "offset", (normal(2, 3, 4),), {"offset": -1}),
        Row("diag", "vector_k", (normal(3),), {"k": 1}),
        Row("diag", "vector_neg_k", (normal(2),), {"k": -2}),
        Row("diag", "wide_k", (normal(3, 4),), {"k": 1}),
        Row("diag", "tall_neg_k", (normal(4, 3),), {"k": -1}),
        Row("tril", "wide_k", (normal(3, 4),), {"k": 1}),
        Row("tril", "batch_neg_k", (normal(2, 3, 3),), {"k": -1}),
        Row("triu", "tall_k", (normal(4, 3),), {"k": -1}),
        Row("triu", "batch_k", (normal(2, 3, 3),), {"k": 1}),
        pair("cross", "broadcast", (4, 3), (3,)),
        pair("cross", "axis0", (3, 4), (3, 4), {"axisa": 0, "axisb": 0, "axisc": 0}),
        pair("linalg.cross", "broadcast", (3,), (2, 3)),
        pair("vecdot", "broadcast", (2, 3), (3,)),
        pair("vecdot", "axis0", (3, 2), (3, 1), {"axis": 0}),
        pair("linalg.vecdot", "broadcast", (4, 1, 3), (2, 3), {"axis": -1}),
        pair("matvec", "batch_matrix", (4, 2, 3), (3,)),
        pair("matvec", "batch_vector", (2, 3), (4, 3)),
        pair("vecmat", "batch_vector", (4, 3), (3, 2)),
        pair("vecmat", "batch_matrix", (3,), (4, 3, 2)),
        Row("linalg.multi_dot", "three", (arrays((3, 3), (3, 3), (3, 3)),)),
        Row("matrix_transpose", "batch", (normal(2, 3, 4),)),
        Row("linalg.matrix_transpose", "matrix", (normal(3, 4),)),
        Row("linalg.inv", "batch", (dominant(3, 2),)),
        Row("linalg.solve", "vector", (dominant(3), normal(3))),
        Row("linalg.solve", "batch_vector", (dominant(3, 2), normal(3))),
        Row("linalg.solve", "broadcast_b", (dominant(3), normal(2, 3, 2))),
        Row("linalg.solve", "broadcast_a", (dominant(3, 2, 1), normal(3, 3, 2))),
        Row("linalg.det", "batch", (dominant(2, 3),)),
        Row("linalg.matrix_power", "cube", (dominant(3), const(3))),
        Row("linalg.matrix_power", "zero", (dominant(3), const(0))),
        Row("linalg.matrix_power", "inverse", (dominant(3), const(-1))),
        Row("linalg.matrix_power", "inverse_square", (dominant(3, 2), const(-2))),
        Row("linalg.pinv", "tall", (spread(4, 3),)),
        Row("linalg.pinv", "wide", (spread(2, 4),)),
        Row("linalg.pinv", "batch", (spread(4, 2, 2),)),
        Row("linalg.cholesky", "batch", (symmetric(3, 2, shift=3.0),)),
        Row("linalg.cholesky", "upper", (symmetric(4, shift=3.0),), {"upper": True}),
        Row("linalg.eigvalsh", "batch", (symmetric(4, 2),)),
        Row("linalg.eigvals", "matrix", (normal(3, 3),)),
        Row("linalg.eigvals", "batch", (normal(2, 4, 4),)),
        # NumPy's eigenvalues come out real here, JAX's complex (with zero imaginary
        # parts): compared with the real part of JAX's
        Row("linalg.eigvals", "real_eigenvalues", (symmetric(3),),
            jax=lambda a: jnp.real(jnp.linalg.eigvals(a))),
        Row("linalg.svdvals", "wide", (spread(2, 3),)),
        Row("linalg.svdvals", "batch", (spread(3, 3, 2),)),
    ]
    + [Row("linalg.norm", v, (x,), params) for v, (x, params) in NORMS.items()]
    + [
        Row("linalg.vector_norm", "default", (normal(2, 3),)),
        Row("linalg.vector_norm", "ord1_axis", (normal(2, 3),), {"ord": 1, "axis": 0}),
        Row("linalg.vector_norm", "inf_tuple_keepdims", (normal(2, 3, 4),),
            {"ord": np.inf, "axis": (0, 2), "keepdims": True}),
        Row("linalg.vector_norm", "ord3_neg_axis", (normal(2, 3),),
            {"ord": 3, "axis": -1}),
        Row("linalg.matrix_norm", "batch_keepdims", (normal(2, 3, 4),),
            {"keepdims": True}),
        Row("linalg.matrix_norm", "nuc", (spread(3, 2),), {"ord": "nuc"}),
        Row("linalg.matrix_norm", "two_batch", (spread(3, 2, 2),), {"ord": 2}),
        Row("linalg.matrix_norm", "one", (normal(3, 4),), {"ord": 1}),
        Row("linalg.matrix_norm", "inf_keepdims", (normal(2, 3, 4),),
            {"ord": np.inf, "keepdims": True}),
    ]
)

E2E = [
    E2ECase(F.f_vdot, ("vdot",), (normal(2, 3), normal(3, 2))),
    E2ECase(F.f_inner, ("inner",), (normal(2, 3), normal(4, 3))),
    E2ECase(F.f_outer, ("outer",), (normal(3), normal(2, 2))),
    E2ECase(F.f_linalg_outer, ("linalg.outer",), (normal(3), normal(2))),
    E2ECase(F.f_tensordot, ("tensordot",), (normal(3, 2, 4), normal(2, 3, 5))),
    E2ECase(F.f_einsum_implicit, ("einsum",), (normal(2, 3), normal(4, 3))),
    E2ECase(F.f_einsum_diagonal, ("einsum",), (normal(3, 3),)),
    E2ECase(F.f_einsum_three, ("einsum",), (normal(2, 3), normal(3, 3))),
    E2ECase(F.f_linalg_aliases, ("matmul", "tensordot"), (normal(2, 3), normal(3, 2))),
    E2ECase(F.f_kron, ("kron",), (normal(2, 3), normal(3, 2))),
    E2ECase(F.f_trace, ("trace",), (normal(3, 3),)),
    E2ECase(F.f_linalg_trace, ("linalg.trace",), (normal(2, 3, 3),)),
    E2ECase(F.f_diagonal, ("diagonal",), (normal(3, 3),)),
    E2ECase(F.f_linalg_diagonal, ("linalg.diagonal",), (normal(3, 3),)),
    E2ECase(F.f_diag_vector, ("diag",), (normal(3),)),
    E2ECase(F.f_diag_matrix, ("diag",), (normal(3, 4),)),
    E2ECase(F.f_tril, ("tril",), (normal(3, 3),)),
    E2ECase(F.f_triu, ("triu",), (normal(3, 3),)),
    E2ECase(F.f_cross, ("cross",), (normal(4, 3), normal(4, 3))),
    E2ECase(F.f_linalg_cross, ("linalg.cross",), (normal(3, 3), normal(3, 3))),
    E2ECase(F.f_vecdot, ("vecdot",), (normal(2, 3), normal(3))),
    E2ECase(F.f_linalg_vecdot, ("linalg.vecdot",), (normal(3, 2), normal(3, 2))),
    E2ECase(F.f_matvec, ("matvec",), (normal(2, 3), normal(3))),
    E2ECase(F.f_vecmat, ("vecmat",), (normal(2, 3), normal(2))),
    E2ECase(F.f_multi_dot, ("linalg.multi_dot",), (normal(3, 3), normal(3, 3))),
    E2ECase(F.f_matrix_transpose, ("matrix_transpose",), (normal(3, 3),)),
    E2ECase(F.f_linalg_matrix_transpose, ("linalg.matrix_transpose",),
            (normal(2, 3, 3),)),
    E2ECase(F.f_inv, ("linalg.inv",), (normal(3, 3),)),
    E2ECase(F.f_solve, ("linalg.solve",), (normal(3, 3), normal(3))),
    E2ECase(F.f_det, ("linalg.det",), (normal(3, 3),)),
    E2ECase(F.f_slogdet, ("linalg.slogdet",), (normal(3, 3),)),
    E2ECase(F.f_matrix_power, ("linalg.matrix_power",), (normal(3, 3),)),
    E2ECase(F.f_pinv, ("linalg.pinv",), (spread(3, 2),)),
    E2ECase(F.f_lstsq, ("linalg.lstsq",), (spread(4, 2), normal(4))),
    E2ECase(F.f_cholesky, ("linalg.cholesky",), (normal(3, 3),)),
    E2ECase(F.f_eigh, ("linalg.eigh",), (symmetric(3),)),
    E2ECase(F.f_eigvalsh, ("linalg.eigvalsh",), (normal(3, 3),)),
    E2ECase(F.f_eigvals, ("linalg.eigvals",), (normal(3, 3),)),
    # (JAX's jnp.linalg.eig refuses eigenvector derivatives: finite differences here,
    # jax.lax.linalg.eig(enable_eigvec_derivs=True) in test_leftovers.py)
    E2ECase(F.f_eig, ("linalg.eig",), (normal(3, 3),), jax=False),
    E2ECase(F.f_svd, ("linalg.svd",), (spread(3, 2),)),
    E2ECase(F.f_svdvals, ("linalg.svdvals",), (spread(3, 4),)),
    E2ECase(F.f_qr, ("linalg.qr",), (spread(3, 2),)),
    E2ECase(F.f_norm, ("linalg.norm",), (normal(2, 3),)),
    E2ECase(F.f_norm_orders, ("linalg.norm",), (spread(2, 3),)),
    E2ECase(F.f_norm_matrix_two, ("linalg.norm",), (spread(2, 3),)),
    E2ECase(F.f_vector_norm, ("linalg.vector_norm",), (normal(2, 3),)),
    E2ECase(F.f_matrix_norm, ("linalg.matrix_norm",), (spread(2, 3),)),
]
