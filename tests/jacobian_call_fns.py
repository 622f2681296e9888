"""A small function for tests/test_jacobian_source_lazy.py."""

import numpy as np


def cubes(x):
    return np.sum(x**3) / 3.0
