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


# ---- np.vectorize and np.apply_along_axis of a Python function ---------------------------


def _bump(v):
    return np.tanh(v) * v + np.where(v > 0.0, v ** 2, -v)


def vectorize_named_twice(x):
    f = np.vectorize(_bump)
    return np.sum(f(x) * np.cos(x)) + np.sum(f(x * 2.0))


def vectorize_inline_lambda_matrix(m):
    """On a matrix: elementwise, the result reshaped as the argument."""
    out = np.vectorize(lambda v: np.sin(v) * v ** 2)(m)
    return np.sum(out * np.cumsum(np.ones_like(out)).reshape(np.shape(m))) + np.sum(out ** 2)


def along_rows_scalar(m):
    def energy(r):
        return np.sum(r ** 2) - r[0] * r[-1]

    return np.sum(np.apply_along_axis(energy, 1, m) ** 2)


def along_columns_vector(m):
    """axis 0, a vector per column: the result's first axis is the function's."""
    def head(c):
        return c[:2] * np.sum(c)

    out = np.apply_along_axis(head, 0, m)
    return np.sum(out * np.cumsum(np.ones_like(out)).reshape(np.shape(out)))


def along_last_of_3d(t):
    def summary(r):
        return np.array([np.max(r), np.mean(r ** 2)])

    return np.sum(np.sin(np.apply_along_axis(summary, -1, t)))


# ---- a type test of a value whose type is known only when the function runs -----------


def _leaf_sum(tree):
    if isinstance(tree, list):
        return sum(_leaf_sum(t) for t in tree)
    return np.sum(tree ** 2)


def recursive_leaves(x):
    return _leaf_sum([x[:2], [x[2:4], [x[4:]]]])


def grown_leaves(x):
    """The list grown in a loop: its items' types are not known when transforming."""
    parts = []
    for k in range(2):
        parts.append(x[k:])
    return _leaf_sum(parts)


def vectorize_called_in_a_lambda(x):
    """``f`` called inside a lambda, where the pass does not rewrite: refused as
    before (the ``f = np.vectorize(...)`` kept), never a NameError."""
    f = np.vectorize(_bump)
    g = lambda v: f(v)  # noqa: E731
    return np.sum(g(x))


def vectorize_in_a_loop(x):
    f = np.vectorize(_bump)
    total = 0.0
    for i in range(3):
        total = total + np.sum(f(x * (i - 1.0)))
    return total
