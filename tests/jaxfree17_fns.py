"""Functions over module names a training loop rebinds (tests/test_jaxfree17.py): a
batch, a scale, an integer index, a boolean mask, a count; the source s2s reads is
this file's."""

import numpy as np

XB = None
YB = None
SCALE = 1.0
IDX = None
MASK = None
REPEAT = 2


def logistic_mean(w, x, y):
    return np.mean(np.log1p(np.exp(-y * (x @ w))))


def batch_loss(w):  # the batch a module name holds
    return logistic_mean(w, XB, YB)


def scaled_loss(w):  # a float module constant the loop changes (a weight decay)
    return logistic_mean(w, XB, YB) + SCALE * np.sum(w**2)


def indexed_loss(w):  # an integer index and a boolean mask: their values pick rows
    return np.sum(np.sin(XB[IDX] @ w)) + np.sum((XB[MASK] @ w) ** 2)


def repeated_loss(w):  # an integer count: the shape of what the code builds
    return np.sum(np.tile(XB @ w, REPEAT) ** 2)


def cell_loss():
    """A loss over closure cells the caller rebinds (``set_batch``)."""
    xb = yb = None

    def loss(w):
        return np.mean(np.log1p(np.exp(-yb * (xb @ w))))

    def set_batch(x, y):
        nonlocal xb, yb
        xb, yb = x, y

    return loss, set_batch


def rows_by_values(w):  # a module array whose values make a mask: needed concrete
    return np.sum((XB[XB[:, 0] > 0.0] @ w) ** 2)
