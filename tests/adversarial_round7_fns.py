"""Source functions for tests/test_adversarial_round7.py (loaded by jax_twin too)."""

import numpy as np


def rank_by_branch(x):
    if np.sum(x) > 0:
        y = x * 2.0
    else:
        y = np.sum(x)
    return np.sum(y * x)


def dict_rank_by_branch(x):
    d = {"a": x, "b": 1.0}
    if x[1] > 0:
        d = {"a": 2.0, "b": x ** 2}
    return np.sum(d["a"] * d["b"] + x)


def tuple_rank_by_branch(x):
    if x[0] > 0:
        a, b = x, 1.0
    else:
        a, b = 2.0, x
    return np.sum(a * b * x)


def same_rank_by_branch(x):
    if np.sum(x) > 0:
        y = x * 2.0
    else:
        y = np.sin(x)
    return np.sum(y * x)


def ones_of_k(x, k):
    return np.sum(np.outer(x, np.ones(k)) ** 2)


def slice_k(x, k):
    return np.sum(x[:k] ** 2)


def list_grown_then_spliced(x):
    parts = []
    for i in range(3):
        parts.append(x * i)
    more = [np.sin(x)]
    parts = parts + more
    parts.extend([x ** 2])
    s = 0.0
    for j, p in enumerate(parts):
        s = s + (j + 1) * np.sum(p)
    return s
