"""Functions for the linear-algebra rows of the rule table (see rule_rows_linalg.py).

Matrices are made well conditioned inside the functions (``x + 4 * np.eye(3)``,
``x @ x.T + np.eye(3)``), so every argument can be drawn from a normal distribution.
Functions of eigenvectors and singular vectors use them through squares or pairs,
whose value does not depend on the sign a factorisation happens to choose.
"""

import numpy as np

W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-0.5, 1.0, 0.3]])
C = np.array([0.7, -1.3, 2.1])
C2 = np.array([0.7, -1.3])
W22 = np.array([[0.5, -1.0], [1.5, 0.25]])
W23 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
W32 = np.array([[0.5, -1.0], [1.5, 0.25], [-0.5, 1.0]])


def f_vdot(x, y):
    return np.vdot(np.sin(x), y)


def f_inner(x, y):
    return np.sum(np.inner(x, y) ** 2)


def f_outer(x, y):
    return np.sum(np.sin(np.outer(x, y)))


def f_linalg_outer(x, y):
    return np.sum(np.linalg.outer(x, y * 2.0) ** 2)


def f_tensordot(x, y):
    return np.sum(np.tensordot(x, y, axes=([1, 0], [0, 1])) ** 2)




def f_einsum_implicit(x, y):
    return np.sum(np.sin(np.einsum("ij,kj", x, y)))


def f_einsum_diagonal(x):
    return np.einsum("ii", x @ x.T) + np.sum(np.einsum("ii->i", x) ** 3)


def f_einsum_three(x, y):
    return np.einsum("i,ij,j->", x[0], y, x[1], optimize=True) ** 2


def f_linalg_aliases(x, y):
    # np.linalg.matmul and np.linalg.tensordot are np.matmul's and np.tensordot's twins
    product = np.linalg.matmul(x, y)
    return np.sum(product**2) + np.sum(np.linalg.tensordot(x, y, axes=1))


def f_kron(x, y):
    return np.sum(np.kron(x, y) * np.kron(y, x))


def f_trace(x):
    return np.trace(np.sin(x), offset=1) + (x @ x.T).trace()


def f_linalg_trace(x):
    return np.sum(np.linalg.trace(x * x, offset=-1) * C2)


def f_diagonal(x):
    return np.sum(np.diagonal(x, -1) ** 2) + np.sum(x.diagonal() * C)


def f_linalg_diagonal(x):
    return np.sum(np.linalg.diagonal(x * x, offset=1) * C2)


def f_diag_vector(x):
    return np.sum(np.diag(x) @ W * W)


def f_diag_matrix(x):
    return np.sum(np.diag(x, 1) ** 2) + np.sum(np.diag(np.sin(x)))


def f_tril(x):
    return np.sum(np.tril(x) @ W) + np.sum(np.tril(x, -1) ** 2)


def f_triu(x):
    return np.sum(np.triu(x, 1) * W) + np.sum(np.triu(x) ** 2)


def f_cross(x, y):
    return np.sum(np.cross(x, y) ** 2) + np.sum(np.cross(x, C) * y)


def f_linalg_cross(x, y):
    return np.sum(np.linalg.cross(x, y) * W)


def f_vecdot(x, y):
    return np.sum(np.vecdot(x, y) ** 2)


def f_linalg_vecdot(x, y):
    return np.sum(np.sin(np.linalg.vecdot(x, y, axis=0)))


def f_matvec(x, y):
    return np.sum(np.matvec(x, y) ** 2)


def f_vecmat(x, y):
    return np.sum(np.vecmat(y, x) ** 2)


def f_multi_dot(x, y):
    return np.linalg.multi_dot([C, x, y, W, C]) ** 2



def f_matrix_transpose(x):
    return np.sum(np.matrix_transpose(x) * W)


def f_linalg_matrix_transpose(x):
    return np.sum(np.linalg.matrix_transpose(x) @ W)


def f_inv(x):
    return np.sum(np.linalg.inv(x + 4.0 * np.eye(3)) * W)


def f_solve(x, y):
    a = x + 4.0 * np.eye(3)
    return np.sum(np.linalg.solve(a, y) ** 2) + np.sum(np.linalg.solve(a, W) * W)


def f_det(x):
    return np.linalg.det(x + 4.0 * np.eye(3))


def f_slogdet(x):
    sign, logdet = np.linalg.slogdet(x + 4.0 * np.eye(3))
    return sign * logdet


def f_matrix_power(x):
    a = x + 4.0 * np.eye(3)
    p = np.linalg.matrix_power(a, 3) / 100.0 + np.linalg.matrix_power(a, -2)
    return np.sum(p * W)


def f_pinv(x):
    return np.sum(np.linalg.pinv(x) * W23)


def f_lstsq(x, y):
    solution, residuals, rank, sv = np.linalg.lstsq(x, y)
    return np.sum(solution**2) + np.sum(residuals) + np.sum(sv * C2)


def f_cholesky(x):
    return np.sum(np.linalg.cholesky(x @ x.T + np.eye(3)) * W)


def f_eigh(x):
    w, v = np.linalg.eigh(x + x.T)
    return np.sum(w * C) + np.sum(v**2 * W)


def f_eigvalsh(x):
    return np.sum(np.linalg.eigvalsh(x @ x.T) * C)


def f_eigvals(x):
    w = np.linalg.eigvals(x)
    return np.sum(np.real(w) * C) + np.sum(np.abs(w) ** 2)


def f_eig(x):
    w, v = np.linalg.eig(x)  # |v_ij| does not depend on the eigenvectors' phases
    return np.sum(np.real(w) * C) + np.sum(np.abs(w) ** 2) + np.sum(np.abs(v) ** 2 * W)


def f_svd(x):
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return np.sum(s * C2) + np.sum(u**2 @ W22) + np.sum(vt**2 * W22)


def f_svdvals(x):
    return np.sum(np.linalg.svdvals(x) * C)


def f_qr(x):
    q, r = np.linalg.qr(x)
    return np.sum(q**2 * W32) + np.sum(r**2 * W22)


def f_norm(x):
    return np.linalg.norm(x) + np.linalg.norm(x, axis=1) @ C2


def f_norm_orders(x):
    vectors = np.linalg.norm(x[0], 1) + np.linalg.norm(x[1], np.inf)
    return vectors + np.linalg.norm(x, "nuc")


def f_norm_matrix_two(x):
    return np.linalg.norm(x, 2) + np.sum(np.linalg.norm(x, 3, axis=0, keepdims=True))


def f_vector_norm(x):
    return np.linalg.vector_norm(x) + np.sum(np.linalg.vector_norm(x, axis=0, ord=1))


def f_matrix_norm(x):
    return np.linalg.matrix_norm(x) + np.linalg.matrix_norm(x, ord="nuc")


def f_solve_stacks(a, b):
    return np.linalg.solve(a, b)
