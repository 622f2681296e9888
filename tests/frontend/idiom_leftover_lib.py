"""A user module the functions of idiom_leftover_fns.py import (``import
idiom_leftover_lib as lib``, then ``lib.helper(x)``): tests/frontend/test_idiom_leftovers.py
points the JAX twin's ``lib`` at this module's own twin."""

import numpy as np

SCALE = np.array([0.5, -1.5, 2.0])


def helper(x):
    return np.sin(x) * x * SCALE


def loss(x, w=2.0):
    return np.sum(np.tanh(x * w) ** 2)
