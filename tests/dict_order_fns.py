"""Functions whose result depends on the order of a dict argument's keys
(tests/test_jax_dict_order.py): each walks the dict in its insertion order."""

import numpy as np


def weighted_items(p):
    total = 0.0
    for i, (k, v) in enumerate(p.items()):
        total = total + (i + 1) * np.sum(v**2)
    return total


def doubling(p):
    total = 0.0
    for k, v in p.items():
        total = total * 2.0 + np.sum(np.sin(v))
    return total


def values_list(p):
    vs = list(p.values())
    return np.sum(vs[0] ** 2) + 3.0 * np.sum(np.cos(vs[1])) + 0.5 * np.sum(vs[-1] ** 3)


def stacked(p):
    s = np.stack(list(p.values()))
    return np.sum(s[0] ** 2) + 2.0 * np.sum(np.sin(s[1])) + np.sum(s[-1])


def key_tuple(p):
    ks = tuple(p)
    return np.sum(p[ks[0]] ** 2) + 3.0 * np.sum(np.tanh(p[ks[1]]))


def comprehension(p):
    return sum((i + 1.0) * np.sum(v**2) for i, (k, v) in enumerate(p.items()))


def list_comprehension(p):
    scaled = [(i + 2.0) * np.tanh(v) for i, v in enumerate(p.values())]
    return np.sum(scaled[0] * scaled[1])


def _walk(q):
    total = 0.0
    for k, v in q.items():
        total = total * 3.0 + np.sum(v * v)
    return total


def callee(p):
    return 1.5 * _walk(p)


def in_tuple(t):
    x, p = t
    total = np.sum(x**2)
    for i, v in enumerate(p.values()):
        total = total * 2.0 + (i + 1) * np.sum(v * x)
    return total


def in_list(t):
    p, y = t[0], t[1]
    total = np.sum(np.sin(y))
    for k, v in p.items():
        total = total * 2.0 + np.sum(v**2)
    return total


def in_dict(p):
    total = 0.0
    for k, inner in p.items():
        for j, v in enumerate(inner.values()):
            total = total * 2.0 + (j + 1) * np.sum(v**2)
    return total


def rebuilt(p):
    return {k: v * (i + 2.0) for i, (k, v) in enumerate(p.items())}


def scaled_items(p):
    return {k: np.sin(v) * 2.0 + np.sum(v**2) for k, v in p.items()}


def branch_scaled(p):
    out = {k: v * 2.0 + np.sum(v**2) for k, v in p.items()}
    if np.sum(p["z"]) > 0:
        out = {k: v * 3.0 for k, v in out.items()}
    return out
