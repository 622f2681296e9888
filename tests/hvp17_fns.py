"""The functions of tests/test_hvp17.py, in a module of their own: a lambda's source
is read from its file (a small one parses fast)."""

import numpy as np

import s2s


def logistic_mean(w, x, y):
    return np.mean(np.log1p(np.exp(-y * (x @ w))))


G = s2s.grad(logistic_mean)


def hvp(w, v, x, y):
    return s2s.jvp(lambda w: G(w, x, y), (w,), (v,))  # (a new lambda each call)


def to_int(w, x):
    """A cast to an integer dtype inside the function: no derivative flows there."""
    return np.sum(np.sin(w) * x) + np.sum(np.astype(w * 10.0, np.int64) * w)


def to_float32(w):
    return np.sum(np.astype(w, np.float32) ** 2)


def jvp_to_int(w, v, x):
    return s2s.jvp(lambda w: to_int(w, x), (w,), (v,))
