"""``enumerate`` over a dict's items, keys, values, sorted or not
(test_enumerate_dicts.py).  JAX runs this same source as its oracle."""

import numpy as np


def weighted_items(p):
    total = 0.0
    for i, (k, v) in enumerate(p.items()):
        total = total + (i + 1) * np.sum(v**2)
    return total


def sorted_items_from_one(p):
    total = 0.0
    for i, (k, v) in enumerate(sorted(p.items()), start=1):
        total = total + i * np.sum(np.sin(v))
    return total


def sorted_keys(p):
    total = 0.0
    for i, k in enumerate(sorted(p)):
        total = total + (i + 0.5) * np.sum(p[k] * p[k])
    return total


def values_only(p):
    out = 0.0
    for i, v in enumerate(p.values()):
        out = out + np.sum(np.tanh(v) * (i - 1.0))
    return out


def in_a_comprehension(p):
    return sum((i + 1) * np.sum(v**3) for i, (k, v) in enumerate(sorted(p.items())))


def stacked_list_of_values(p):
    return np.sum(np.stack(list(p.values())) ** 2 * np.arange(1.0, 4.0)[:, None])


def first_and_last_of_the_copy(p):
    vals = list(p.values())  # (the caller's order: the first and last keys it wrote)
    return np.sum(vals[0] * np.tanh(vals[-1]))


def loop_over_the_copy(p):
    return sum((k + 1.0) * np.sum(v**3) for k, v in enumerate(list(p.values())))


def pairs_of_the_copy(p):
    pairs = list(p.items())
    return np.sum(pairs[0][1] * 2.0 + np.sin(pairs[1][1]))


def built_in_the_function(x):
    d = {"w": x, "v": np.cos(x)}
    acc = 0.0
    for i, (name, v) in enumerate(d.items()):
        acc = acc + (2.0 * i + 1.0) * np.sum(v * x)
    return acc


def zipped_keys_unsupported(p):
    total = 0.0
    for i, (k, v) in enumerate(sorted(p.values())):
        total = total + i * np.sum(v)
    return total
