"""The emitted code's helper for the derivative of ``np.linalg.det``: the cofactor
matrix ``det_cofactor(a, det_a)``.

Part of the same ABI as :mod:`s2s.runtime`, which imports every name here; it lives
apart so that runtime.py keeps to its size.  On NumPy a stack of clearly invertible
matrices takes ``det(a) * inv(a).T`` alone (what a hand-written gradient computes);
any other stack, and every stack on the JAX backend (this module's text with ``np``
bound to ``jax.numpy``, :mod:`s2s.backends.jax_runtime_linalg`, where a Python test
on values does not trace), takes :func:`cofactor_svd`, both branches.
"""

from __future__ import annotations

import numpy as np

__all__ = ["det_cofactor"]


def det_cofactor(a, det_a):
    """``adj(a).T`` of the stacked square matrices ``a`` (``det_a = det(a)``): the
    gradient of det.  Where every matrix's 1-norm condition number is below
    ``1 / (4 n**2 eps)``, the 2-norm one is below ``1 / (4 n eps)``, so that no
    least singular value is negligible (:func:`cofactor_svd`'s test) and its answer
    is ``det_a * inv(a).T``, computed here without the SVD."""
    n = np.shape(a)[-1]
    if np.size(a):  # (size 0: the SVD form)
        try:
            inv_t = np.linalg.inv(a).swapaxes(-1, -2)
        except np.linalg.LinAlgError:  # exactly singular
            return cofactor_svd(a, det_a)
        # norm1(a) * norm1(inv(a)) (norm1(inv(a)) is inv_t's largest row sum); the
        # ufuncs' reduce, not np.max: a 3 x 3 gradient's cost is these calls'
        cond = np.maximum.reduce(np.add.reduce(np.abs(a), -2), -1) * np.maximum.reduce(
            np.add.reduce(np.abs(inv_t), -1), -1
        )
        if np.maximum.reduce(cond, None) < _quarter_of_one_over_eps(inv_t.dtype) / (n * n):
            return np.asarray(det_a)[..., None, None] * inv_t  # (NaN: not taken)
    return cofactor_svd(a, det_a)


_QUARTER_OVER_EPS = {}


def _quarter_of_one_over_eps(dtype):
    """``0.25 / eps`` of ``dtype`` (np.finfo costs a 3 x 3 gradient's tenth)."""
    if dtype not in _QUARTER_OVER_EPS:
        _QUARTER_OVER_EPS[dtype] = 0.25 / np.finfo(dtype).eps
    return _QUARTER_OVER_EPS[dtype]


def cofactor_svd(a, det_a):
    """``adj(a).T``: ``det_a * inv(a).T``, or where ``a`` is singular (its least
    singular value below ``n * eps`` times its largest, NumPy's matrix_rank's
    tolerance) JAX's adjugate from the SVD, ``a = u s vt``: ``det(u) det(vt) conj(u)
    diag(prod of the other s) conj(vt)``.  Each branch reads a matrix where the other
    is taken."""
    u, s, vt = np.linalg.svd(a)
    n = np.shape(a)[-1]
    top = np.sum(s[..., :1], axis=-1)  # (0 x 0: 0)
    least = np.sum(s[..., -1:], axis=-1) / (2 * n)
    singular = np.expand_dims(top + least == top, (-2, -1))
    spread = np.diag(np.arange(1, n + 1)) + np.zeros_like(a)
    eye = np.eye(n) == 1
    others = np.prod(np.where(eye, 1, s[..., None, :]), axis=-1)  # (exact at zeros)
    turn = np.expand_dims(np.linalg.det(u) * np.linalg.det(vt), (-2, -1))
    adj_t = turn * ((np.conj(u) * others[..., None, :]) @ np.conj(vt))
    inv_t = np.matrix_transpose(np.linalg.inv(np.where(singular, spread, a)))
    return np.where(singular, adj_t, np.expand_dims(det_a, (-2, -1)) * inv_t)
