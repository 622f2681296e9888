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
    gradient of det.  Where every matrix's 2-norm condition number is shown below
    ``1 / (4 n eps)``, no least singular value is negligible (:func:`cofactor_svd`'s
    test) and its answer is ``det_a * inv(a).T``, computed here without the SVD.

    Why that bound suffices: cofactor_svd flags a matrix where ``top + least == top``,
    ``least = s_min / (2 n)``.  ``top + x`` rounds to ``top`` only where ``x`` is at
    most half an ulp of ``top``, and an ulp of ``top`` is at most ``eps * top``; with
    ``kappa_2 = top / s_min < 1 / (4 n eps)``, ``x > 2 eps top``: four times what
    rounding needs (the slack for the SVD's own rounding and inv's).

    One matrix: ``kappa_2 <= |a|_F |inv(a)|_F`` (a 2-norm is at most the Frobenius
    norm), and ``np.vdot(x, x)`` is ``|x|_F ** 2`` (its real part where x is complex)
    in one BLAS call, so ``|a|_F**2 |inv|_F**2 < 1 / (4 n eps)**2`` implies the
    bound.  Its rounding is a relative ``n**2 eps`` (nothing against the margin of 16
    on the squares); an overflow or a NaN fails the test (the SVD form then); squares
    below the smallest normal number lose what matters only where ``|a|_F**2`` is
    within ``n**2`` subnormal steps of 0, and then ``|inv|_F**2 >= n / |a|_F**2``
    overflows and the test fails.  (The 1-norm test below cost a 3 x 3 gradient 46k
    instructions, a hand-written gradient's 65k; this one about 10k.)  A stack: each
    matrix's 1-norm condition number below ``1 / (4 n**2 eps)`` (``kappa_2 <= n
    kappa_1``), every matrix in one ufunc reduce."""
    try:
        inv = np.linalg.inv(a)
    except np.linalg.LinAlgError:  # exactly singular
        return cofactor_svd(a, det_a)
    n = inv.shape[-1]
    if inv.ndim == 2:
        if n and np.vdot(a, a).real * np.vdot(inv, inv).real < _frobenius_bound(inv.dtype, n):
            return det_a * inv.T  # (NaN: not taken)
        return cofactor_svd(a, det_a)
    if inv.size:  # (size 0: the SVD form)
        inv_t = inv.swapaxes(-1, -2)
        # norm1(a) * norm1(inv(a)) (norm1(inv(a)) is inv_t's largest row sum); the
        # ufuncs' reduce, not np.max
        cond = np.maximum.reduce(np.add.reduce(np.abs(a), -2), -1) * np.maximum.reduce(
            np.add.reduce(np.abs(inv_t), -1), -1
        )
        if np.maximum.reduce(cond, None) < _quarter_of_one_over_eps(inv_t.dtype) / (n * n):
            return np.asarray(det_a)[..., None, None] * inv_t  # (NaN: not taken)
    return cofactor_svd(a, det_a)


_QUARTER_OVER_EPS = {}
_FROBENIUS_BOUND = {}


def _quarter_of_one_over_eps(dtype):
    """``0.25 / eps`` of ``dtype`` (np.finfo costs a 3 x 3 gradient's tenth)."""
    if dtype not in _QUARTER_OVER_EPS:
        _QUARTER_OVER_EPS[dtype] = 0.25 / np.finfo(dtype).eps
    return _QUARTER_OVER_EPS[dtype]


def _frobenius_bound(dtype, n):
    """``(1 / (4 n eps)) ** 2`` of ``dtype`` and ``n``."""
    if (dtype, n) not in _FROBENIUS_BOUND:
        _FROBENIUS_BOUND[dtype, n] = (_quarter_of_one_over_eps(dtype) / n) ** 2
    return _FROBENIUS_BOUND[dtype, n]


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
    zeros = np.zeros_like(a)  # (a's dtype on both branches: an int64 diagonal made
    spread = np.diag(np.arange(1, n + 1)).astype(zeros.dtype) + zeros  # float32 float64)
    eye = np.eye(n) == 1
    others = np.prod(np.where(eye, 1, s[..., None, :]), axis=-1)  # (exact at zeros)
    turn = np.expand_dims(np.linalg.det(u) * np.linalg.det(vt), (-2, -1))
    adj_t = turn * ((np.conj(u) * others[..., None, :]) @ np.conj(vt))
    inv_t = np.matrix_transpose(np.linalg.inv(np.where(singular, spread, a)))
    return np.where(singular, adj_t, np.expand_dims(det_a, (-2, -1)) * inv_t)
