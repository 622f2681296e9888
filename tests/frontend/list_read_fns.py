"""Source functions for tests/frontend/test_list_reads.py (loaded by jax_twin too)."""

import numpy as np


def last_item(x):
    """the last item of a list grown in a loop, read after it."""
    parts = []
    for i in range(x.shape[0]):
        parts.append(np.sin(x[i]) * x)
    return np.sum(parts[-1] * np.cos(parts[-1]))


def recurrence(x, n=3):
    """each item made from the one before (`parts[-1]` in the loop that grows it)."""
    parts = [x]
    for i in range(n):
        parts.append(np.tanh(parts[-1]) * 2.0 + x)
    return np.sum(parts[-1] * np.cos(parts[-1]))


def rnn(x):
    """an RNN's hidden states over the rows of `x`, each from the last."""
    hs = [np.zeros(x.shape[1])]
    for row in x:
        hs.append(np.tanh(hs[-1] * 0.5 + row))
    return np.sum(hs[-1] ** 2) + 0.1 * np.sum(hs[-1])


def grows_after_read(x):
    """read in the loop, before this iteration's append; the whole list used after."""
    parts = []
    s = 0.0
    for i in range(x.shape[0]):
        parts.append(np.sin(x[i]) * x)
        s = s + np.sum(parts[-1] * x)
    return s + np.sum(parts[-1])


def caller(x):
    return recurrence(x) + 2.0 * last_item(x)


def first_item(x):
    """an item other than the last (test_grown_list_reads.py has more)."""
    parts = []
    for i in range(x.shape[0]):
        parts.append(np.sin(x[i]) * x)
    return np.sum(parts[0])


def stacked_and_read(x):
    """the list stacked and its last item read: two uses, one cotangent list."""
    hs = [x]
    for i in range(3):
        hs.append(np.cos(hs[-1]))
    return np.sum(np.stack(hs)) + np.sum(hs[-1])
