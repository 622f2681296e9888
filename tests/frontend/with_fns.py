"""Source functions for tests/frontend/test_with.py (loaded by jax_twin too: there
`np` is jax.numpy, which has no errstate, so the context is NumPy's own by name)."""

import contextlib
import warnings

import numpy as np

errstate = __import__("numpy").errstate  # (NumPy's, in this module and in its JAX twin)


def masked_log(x):
    """the idiom: silence the warnings of a branch `np.where` throws away."""
    with errstate(divide="ignore", invalid="ignore"):
        y = np.where(x > 0, np.log(np.abs(x) + (x == 0)), 0.0)
        z = y * x
    return np.sum(z * z)


def filtered(x):
    """`warnings.catch_warnings()` with `simplefilter` first in its body."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y = np.sqrt(x)
        w = np.where(x >= 0, y, 0.0)
    return np.sum(w * np.cos(x))


def in_a_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        with errstate(divide="ignore", invalid="ignore"):
            t = np.where(x[i] != 0, 1.0 / x[i], 0.0)
            s = s + np.tanh(t * x[i] ** 3)
    return s


def nested(x, scale=2.0):
    with warnings.catch_warnings(action="ignore", category=RuntimeWarning):
        with errstate(over="ignore"):
            e = np.exp(x * scale)
        r = e / (1.0 + e)
    return np.sum(r * x)


def caller(x):
    return masked_log(x) + 0.5 * in_a_loop(x)


# refused


def suppresses(x):
    with contextlib.suppress(ValueError):
        y = np.log(x)
    return np.sum(y)


def records(x):
    with warnings.catch_warnings(record=True) as caught:
        y = np.log(x)
    return np.sum(y) + len(caught)


def raises_on_trouble(x):
    with errstate(divide="raise"):
        y = 1.0 / x
    return np.sum(y)
