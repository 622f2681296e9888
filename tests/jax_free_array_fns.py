"""A function reading a module-level ``jax.Array`` (tests/test_jax_free_array.py)."""

import numpy as np

W = np.arange(3.0)  # the test rebinds it to a jax.Array


def dot_free(x):
    return np.dot(W, np.sin(x))
