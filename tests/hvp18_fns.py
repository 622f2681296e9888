"""The functions of tests/test_hvp18.py (jvp of a gradient given zero tangents), in a
module of their own: tests/support.jax_twin loads the same source as JAX's."""

import numpy as np


def logistic_mean(w, x, y):
    return np.mean(np.log1p(np.exp(-y * (x @ w))))


def tanh_pair(a, b):
    return np.sum(np.tanh(a * b) ** 2)


def tanh_rows(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def soft_ratio(w, x):
    """An intermediate that overflows (np.exp) while the gradient stays finite."""
    e = np.exp(x * w)
    return np.sum(e / (1.0 + e))


SCALE = 1.0  # (a module constant the tests rebind between calls)


def scaled_rows(w, x):
    return SCALE * np.sum(np.tanh(x @ w) ** 2)


def hidden_overflow(w, x):
    """The gradient in w, exp(-exp(x)), is 0 where exp(x) overflows; its derivative in
    x there is -inf * 0: NaN, where an explicit zero tangent of x meets it."""
    return np.sum(w * np.exp(-np.exp(x)))
