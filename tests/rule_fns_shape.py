"""Functions for the joining/splitting rows of the rule table (see rule_rows_shape.py)."""

import numpy as np

W = np.array([0.5, -1.0, 2.0])


def f_concatenate(x, y):
    z = np.concatenate([x, y * 2.0, x], axis=0)
    return np.sum(np.sin(z) * W)


def f_split(x):
    a, b, c = np.split(x * x, 3)
    return np.sum(a * 3.0 + np.sin(b) - c**2)
