"""The absolute value and its neighbours at +-inf, 0, -0.0 and NaN (JAX's twin runs
the same source): abs'(x) is JAX's select(x >= 0, 1, -1) for real x."""

import numpy as np


def np_abs(x):
    return np.sum(np.abs(x) * 2.0)


def builtin_abs(x):
    return np.sum(abs(x))


def absolute_times_x(x):
    return np.sum(np.absolute(x) * np.tanh(x))


def fabs(x):
    return np.sum(np.fabs(x))


def copysign(x):
    return np.sum(np.copysign(x, -1.0))


def sign_times_x(x):
    return np.sum(np.sign(x) * x)


def maximum_zero(x):
    return np.sum(np.maximum(x, 0.0))


def minimum_zero(x):
    return np.sum(np.minimum(x, 0.0))


def clip(x):
    return np.sum(np.clip(x, -1.0, 1.0))


def norm_one(x):
    return np.linalg.norm(x, 1)
