"""Source functions for tests/test_located_second_transform.py."""

import numpy as np


def inner(x):
    y = x
    for i in range(3):
        y = np.sin(y) + 0.5 * x
        if np.sum(y) > 1.0:
            break
    return y


def caller_if(x):
    if np.sum(x) > 0.5:
        return np.sum(inner(x) ** 2)
    return np.sum(x)


def grows_in_a_loop(x, coeffs=(0.5, -1.0, 2.0)):
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return np.sum(acc)


def grows_rank_every_iteration(x, coeffs=(0.5, -1.0, 2.0)):
    acc = 0.0
    for c in coeffs:
        acc = np.expand_dims(acc, -1) * x + c
    return np.sum(acc)
