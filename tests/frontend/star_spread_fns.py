"""``*`` spreading an expression into a user function (tests/frontend/
test_star_spread_expr.py): NumPy's and, through newcomer_harness.twin, JAX's."""

import numpy as np


def combine(a, b, c, d):
    return a * b + c * d


def spread_call(x):
    """An array computed in the call, spread."""
    return combine(*np.sin(x)) * 2.0


def spread_slice_and_keyword(x):
    """A slice spread between a positional item and a keyword for the last parameter."""
    return combine(x[0], *x[1:3], d=x[3] ** 2)


def spread_rows(m):
    """Each row of a matrix product is one argument (items are rows, not numbers)."""
    return np.sum(combine(*(m @ m.T)[:, :2]))
