"""``h(*xs)`` where ``xs``'s length is known only per call and ``h`` has defaults left
to fill or a ``*args`` of its own (issue 23, item 5); run by s2s and, through
jax_twin, by JAX (tests/frontend/test_spread_lengths.py)."""

import numpy as np


def scale_by(a, b=2.0, c=0.5):
    return a * b + c


def total(*args):
    s = 0.0
    for a in args:
        s = s + np.sum(np.sin(a))
    return s


def weighted(x, *ws, bias=0.0):
    out = x
    for w in ws:
        out = np.tanh(out * w)
    return np.sum(out) + bias


def spreads_into_defaults(x, xs):
    return np.sum(x * scale_by(*xs))


def spreads_into_star_args(x, xs):
    return np.sum(x * total(*xs)) + np.sum(x**2)


def spreads_after_a_positional(x, ws):
    return weighted(x, *ws, bias=1.5)


def calls_a_spreading_function(x, xs):
    return spreads_into_defaults(x * 2.0, xs) + np.sum(np.cos(x))
