"""Functions whose `if` gives a value a different rank on each path, for
tests/frontend/test_rank_paths.py (JAX runs the same source: ``jax_twin``).  Each
test is on a concrete value, so ``jax.grad``/``jacrev``/``jacfwd``/``hessian`` take
it (without ``jit``); ``x[0]``, ``x[1]`` and ``np.sum(x)`` change sign between the
test points."""

import numpy as np


def vec_or_sum(x):
    if np.sum(x) > 0:
        y = x * 2.0
    else:
        y = np.sum(x)
    return np.sum(y * x)


def dict_if_ranks(x):
    d = {"a": x, "b": 1.0}
    if x[1] > 0:
        d = {"a": 2.0, "b": x ** 2}
    return np.sum(d["a"] * d["b"] + x)


def tuple_if_ranks(x):
    if x[0] > 0:
        a, b = x, 1.0
    else:
        a, b = 2.0, x
    return np.sum(a * b * x)


def matrix_or_vector(x):
    if x[0] > 0:
        m = np.outer(x, np.sin(x))
    else:
        m = np.sin(x) * x
    return np.sum(np.tanh(m) * x)


def three_ranks(x):
    if x[0] > 1.0:
        y = np.outer(x, x)
    elif x[0] > 0:
        y = x ** 2
    else:
        y = np.sum(x ** 2)
    return np.sum(np.tanh(y) * x)


def two_tests(x):
    if x[0] > 0:
        a = x * 2.0
    else:
        a = np.sum(x)
    if x[1] > 0:
        b = np.sum(x ** 2)
    else:
        b = np.cos(x)
    return np.sum(a * b * x)


def vector_out(x):
    if np.sum(x) > 0:
        y = x * 2.0
    else:
        y = np.sum(x)
    return np.sin(y * x) + x


def weighted(x, w):
    if np.sum(x) > 0:
        y = x * w
    else:
        y = np.sum(x * w)
    return np.sum(y * x)


def in_loop(x):
    s = 0.0
    for i in range(2):
        if x[i] > 0:
            y = x * 2.0
        else:
            y = np.sum(x)
        s = s + np.sum(y * x)
    return s


def helper(x):
    if np.sum(x) > 0:
        return x * 2.0
    return np.sum(x)


def via_callee(x):
    return np.sum(helper(x) * np.cos(x))


def callee_both_paths(x):
    return np.sum(helper(x) * x) + np.sum(helper(-x) * np.sin(x))


def callee_in_loop(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(helper(x * (1.0 - 2.0 * i)) * np.cos(x))
    return s
