"""Indexes whose array items are separated by a slice, ``None`` or an int next to a
slice (tests/test_separated_index.py): NumPy puts the arrays' axes first."""

import numpy as np

W = np.arange(6.0).reshape(2, 3) / 6.0 - 0.3
I02 = np.array([0, 2])
MASK = np.array([True, False, True])


def arr_slice_int(a):
    return np.sum(np.sin(a[I02, :, 1]) * W)


def int_slice_arr(a):
    return np.sum(np.sin(a[1, :, I02]) * W)


def arr_int_arr(a):  # adjacent (the int is an array item too): in place
    return np.sum(np.cos(a[I02, 1, np.array([2, 1])]) * W[0, :2])


def arr_slice_arr(a):
    return np.sum(a[I02, :, np.array([2, 1])] ** 2 * W)


def mask_slice_int(a):
    return np.sum(np.tanh(a[MASK, :, 1]) * W)


def none_between(a):
    return np.sum(np.sin(a[:, I02, None, 1]) * W[:, :, None])
