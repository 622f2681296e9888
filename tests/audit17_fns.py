"""Functions for tests/test_audit17.py: reductions over an axis tuple, where the
rules read one int axis (median) or the batch rule took an explicit ``weights=None``
for weights (average)."""

import numpy as np


def _w(r):
    return np.sin(np.arange(np.size(r)).reshape(np.shape(r)) * 1.7 + 0.3)


def median_axes_02(a):
    return np.sum(np.median(a, axis=(0, 2)) * _w(np.median(a, axis=(0, 2))))


def median_axes_neg_keep(a):
    m = np.median(a, axis=(-1, 0), keepdims=True)
    return np.sum(m * a * _w(a))


def median_axis_1(a):
    return np.sum(np.median(a, axis=1) * _w(np.median(a, axis=1)))


def average_weights_none(a):
    m = np.average(a, axis=(0, 2), weights=None)
    return np.sum(m * _w(m))


def percentile_axes(a):
    return np.sum(np.percentile(a, 40.0, axis=(0, 1)) ** 2)


def quantile_axes_positional(a):
    return np.sum(np.quantile(a, 0.3, (0, 2)))


def nanquantile_axes(a):
    return np.sum(np.nanquantile(a, 0.5, axis=[1, 2]))


def nanpercentile_axes(a):
    return np.sum(np.nanpercentile(a, 50.0, axis=(2, 0)))
