"""Functions for test_loops14.py (issue 23, loops14): a loop over ``np.unique`` of
labels that are not differentiated, and lists indexed by a loop's counter."""

import numpy as np


def unique_means(x, labels):
    total = 0.0
    for c in np.unique(labels):
        total = total + np.mean(x[labels == c]) ** 2
    return total


def unique_weighted(x, labels):
    out = np.zeros_like(x)
    for c in np.unique(labels):
        m = labels == c
        out = out + np.where(m, np.sin(x) * c, 0.0)
    return np.sum(out * x)


class ParamList:
    def __init__(self, *arrays):
        self._items = list(arrays)

    def __len__(self):
        return len(self._items)

    def __getitem__(self, i):
        return self._items[i]


def container_loop(x):
    params = ParamList(x, 2.0 * x, np.sin(x))
    total = 0.0
    for i in range(len(params)):
        total = total + np.sum(params[i] * params[-1])
    return total


def pick(xs, i):
    return xs[i]


def helper_loop(x, ws):
    xs = [w * np.sin(x) for w in ws]
    total = 0.0
    for i in range(len(xs)):
        total = total + np.sum(pick(xs, i) * pick(xs, i - 1))
    return total


def shifted_loop(x):
    xs = [x, 2.0 * x]
    xs.append(np.cos(x))
    total = 0.0
    for i in range(len(xs)):
        total = total + np.sum(xs[i] * xs[i - 1])
    return total


def while_counter(x):
    xs = (x, x ** 2, np.tanh(x))
    total = 0.0
    i = 0
    while i < len(xs):
        total = total + np.sum(xs[i]) * xs[i][0]
        i += 1
    return total


def mixed_shapes(x):
    xs = (x, np.sum(x))
    total = 0.0
    i = 0
    while i < 2:
        total = total + np.sum(xs[i])
        i += 1
    return total
