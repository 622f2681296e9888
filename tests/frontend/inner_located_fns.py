"""Transforms written inside the function (issue 23) whose code meets an error when it
runs: test_inner_located.py."""

import numpy as np
from error_fns import counts_float_labels

import s2s


def branchy(x):
    if x > 0:
        return x
    return -x


def outer_branchy(x):
    return np.sum(s2s.grad(branchy)(x) * x)


def outer_counts(x):
    return np.sum(s2s.grad(counts_float_labels)(x, np.array([0.0, 1.0])) * x)


def halved_sum(xs):
    return np.sum(np.divide(xs, 2.0) ** 2)


def outer_list(x):
    r = s2s.grad(halved_sum)([x, 2 * x])
    return np.sum(r[0]) + 3.0 * np.sum(r[1])
