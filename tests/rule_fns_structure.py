"""Functions for the structural rows of the rule table (see rule_rows_structure.py)."""

import numpy as np

W = np.array([0.5, -1.0, 2.0])


def f_setitem(x):
    y = np.zeros((2, 3))
    y[0] = np.sin(x[0])
    y[1, 1:] += x[1, :2] ** 2
    return np.sum(y * W)


def f_list_append(x):
    parts = []
    h = x[0]
    for i in range(1, x.shape[0]):
        h = np.sin(x[i]) * h
        parts.append(h * 2.0)
    return np.sum(np.stack(parts) * W)
