"""Functions for test_internal14b.py (issue 23's internal14b pass)."""

from __future__ import annotations

import functools

import numpy as np


def scaled_sine(x):
    return np.sin(x) * 2.0


def first_of_zip(x):
    return np.sum(x) * next(iter(zip(x, x)))[0]


def first_pair_of_zip(x, y):
    a, b = next(iter(zip(x * 2.0, np.cos(y))))
    return a * b + np.sum(y)


def first_of_enumerate(x):
    return np.sum(x) * next(iter(enumerate(x)))[1]


def sine_times_rest(x):
    rest = list(x[1:])
    return np.sin(x[0]) * sum(r ** 2 for r in rest)


def reduced_with_lambda(m, mats=(np.eye(2), 2 * np.eye(2))):
    return functools.reduce(lambda acc, v: acc + np.sum(v ** 2), [m] + list(mats), 0.0)


def kept_zip_walked(x):
    pairs = zip(x, x)
    s = 0.0
    for p, q in pairs:
        s = s + p * q
    return s


def kept_zip_operand_rebound(x, y):
    pairs = zip(x, np.cos(y))
    x = x * 3.0  # (the zip holds the x it was given)
    s = np.sum(x)
    for p, q in pairs:
        s = s + p * q
    return s


def kept_zip_walked_twice(x):
    pairs = zip(x, x)
    s = 0.0
    for p, q in pairs:
        s = s + p * q
    for p, q in pairs:
        s = s + p
    return s
