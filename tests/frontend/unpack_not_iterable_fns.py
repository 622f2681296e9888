"""Functions unpacking a value with no items (``a, b = np.sum(x)``): Python raises
TypeError at the line marked ``# unpacks``; and their right-width neighbours."""

import numpy as np


def of_a_sum(x):
    a, b = np.sum(x)  # unpacks
    return a * b


def of_an_item(x):
    y = np.sin(x)
    first, second = y[0] * 2.0  # unpacks
    return first + second


def helper(v):
    p, q = np.dot(v, v)  # unpacks
    return p - q


def in_a_callee(x):
    return helper(x * 3.0) + np.sum(x)


def of_a_slice(x):  # right: the first two items
    a, b = x[:2]
    return a * np.sin(b) + np.sum(x ** 2)


def of_a_grown_list(x):  # right: a list grown in a loop
    pts = []
    for k in range(2):
        pts.append(x[k] * x[k + 1])
    a, b = pts
    return a - 2.0 * b
