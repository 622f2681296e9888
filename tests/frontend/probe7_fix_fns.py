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
