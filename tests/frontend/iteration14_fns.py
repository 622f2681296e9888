"""Iteration idioms (issue 23, iter14): nested zips unpacked, ``itertools``'
``combinations``/``product``/``chain``, a list display spreading ``*mats`` into
``functools.reduce``, ``:=`` in a comprehension and an ``if``, ``sorted(zip(...))`` of
literals, and loops over a literal tuple or a module's dict that ``break`` on a test
known now or only when the code runs.  tests/frontend/test_iteration14.py runs each
through s2s and compares with JAX on this same source (``newcomer_harness.twin``),
central differences or a Python loop."""

from __future__ import annotations

import functools
import itertools

import numpy as np

WEIGHTS = {"a": 1.0, "b": 2.0, "stop": 0.0, "c": 3.0}
MATS = (np.array([[1.0, 0.5], [-0.3, 0.8]]), np.array([[0.2, -1.0], [0.7, 0.4]]))


def nested_zip_pair(x, ws=(0.5, -1.0, 2.0), bs=(0.1, 0.0, -0.2), names=("a", "b", "c")):
    h = x
    total = 0.0
    for w, pair in zip(ws, zip(bs, names)):
        b, name = pair
        h = np.tanh(w * h + b)
        if name != "a":
            total = total + np.sum(h ** 2)
    for i, (w, (b, (c, name))) in enumerate(zip(ws, zip(bs, zip(ws, names))), 1):
        total = total + i * np.sum(np.sin(w * x + b * c))
    return total


def combinations_of_items(x):
    e = 0.0
    for i, j in itertools.combinations(range(1, len(x)), 2):
        e = e + x[i] * np.cos(x[j])
    for a, b in itertools.combinations(x, 2):
        e = e + 1.0 / (1.0 + (a - b) ** 2)
    for i, j, k in itertools.combinations(range(len(x)), 3):
        e = e + x[i] * x[j] * x[k]
    return e


def product_and_chain(x, ws=(0.5, 2.0)):
    t = 0.0
    for w, v in itertools.product(ws, x):
        t = t + np.sin(w * v)
    for pair in itertools.product(range(2), range(len(x))):
        t = t + x[pair[0]] * x[pair[1]]
    for v in itertools.chain(x[:2], x[1:]):
        t = t + v ** 3
    return t


def reduce_starred(m, mats=MATS):
    chain = functools.reduce(np.matmul, [m, *mats, m.T])
    total = functools.reduce(np.multiply, [m, *mats], np.ones((2, 2)))
    grown = [m, *mats, *MATS]
    return np.trace(chain) + np.sum(total) + np.sum(functools.reduce(np.add, grown))


def walrus_scan(h0, xs=np.array([0.5, -0.2, 0.1, 0.3, -1.5])):
    h = h0
    hs = [(h := np.tanh(0.8 * h + v)) for v in xs if v > -1.0]
    y = np.sin(s := np.sum(h0 ** 2))
    if (n := len(hs)) > 2:
        return np.sum(np.stack(hs) ** 2) / n + np.sum(h) + y * s
    return np.sum(h) + y


def sorted_zip_static(x):
    h = x
    for _, c in sorted(zip((2, 0, 1), (0.5, 1.5, -1.0))):
        h = h * c + 0.1
    for k, c in sorted({"b": 2.0, "a": -0.5}.items()):
        h = np.tanh(h * c)
    return np.sum(h ** 2)


def tuple_break(x):
    e = 0.0
    for k in ("a", "bb", "ccc", "d"):
        if k == "ccc":
            break
        if k == "a":
            continue
        e = e + len(k) * np.sum(np.sin(x))
    return e + len(k) * np.sum(x)


def module_dict_break(x):
    e = 0.0
    for k, w in WEIGHTS.items():
        if k == "stop":
            break
        e = e + w * np.sum(np.tanh(x))
    return e


def runtime_break(x):
    for c in (0.5, 1.5, 2.0, 3.0):
        x = x * c
        if np.sum(x ** 2) > 4.0:
            break
    return np.sum(np.sin(x))


def scaled(x):
    for v in x:
        yield np.tanh(v) * 2.0


def sorted_generator(x):
    s = sorted(scaled(x))
    ranked = sum(k * v for k, v in enumerate(sorted(np.sin(v) for v in x)))
    return s[0] * 3.0 + s[-1] + sum(k * v for k, v in enumerate(s)) + ranked
