"""Functions at the edges of their values (tests/frontend/test_edge_values.py): powers
whose exponent is known only when the function runs, products with zeros and
infinities, ``round`` of a total that may be NaN.  Each runs in JAX on the same
source (``jax_twin``)."""

import functools
import operator

import numpy as np


def power_by_argument(x, k):
    return np.sum(x**k * np.cos(x))


def power_by_keyword(x, k=0):
    return np.sum(np.sin(x) * x**k)


def powers_of_a_loop(x, n):
    total = 0.0
    for k in range(n):
        total = total + np.sum(x**k)
    return total


def power_of_a_count(x):
    total = 0.0
    k = 0
    for v in x:
        total = total + v**k
        k = k + 1
    return total


def product_of_items(x):
    return functools.reduce(operator.mul, x)


def product_by_numpy(x):
    return np.prod(x)


def product_in_a_loop(x):
    acc = 1.0
    for v in x:
        acc = acc * v
    return acc


def rounds_a_total(x):
    return np.sum(x * round(np.sum(x)))


def rounds_alone(x):
    return round(np.sum(x)) + np.sum(x)


def running_products(x):
    return np.sum(np.cumprod(x) * np.arange(1.0, 1.0 + x.shape[0]))


def product_of_rows(x):
    return np.sum(np.prod(x, axis=0) ** 2)


def rounds_a_total_by_numpy(x):
    return np.sum(x * np.round(np.sum(x)))
