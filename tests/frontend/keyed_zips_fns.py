"""Functions of tests/frontend/test_keyed_zips.py (issue 23): a dict (a
``collections.defaultdict`` or a plain one) written by keys from a constant walked
beside an array, ``for k, v in zip("abab", x)``, or by ``enumerate`` of a constant
(frontend/keyed_zips.py: unrolled, each key known when the code is made).  Written with
``np``: the test's JAX twin runs the same source with ``jax.numpy``."""

import collections
from collections import defaultdict

import numpy as np


def zip_string_keys(x):
    acc = collections.defaultdict(float)
    for k, v in zip("abab", x):
        acc[k] += v ** 2
    return acc["a"] * acc["b"] + acc["c"]


def enumerate_string_keys(x):
    acc = defaultdict(float)
    for i, k in enumerate("abca"):
        acc[k] += np.sin(x[i]) * (i + 1)
    return acc["a"] ** 2 + acc["b"] * acc["c"]


def zip_tuple_keys_plain_dict(x):
    out = {}
    for name, v in zip(("w", "b", "s"), x):
        out[name] = np.exp(v) * 0.5
    return out["w"] * out["b"] - out["s"] + out["w"] ** 2


def zip_two_arrays(x):
    y = x[::-1] * 2.0
    acc = defaultdict(float)
    for k, u, w in zip(("p", "q", "p"), x, y):
        acc[k] += u * w
    return acc["p"] * acc["q"]


def _grouped(x, scale):
    acc = defaultdict(float)
    for k, v in zip("xyx", x):
        acc[k] += v * scale
    return acc["x"] * acc["y"]


def keyed_in_callee(x):
    return _grouped(x, 2.0) + _grouped(x[1:], 0.5) * np.sum(x)


def _pairs(x, s):
    out = {}
    for k, v in zip("ab", s):
        out[k] = v * x[2]
    return out["a"] + 2 * out["b"]


def walked_argument_in_callee(x, s):
    return _pairs(x * 2.0, s) + np.sum(x)


def refused_keys_from_values(x):
    acc = defaultdict(float)
    for k, v in zip(x > 0.0, x):
        acc[k] += v
    return acc[True] - acc[False]
