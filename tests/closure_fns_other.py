"""A second module for tests/test_closure.py: a function whose free names live here.

Emitted code puts a function and the functions it calls in one namespace, so a
name both read must denote the same object (see ``s2s.frontend.resolve.FreeVar``).
"""

import numpy as np

SCALE = 1.5
OFFSET = 0.25


def layer(x, w):
    return np.tanh(x * w * SCALE) + OFFSET
