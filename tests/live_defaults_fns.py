"""Functions whose defaults tests/test_live_defaults.py replaces after the ``def``
(each test loads a fresh copy of this module)."""

import numpy as np

W0 = np.array([1.0, 2.0, 3.0])


def power(x, n=3):
    return np.sum(x ** n)


def scaled(x, *, s=2.0):
    return s * np.sum(np.sin(x))


def weighted(x, w=W0):
    return np.sum(w * x ** 2)


def required(x, n):
    return np.sum(x ** n)


def caller(x):
    return power(x) + 1.0


def caller_of_caller(x):
    return caller(x * 2.0)
