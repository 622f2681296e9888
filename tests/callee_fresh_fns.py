"""Functions writing in place around a call to a helper of theirs
(tests/test_callee_fresh.py): the gradient's code calls the helper's derivative, whose
result is an array it made, then writes into the array it passed."""

import numpy as np


def _weights(r):
    r = np.asarray(r)
    return np.cos(np.arange(r.size).reshape(r.shape) * 1.3 + 0.2)


def _energy(r):
    return np.sum(np.sin(r) * _weights(r))


def column_then_helper(a):
    b = a.copy()
    b[:, 0] += a[2]
    return _energy(b)


def row_and_column(a):
    b = a.copy()
    b[1, :, 0] = a[:, 2, 1] * 3.0
    b[:, 0] += a[2] ** 2
    return _energy(b) + np.sum(b * b)


def _same(r):
    return r


def _half_fresh(r, k):
    if k > 0:
        return r
    return r * 1.0


def held_by_the_same(a):  # z is b: NumPy's z sees the write
    b = a.copy()
    z = _same(b)
    b[0] = 2.0 * a[1]
    return np.sum(np.sin(z))


def held_on_one_path(a, k):  # z is b when k > 0
    b = a.copy()
    z = _half_fresh(b, k)
    b[0] = 2.0 * a[1]
    return np.sum(np.sin(z))
