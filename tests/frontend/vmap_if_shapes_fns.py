"""An ``if`` on a per-example value whose paths give a value of one rank but
different shapes (tests/frontend/test_vmap_if_shapes.py); and one whose paths agree."""

import numpy as np


def broadcastable(x):  # (2,) against (1,): np.where broadcast it, silently
    if np.sum(x) > 0:  # the if
        y = x[:2]
    else:
        y = x[:1] * 3.0
    return np.sum(y**2)


def not_broadcastable(x):  # (2,) against (3,): NumPy's broadcasting error before
    if np.sum(x) > 0:  # the if
        y = x[:2]
    else:
        y = np.cos(x)
    return np.sum(y**2)


def same_shapes(x):  # the right way: both paths (2,)
    if np.sum(x) > 0:
        y = x[:2]
    else:
        y = x[1:] * 3.0
    return np.sum(np.sin(y) * y)
