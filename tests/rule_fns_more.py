"""Functions for the rows of rule_rows_more.py (more NumPy functions).

Outputs are weighted by fixed, non-uniform constants so that a rule cannot pass by
accident with a cotangent of all ones.  Keep the import as it is: the JAX twin
rebinds it to jax.numpy.
"""

import numpy as np

W2 = np.array([0.9, -1.3])
W3 = np.array([-0.6, 1.1, 0.25])
W4 = np.array([0.5, -1.0, 2.0, 0.3])
W23 = np.array([[0.3, -1.2, 0.7], [1.5, 0.4, -0.8]])
E23 = np.array([[1, -2, 0], [3, 0, -1]])


def weights(shape):
    """Fixed, non-uniform weights of a shape."""
    return np.reshape(np.linspace(-1.0, 1.5, np.size(np.zeros(shape))), shape)


def f_real(x):
    return np.sum(np.real(np.sin(x)) * W23) + np.sum((x * x).real * W3)


def f_conjugate(x):
    return (
        np.sum(np.conjugate(x * x) * W23)
        + np.sum(np.conj(x) * W3)
        + np.sum(np.sin(x).conj() * W23)
    )


def f_nan_to_num(x):
    return np.sum(np.nan_to_num(np.sin(x) * x) * W23)


def f_ldexp(x):
    return np.sum(np.ldexp(np.sin(x), E23) * W23) + np.sum(np.ldexp(x, 2) * W3)


def f_unwrap(x):
    return np.sum(np.unwrap(x * 4.0) * W23) + np.sum(np.unwrap(x * 3.0, axis=0) * W23)


def f_rollaxis(x):
    return np.sum(np.sin(np.rollaxis(x, 2)) * weights((4, 2, 3))) + np.sum(
        np.rollaxis(x, 0, 3) * weights((3, 4, 2))
    )


def f_diagflat(x):
    return np.sum(np.sin(np.diagflat(x)) * weights((6, 6))) + np.sum(
        np.diagflat(x[0], 1) * weights((4, 4))
    )


def f_resize(x):
    return np.sum(np.sin(np.resize(x, (4, 4))) * weights((4, 4))) + np.sum(
        np.resize(x, 4) * W4
    )


def f_diff(x):
    return np.sum(np.diff(np.sin(x)) * weights((2, 3, 3))) + np.sum(
        np.diff(x, n=2, axis=1) * weights((2, 1, 4))
    )


def f_ediff1d(x):
    return np.sum(np.ediff1d(np.sin(x)) * weights((5,))) + np.sum(
        np.ediff1d(x, to_begin=np.array([1.0, 2.0]), to_end=-1.0) * weights((8,))
    )


def f_nanprod(x):
    y = np.where(x > 1.0, np.nan, x)
    return np.sum(np.nanprod(y, axis=1) * W2) + np.nanprod(np.sin(y))


def f_trapezoid(x):
    return np.sum(np.trapezoid(np.sin(x)) * W3) + np.sum(
        np.trapezoid(x * x, dx=0.5, axis=0) * W2
    )


def f_trapezoid_x(y, x):
    return np.sum(np.trapezoid(np.sin(y), x, axis=0) * W2) + np.sum(
        np.trapezoid(y * y, np.cumsum(np.exp(x[:2]))) * W3
    )


def f_cov(x):
    return (
        np.sum(np.cov(np.sin(x)) * weights((2, 2)))
        + np.sum(np.cov(x, rowvar=False, ddof=0) * weights((3, 3)))
        + np.cov(x[0])
    )


def f_corrcoef(x):
    return np.sum(np.corrcoef(np.sin(x) + x) * weights((3, 3))) + np.sum(
        np.corrcoef(x, rowvar=False) * weights((4, 4))
    )


P4 = np.array([0.7, -1.2, 0.4, 2.0])
K2 = np.array([1.0, -2.0])
E6 = 3.0 * np.eye(6)


def f_vander(x):
    return np.sum(np.vander(np.sin(x)) * weights((3, 3))) + np.sum(
        np.vander(x, 4, increasing=True) * weights((3, 4))
    )


def f_polyval(p, x):
    return np.sum(np.polyval(p, np.sin(x)) * W23) + np.polyval(p * 2.0, 0.5)


def f_polyval_x(x):
    return np.sum(np.polyval(P4, x) * W23) + np.sum(np.polyval(x[0], x[1]) * W3)


def f_polyder(p):
    return np.sum(np.polyder(np.sin(p)) * W4) + np.sum(np.polyder(p * p, 2) * W3)


def f_polyint(p):
    return np.sum(np.polyint(np.sin(p)) * W4) + np.sum(
        np.polyint(p * p, 2, K2) * weights((5,))
    )


def f_polyadd(a, b):
    return np.sum(np.polyadd(np.sin(a), b) * weights((5,))) + np.sum(
        np.polyadd(P4, a * a) * W4
    )


def f_polysub(a, b):
    return np.sum(np.polysub(np.sin(a), b) * weights((5,))) + np.sum(
        np.polysub(a * a, P4) * W4
    )


def f_cond(x):
    return np.linalg.cond(x) + 0.5 * np.linalg.cond(np.sin(x) @ x.T)


def f_tensorinv(x):
    a = x + np.reshape(E6, (2, 3, 6))
    b = np.reshape(np.sin(x), (6, 2, 3)) + np.reshape(E6, (6, 2, 3))
    return np.sum(np.linalg.tensorinv(a) * weights((6, 2, 3))) + np.sum(
        np.linalg.tensorinv(b, ind=1) * weights((2, 3, 6))
    )


def f_tensorsolve(a, b):
    m = a + np.reshape(E6, (2, 3, 2, 3))
    return np.sum(np.linalg.tensorsolve(m, np.sin(b)) * W23)


Q2 = np.array([0.3, 0.75])


def f_quantile(x):
    return (
        np.sum(np.quantile(np.sin(x), 0.4, axis=1) * W2)
        + np.sum(np.quantile(x, Q2) * W2)
        + np.sum(np.quantile(x * x, Q2, axis=0) * W23)
    )


def f_quantile_q(x, q):
    return np.sum(np.quantile(x, q, axis=-1, keepdims=True) * weights((2, 2, 1)))


def f_percentile(x):
    return np.sum(np.percentile(np.sin(x), 40.0, axis=0) * W3) + np.sum(
        np.percentile(x, Q2 * 100.0, axis=1, keepdims=True) * weights((2, 2, 1))
    )


V3 = np.array([0.4, -1.1, 0.8])


def f_convolve(a, v):
    return (
        np.sum(np.convolve(np.sin(a), v) * weights((8,)))
        + np.sum(np.convolve(a, V3, "same") * weights((6,)))
        + np.sum(np.convolve(v * v, a, mode="valid") * weights((4,)))
    )


def f_correlate(a, v):
    return (
        np.sum(np.correlate(np.sin(a), v) * weights((4,)))
        + np.sum(np.correlate(a, V3, "same") * weights((6,)))
        + np.sum(np.correlate(v * v, a, mode="full") * weights((8,)))
    )


XP = np.array([-1.5, -0.5, 0.0, 0.7, 1.6])
FP = np.array([0.3, -1.0, 0.8, 2.0, -0.4])


def f_interp(x, fp):
    return np.sum(np.interp(np.sin(x) * 2.0, XP, fp) * W23) + np.sum(
        np.interp(x, XP, fp * fp, left=0.5, right=-1.0) * W23
    )


def f_interp_knots(xp, x):
    knots = np.cumsum(np.exp(xp)) - 2.0
    return np.sum(np.interp(x, knots, P4) * W23) + np.sum(
        np.interp(x * 0.5, knots, np.sin(xp)) * W23
    )


def f_nanquantile(x):
    y = np.where(x > 1.0, np.nan, x)
    return (
        np.sum(np.nanquantile(np.sin(y), 0.4, axis=1) * W2)
        + np.sum(np.nanquantile(y, Q2) * W2)
        + np.sum(np.nanquantile(y * y, Q2, axis=0) * W23)
    )


def f_nanquantile_q(x, q):
    y = np.where(x > 1.0, np.nan, x)
    return np.sum(np.nanquantile(y, q, axis=-1, keepdims=True) * weights((2, 2, 1)))


def f_nanpercentile(x, q):
    y = np.where(x > 1.0, np.nan, x)
    return np.sum(np.nanpercentile(np.sin(y), 40.0, axis=0) * W3) + np.sum(
        np.nanpercentile(y, q * 100.0, axis=1, keepdims=True) * weights((2, 2, 1))
    )


def f_nanmedian(x):
    y = np.where(x > 1.0, np.nan, x)
    return (
        np.sum(np.nanmedian(np.sin(y), axis=1) * W2)
        + np.nanmedian(y * y)
        + np.sum(np.nanmedian(y, axis=0, keepdims=True) * W3)
    )


def f_modf(x):
    frac, whole = np.modf(x * 3.0)
    return np.sum(np.sin(frac) * W23) + np.sum(whole * W3)


def f_divmod(x, y):
    q, r = np.divmod(x * 3.0, y)
    return np.sum(np.sin(r) * W23) + np.sum(q * r * W23)


def f_polymul(a, b):
    return np.sum(np.polymul(np.sin(a), b) * weights((5,))) + np.sum(
        np.polymul(P4, a * a) * weights((6,))
    )
