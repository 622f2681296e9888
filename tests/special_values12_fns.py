"""Functions of tests/test_special_values12.py (each run by s2s and, through
``support.jax_twin``, by JAX on the same source)."""

import math

import numpy as np


def running_product(x):
    return np.cumprod(x)


def running_product_sum(x):
    return np.sum(np.cumprod(x))


def product(x):
    return np.prod(x)


def product_of_columns(x):
    return np.sum(np.prod(np.reshape(x, (2, -1)), axis=0) * np.array([1.0, 2.0, 3.0])[: np.shape(x)[0] // 2])


def product_of_rows(x):
    return np.sum(np.prod(np.reshape(x, (2, -1)), axis=1) * np.array([1.0, 2.0]))


def running_product_of_rows(x):
    return np.sum(np.cumprod(np.reshape(x, (2, -1)), axis=1) * 1.5)


def product_loop(x):
    acc = 1.0
    for v in x:
        acc = acc * v
    return acc


def product_loop_inplace(x):
    acc = 1.0
    for v in x:
        acc *= v
    return acc


def product_loop_from_first(x):
    acc = x[0]
    for i in range(1, x.shape[0]):
        acc = acc * x[i]
    return acc


def hypot_pair(x):
    return np.hypot(x[0], x[1])


def det_of(a):
    return np.linalg.det(a)


def logabsdet_of(a):
    sign, logdet = np.linalg.slogdet(a)
    return logdet


def det_of_stacked_rows(x):
    m = np.stack([x, 2.0 * x])
    return np.linalg.det(m)
