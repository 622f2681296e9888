"""Functions of tests/test_special_values12.py (each run by s2s and, through
``support.jax_twin``, by JAX on the same source)."""

import numpy as np


def running_product(x):
    return np.cumprod(x)


def running_product_of_rows(x):
    return np.sum(np.cumprod(np.reshape(x, (2, -1)), axis=1) * 1.5)


def hypot_pair(x):
    return np.hypot(x[0], x[1])


def det_of(a):
    return np.linalg.det(a)


def det_of_stacked_rows(x):
    m = np.stack([x, 2.0 * x])
    return np.linalg.det(m)
