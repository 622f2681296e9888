"""np.cov with fweights=/aweights= (tests/frontend/test_weighted_cov.py): each function
runs under NumPy and, through newcomer_harness.twin, under JAX."""

import numpy as np

DATA = np.array([0.3, -1.2, 0.8, 2.0, -0.5, 1.1])


def cov_aweights_of_x(x):
    """The weights are the differentiated input (newcomer probe 13's)."""
    w = np.exp(x)
    pts = np.stack([DATA[:4], DATA[1:5] ** 2])
    c = np.cov(pts, aweights=w)
    return c[0, 1] + np.trace(c)


def cov_data_aweights(m, a):
    """Three variables as rows, the weights a second argument."""
    c = np.cov(m, aweights=a)
    return np.sum(c * np.arange(1, 10).reshape(3, 3))


def cov_fweights_columns(m, f):
    """Observations as rows (rowvar=False), integer frequencies, bias=True."""
    c = np.cov(m, rowvar=False, bias=True, fweights=f)
    return np.sum(np.tanh(c))


def cov_both_ddof(m, a, f):
    """Both weights, ddof=2, positional m."""
    c = np.cov(m, None, True, False, 2, f, a)
    return c[0, 0] * c[1, 2] + np.sum(c ** 2)


def cov_one_variable(x, a):
    """A 1-D m: a 0-d result."""
    return np.cov(x * x, aweights=a) + np.cov(x, fweights=np.array([1, 2, 1, 3]))
