"""Python's built-ins over run-time values (tests/frontend/test_runtime_builtins.py):
``round`` of a computed number, ``any``/``all`` over an array or a generator of
its rows, ``max``/``min`` with ``key=``; ``math.prod(x.shape)``.  Each runs in JAX on the
same source."""

import math

import numpy as np


def rounds_a_total(x):
    return np.sum(x * round(np.sum(x)))


def rounds_to_places(x):
    return np.sum(x) * round(np.sum(x * x), 1)


def any_positive(x):
    if any(x > 0):
        return np.sum(x**2)
    return np.sum(x)


def all_rows_above(x):
    if all(v > -1.0 for v in x):
        return np.sum(x**2)
    return np.sum(np.sin(x))


def all_below_as_value(x):
    ok = all(x < 1.0)
    return np.sum(x * 2.0) if ok else np.sum(x**3)


def largest_magnitude(x):
    parts = [x[0], x[1] * 2.0, x[2] - 1.0]
    best = max(parts, key=lambda v: abs(v))
    return best * x[0]


def smallest_by_numpy_key(x):
    return min(x[0] * 3.0, x[1], x[2], key=np.abs) * x[1]


def negated(v):
    return -v


def largest_by_own_key(x):
    return max([x[0], x[1], x[2]], key=negated) * np.sum(x)


def ties_keep_the_first(x):
    a, b = x[0], x[1]
    return max(a, b, key=lambda v: v * v) * 3.0 + x[2]


def sums_the_positive(x):
    return np.sum(x) + sum(v * 2.0 for v in x if v > 0)


def mean_by_prod(x):
    return np.sum(x * x) / math.prod(x.shape) + math.prod((2, 3)) * np.sum(x)


def prod_of_a_named_shape(x):
    s = x.shape
    return np.sum(np.sin(x)) * math.prod(s)
