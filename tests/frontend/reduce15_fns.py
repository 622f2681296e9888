"""Iteration idioms of reduce15 (issue 23): ``functools.reduce`` over a list whose
length a passed tuple sets (``[m] + list(mats)``, ``[*mats, m]``), with and without
an initial value, and lists of arrays or of tuples read by a loop's run-time index.
tests/frontend/test_reduce15.py runs each through s2s and compares with JAX on this
same source (``newcomer_harness.twin``) or central differences."""

from __future__ import annotations

import functools

import numpy as np


def chain_trace(m, mats):
    return np.trace(functools.reduce(lambda acc, v: acc @ v, [m] + list(mats), np.eye(2)))


def sum_from_zero(m, mats):
    return np.trace(functools.reduce(lambda acc, v: acc + v @ m, [m] + list(mats), 0.0))


def scaled_from_half(m, mats):
    return np.sum(functools.reduce(lambda acc, v: acc + v * m * acc, list(mats), 0.5))


def matmul_last(m, mats):
    return np.trace(functools.reduce(np.matmul, [*mats, m]))


def indexed_loop(x, xs):
    t = 0.0
    for i in range(x.shape[0]):
        t = t + np.sum(np.tanh(xs[i] * x[i]))
    return t


def indexed_twice(x, xs):
    t = 0.0
    ys = list(xs)
    for i in range(x.shape[0]):
        t = t + np.sum(ys[i] * x[i]) + np.sum(ys[-1 - i] ** 2 * x[i])
    ys.append(ys[0] * 3.0)
    for i in range(x.shape[0]):
        t = t + np.sum(ys[i + 1] * x[i] ** 2)
    return t


def pairs_loop(x, pairs):
    t = 0.0
    for i in range(x.shape[0]):
        w, b = pairs[i]
        t = t + np.sum(np.tanh(w * x[i] + b)) + np.sum(pairs[i][0] ** 2) * x[i]
    return t
