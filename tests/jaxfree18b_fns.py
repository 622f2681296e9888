"""Module-level helpers a loss calls by name (tests/test_jaxfree18b.py rebinds them)."""

import numpy as np


def logistic(z):
    return np.log1p(np.exp(-z))


def hinge2(z):
    return np.maximum(1.0 - z, 0.0) ** 2


def square(z):
    return z * z


def cube(z):
    return z * z * z


SCALE = 1.0


def helper_loss(w, x, y):  # one helper: one getter, compared by `is`
    return np.mean(logistic(y * (x @ w)))


def two_helpers_loss(w, x, y):  # two helpers and a number of one module: an itemgetter
    return np.mean(logistic(y * (x @ w))) + SCALE * np.sum(square(w))


def make_cell_loss(fn):  # a helper a closure cell holds
    def cell_loss(w, x, y):
        return np.mean(fn(y * (x @ w)))

    return cell_loss
