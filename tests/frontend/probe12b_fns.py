"""Functions for tests/frontend/test_probe12b.py (issue 23, probe 12's refusals made to
run): ``operator.neg`` and friends, ``:=`` in a ``while`` test, ``getattr(np, name)`` of
a string known when transforming, str methods of a known string, ``match`` on a tuple
default with a class pattern and a guard, and ``match`` on an array's shape."""

from __future__ import annotations

import functools
import operator

import numpy as np


def operators_as_functions(x):
    prod = functools.reduce(operator.mul, [1.0 + x[i] ** 2 for i in range(x.size)])
    return prod + operator.neg(x[-1]) + operator.pos(x[0]) * operator.abs(x[1])


def walrus_while(x):
    n = 4
    acc = 0.0
    while (n := n - 1) >= 0:
        acc = acc + np.sum(np.cos(x * n))
    return acc + n  # (n is -1 after the loop, as in Python)


def walrus_while_continue(x):
    n = 3
    acc = 0.0
    while (n := n - 1) >= 0:
        if n == 1:
            continue
        acc = acc + np.sum(x * n)
    return acc


def getattr_loop(x, names=("tanh", "sin", "exp")):
    acc = 0.0
    for i, n in enumerate(names):
        acc = acc + np.sum(getattr(np, n)(x)) * (i + 1)
    return acc


def getattr_param(x, act="tanh"):
    return np.sum(getattr(np, act)(x) ** 2)


def getattr_callee(x):
    return getattr_loop(x) + getattr_param(x, "sin")


def _relu(t):
    return np.maximum(t, 0.0)


ACTS = {"tanh": np.tanh, "relu": _relu, "softplus": lambda t: np.log1p(np.exp(t))}


def spec_string(x, spec="tanh, RELU,softplus"):
    for name in spec.split(","):
        x = ACTS[name.strip().lower()](x) * 0.9 + 0.1 * x
    return np.sum(x ** 2)


def spec_startswith(x, spec="TANH , double"):
    for name in spec.lower().split(","):
        if name.strip().startswith("t"):
            x = np.tanh(x)
        else:
            x = x * 2.0
    return np.sum(x ** 2)


def literal_split(x):
    parts = "tanh, relu".split(",")
    for name in parts:
        x = ACTS[name.strip()](x)
    return np.sum(x ** 2)


def match_tuple(x, spec=("poly", 3)):
    match spec:
        case ("poly", int(k)) if k > 1:
            y = sum(x ** i / (i + 1) for i in range(k))
        case ("exp", _):
            y = np.exp(x)
        case _:
            y = x
    return np.sum(y ** 2)


def match_shape(x):
    match x.shape:
        case (n,):
            z = np.sum(x ** 2) / n
        case (n, m):
            z = np.sum(x ** 3) / (n * m)
    return z
