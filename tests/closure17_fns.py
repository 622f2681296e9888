"""Functions over module names and closure cells a mini-batch loop rebinds at every
step (tests/test_closure17.py): the source s2s reads is this file's."""

import numpy as np

XB = None
YB = None
MASK = None
IDX = None


def logistic_mean(w, x, y):
    return np.mean(np.log1p(np.exp(-y * (x @ w))))


def batch_loss(w):  # the batch a module name holds
    return logistic_mean(w, XB, YB)


def masked_loss(w):  # a boolean mask: the selection's shape is the mask's values'
    return np.sum((XB[MASK] @ w) ** 2)


def gathered_loss(w):  # an integer index: its values pick the rows
    return np.sum(np.sin(XB[IDX] @ w))


def cell_loss():
    """A loss over a closure cell the caller rebinds (``set``), its grad made once."""
    xb = yb = None

    def loss(w):
        return np.mean(np.log1p(np.exp(-yb * (xb @ w))))

    def set_batch(x, y):
        nonlocal xb, yb
        xb, yb = x, y

    return loss, set_batch


def mlp_loss(w1, w2, x, y):
    h = np.tanh(x @ w1)
    return 0.5 * np.mean(np.sum((h @ w2 - y) ** 2, axis=1))
