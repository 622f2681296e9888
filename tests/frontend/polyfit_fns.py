"""np.polyfit (tests/frontend/test_polyfit_form.py): NumPy's and, through
newcomer_harness.twin, JAX's."""

import numpy as np

# (no point at 0: JAX's derivative of its Vandermonde matrix in x is NaN there)
T = np.array([0.1, 0.4, 1.1, 1.5, 2.3])


def detrend(x):
    """Newcomer probe 13's: a line fitted to evenly spaced samples."""
    t = np.arange(x.shape[0], dtype=float)
    coef = np.polyfit(t, x, 1)
    resid = x - np.polyval(coef, t)
    return np.sum(resid ** 2) + coef[0] ** 2


def quadratic_of_points(t, y):
    """Degree 2; the sample points are the differentiated input."""
    return np.sum(np.polyfit(t, y, 2) * np.array([1.0, 2.0, 3.0]))


def columns(y):
    """Two columns of y fitted at once, deg as a keyword."""
    return np.sum(np.polyfit(T, np.stack([y, np.sin(y)], axis=1), deg=3) ** 2)
