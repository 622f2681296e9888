"""Functions of tests/test_reduce16.py that hold an ``assert`` (pytest rewrites the
asserts of a test module, so their code would not be their source's)."""

import numpy as np


def checked_in_loop(w):
    s = 0.0
    for n in (1, 2, 3):
        assert n > 0, "n must be positive"
        if n == 0:
            raise TypeError("n must not be 0")
        s = s + np.sum(np.sin(w)) * n
    return s


def always_raises(w):
    for n in (1, 0):
        if n == 0:
            raise TypeError("n must not be 0")
    return np.sum(w)


def raises_in_a_branch(w):
    if np.sum(w) > 100.0:
        for n in (1, 0):
            if n == 0:
                raise TypeError("too large")
    return np.sum(np.sin(w))


def rebuilt_by_counter(ys):
    ys = [v * 2.0 for v in ys]
    t = 0.0
    for i in range(len(ys)):
        t = t + np.sum(ys[i] ** 2)
    return t


def rebuilt_by_argument(ys, i):
    ys = [v * 2.0 for v in ys]
    return np.sum(np.sin(ys[i]))
