"""Writes through indexes whose array items are separated by a slice (an int next to
a slice counts): tests/test_separated_index.py, against central differences."""

import numpy as np

W = np.arange(6.0).reshape(2, 3) / 6.0 - 0.3
I02 = np.array([0, 2])


def set_batched_value(a):
    b = a * 1.0
    b[I02, :, 1] = W * a[0, 0, 0] ** 2
    return np.sum(np.sin(b) * b)


def set_constant_rows(a):
    b = a * 1.0
    b[I02, :, 1] = W
    return np.sum(b * np.cos(b))


def add_into(a):
    b = np.copy(a)
    b[1, :, I02] += np.sin(a[0, :2])
    return np.sum(b ** 3)
