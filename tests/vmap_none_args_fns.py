"""Callees whose parameter defaults to None, called with it and without it: which path
`if k is None` takes is known when the caller is transformed (JAX's twin decides it
as it traces)."""

import numpy as np


def scaled(x, k=None):
    if k is None:
        k = x * 2.0
    return x * k


def both_calls(x):
    return np.sum(scaled(x)) + np.sum(scaled(x, 3.0))


def shifted(x, shift=None, scale=1.5):
    out = np.sin(x) * scale
    if shift is not None:
        out = out + shift
    else:
        out = out * np.cos(x)
    return out


def none_then_array(x):
    return np.sum(shifted(x) ** 2) + np.sum(shifted(x, x[0]) * x)


def passes_it_on(x, k=None):
    return scaled(x, k) + 1.0


def through_a_helper(x):
    return np.sum(passes_it_on(x) * passes_it_on(x, 0.5))
