"""Functions whose bodies sit on the line of their header (`def f(x): return x`,
`if c: a = 1; b = 2`): Python's one-line suites.  Also numpy-only sources for the
dtype tests of the max/min rules."""

import numpy as np


def one_line(x): return np.sum(np.sin(x) * x)


def one_line_blocks(x):
    if x[0] > 0: y = x * 2.0; z = y + 1.0
    else: z = x
    for i in range(3): z = z * np.cos(z)
    while np.sum(z) > 100.0: z = z * 0.5
    return np.sum(z ** 2)


def max_with_ties(x):
    return np.max(x) + np.sum(np.min(x * x, axis=0))
