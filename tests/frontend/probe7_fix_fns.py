"""Functions for tests/frontend/test_probe7_fixes.py (issue 23, probe 7's refusals
made to run): the same source runs through s2s and, as its ``jax.numpy`` twin
(``support.jax_twin``), through JAX as the oracle."""

from __future__ import annotations

import numpy as np

# ---- a comprehension's `if` on the counter of a `range` ---------------------------------


def filtered_evens_odds(x):
    evens = [x[i] ** 2 for i in range(len(x)) if i % 2 == 0]
    odds = [np.sin(x[i]) for i in range(len(x)) if i % 2 == 1]
    return sum(evens) * 2.0 + sum(odds) * np.sum(x)


def filtered_neighbours(x):
    """Two counters, a filter on both and on ``len``: pairs above the diagonal."""
    return sum(x[i] * np.cos(x[j]) for i in range(len(x)) for j in range(len(x))
               if i < j and j != len(x) - 1) + np.sum(x ** 3)


def filtered_counter_and_value(x):
    """A filter reading an array value besides the counter: refused, located."""
    return sum(x[i] for i in range(len(x)) if i % 2 == 0 and x[i] > 0)


# ---- np.array of a nested list literal, under vmap -------------------------------------


def nested_inv_det(x, b=np.array([1.0, 0.5])):
    a = np.array([[2.0 + x[0] ** 2, x[1]], [x[1], 1.0 + x[2] ** 2]])
    sol = np.linalg.inv(a) @ b
    return np.sum(sol ** 2) + np.log(np.linalg.det(a))


def nested_constant_row(x):
    """One row of constants only (not batched), one of the argument's values."""
    a = np.array([[x[0] * x[1], np.sin(x[2])], [0.5, 2.0]])
    return np.sum(a @ a) + np.trace(a) * x[0]


def nested_three_deep(x):
    t = np.array([[[x[0], x[1]], [x[1] * x[2], 1.0]], [[1.0, x[2]], [x[2] ** 2, 2.0]]])
    return np.sum(t ** 3) + np.sum(t[0] @ t[1])


def nested_rows_of_arrays(x):
    """Items that are arrays (slices) beside an array of constants."""
    m = np.array([[x[:2], x[1:] ** 2], [x[:2] * x[2], np.ones(2)]])
    return np.sum(np.tanh(m)) + np.sum(m[0, 1] * m[1, 0])


def nested_stack_axis(x):
    """``np.stack`` of a nested list along axis 1 (the transpose of np.array's)."""
    m = np.stack([[x[0], x[1] ** 2, 3.0], [np.cos(x[2]), x[0] * x[2], x[1]]], axis=1)
    return np.sum(m * np.arange(6.0).reshape(3, 2)) + np.sum(m ** 2)
