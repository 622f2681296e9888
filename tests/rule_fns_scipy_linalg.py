"""Functions for the scipy.linalg and scipy.signal rows of the rule table (see
rule_rows_scipy_linalg.py).

s2s sees SciPy's functions; the JAX twin (support.jax_twin rebinds the NumPy import
below to jax.numpy) sees jax.scipy's under the same names, so both differentiate the
same source text.  Matrices are drawn well conditioned (a diagonal added: see the
rows); no array constants (float32 stays float32 in both).
"""

import numpy as np
import scipy.linalg as sl
import scipy.signal as ss

if np.__name__ == "jax.numpy":  # this is the JAX twin
    import jax.scipy.linalg as sl
    import jax.scipy.signal as ss


def f_solve_triangular(a, b):
    x = sl.solve_triangular(a, b, lower=True)
    y = sl.solve_triangular(a, b[:, 0], trans="T", unit_diagonal=True)
    z = sl.solve_triangular(a * 2.0, np.sin(b), trans=1, lower=False)
    return np.sum(np.sin(x)) + np.sum(y**2) + np.sum(z * b)


def f_expm(a):
    e = sl.expm(a * 0.5)
    return np.sum(np.sin(e)) + np.sum(sl.expm(a[:2, :2] - a[1:, 1:]) ** 2)


def f_cho(a, b):
    s = a @ a.T
    x = sl.cho_solve(sl.cho_factor(s, lower=True), b)
    c, low = sl.cho_factor(s * 2.0)
    y = sl.cho_solve((c, low), b[:, 0])
    return np.sum(np.sin(x)) + np.sum(y**2)


def f_solve_sylvester(a, b, q):
    # (JAX's solve_sylvester has no derivative: finite differences only)
    x = sl.solve_sylvester(a, b, q)
    return np.sum(np.sin(x))


def f_signal_convolve(x, h):
    total = np.sum(np.sin(ss.convolve(x, h)))
    total = total + np.sum(ss.convolve(x, h, mode="same", method="direct") ** 2)
    return total + np.sum(np.cos(ss.convolve(x, h[:1], mode="valid")))


def f_signal_convolve_vectors(x, h):
    total = np.sum(np.sin(ss.convolve(x[0], h[1], mode="same")))
    return total + np.sum(ss.convolve(h[0], x[1], mode="valid") ** 2)


def f_signal_correlate(x, h):
    total = np.sum(np.sin(ss.correlate(x, h, mode="same")))
    return total + np.sum(ss.correlate(x[0], h[1], "valid", "direct") ** 2)


def f_signal_fftconvolve(x, h):
    total = np.sum(np.sin(ss.fftconvolve(x, h, mode="same")))
    # (over axis 1 only: the other axis pairs the rows, JAX's fftconvolve broadcasts none)
    return total + np.sum(ss.fftconvolve(x[:2], h, mode="valid", axes=1) ** 2)


def f_sqrtm(a):
    s = sl.sqrtm(a @ a.T + np.eye(3))  # (positive definite: a real root)
    return np.sum(np.sin(s)) + np.sum(sl.sqrtm(a[:2, :2] + 4.0 * np.eye(2)) ** 2)


def f_solve_banded(ab, b):
    # (JAX has no banded solver: finite differences only)
    x = sl.solve_banded((1, 2), ab, b)
    y = sl.solve_banded((1, 2), ab * 2.0, b[:, 0])
    return np.sum(np.sin(x)) + np.sum(y**2)


if np.__name__ == "jax.numpy":  # the twin: the helpers from what they mean
    from rule_rows_scipy_linalg import band_twin as dense_banded
    from rule_rows_scipy_linalg import conv_crop_twin as conv_crop
    from rule_rows_scipy_linalg import conv_pad_twin as conv_pad
    from rule_rows_scipy_linalg import dense_twin as banded_dense
else:
    from s2s.runtime import banded_dense, conv_crop, conv_pad, dense_banded


def f_banded_helpers(ab, a):
    # as emitted code calls them: a band's matrix, a matrix's band
    m = banded_dense(ab * ab, 1, 2)
    return np.sum(np.sin(m) * a) + np.sum(dense_banded(np.cos(a) * a, 1, 2) ** 2)


def f_conv_pad_crop(g, x):
    # as emitted code calls them (the operands give only shapes): 'same' of a (3, 6)
    # and a (2, 3) padded to the full (4, 8), and the full cropped to 'valid' (2, 4)
    full = conv_pad(g * g, x, x[:2, :3], "same")
    return np.sum(np.sin(full)) + np.sum(conv_crop(np.cos(full) * x[0, 0], x, x[:2, :3], "valid") ** 2)
