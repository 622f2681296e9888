"""Functions spreading ``*xs`` whose length is known only per call
(tests/frontend/test_star_items.py); run by s2s and, through jax_twin, by JAX."""

import numpy as np


def scaled_sin(a, b):
    return a * np.sin(b)


def affine(x, w, b):
    return x * w + b


def scale_by(a, b=2.0):
    return a * b


def spreads_a_tuple_argument(x, xs):
    return np.sum(x * scaled_sin(*xs))


def spreads_after_a_positional(x, ws):
    return np.sum(np.tanh(affine(x, *ws)))


def spreads_a_grown_list(x):
    parts = []
    for k in range(2):
        parts.append(x * (k + 1.0))
    return np.sum(scaled_sin(*parts) ** 2)


def calls_a_spreading_function(x, xs):
    return spreads_a_tuple_argument(x * 2.0, xs) + np.sum(x)


def spreads_into_defaults(x, xs):
    return np.sum(x * scale_by(*xs))
