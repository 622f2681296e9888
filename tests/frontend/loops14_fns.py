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
