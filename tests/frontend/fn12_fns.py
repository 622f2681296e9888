"""Functions made by factories and slices of lists of functions, called inside the
transformed function (issue 23, item 3; newcomer_probe6's ``closure_factory`` and
``lambda_table``).  tests/frontend/test_fn12.py compares each with JAX on this same
source."""

from __future__ import annotations

import numpy as np


def lambda_slice(x):
    ops = [lambda v: v ** 2, lambda v: np.exp(-v), lambda v: np.log1p(v ** 2)]
    return sum([np.sum(op(x)) for op in ops[:2]]) + np.sum(ops[2](x))


def lambda_slice_loop(x):
    ops = (np.sin, lambda v: v * x, np.tanh, lambda v: v ** 3)
    total = 0.0
    for op in ops[1::2]:
        total = total + np.sum(op(x))
    for op in ops[-2:]:
        total = total + np.sum(op(2.0 * x))
    return total


def factory_once(x):
    def make_loss(scale):
        def loss(v):
            return scale * np.sum(v ** 2)
        return loss

    f = make_loss(2.0)
    return f(x)


def make_module_loss(scale):
    def loss(v):
        return scale * np.sum(np.sin(v) * v)
    return loss


def module_factory(x):
    f = make_module_loss(0.5)
    g = make_module_loss(3.0)
    return f(x) + g(x * x)


def closure_factory(x):
    def make_loss(scale, power=2):
        def loss(v):
            return scale * np.sum(np.abs(v) ** power)
        return loss

    losses = [make_loss(s) for s in (1.0, 0.5)] + [make_loss(0.1, power=3)]
    return sum([f(x) for f in losses])


def factory_of_values(x):
    """The made function closes over a value the transformed function computed."""
    def make(w):
        def apply(v):
            return np.tanh(w * v)
        return apply

    w = np.sum(x) * 0.5
    f = make(w)
    return np.sum(f(x))


def _apply_all(fs, v):
    return sum([np.sum(f(v)) for f in fs])


def slice_passed(x):
    ops = [np.sin, lambda v: v * v, np.cos, np.tanh]
    first = ops[:2]
    return _apply_all(ops[1:], x) + _apply_all(first, 2.0 * x) + np.sum(first[-1](x))


def run_time_slice(x, k):
    ops = [np.sin, np.cos, np.tanh]
    return sum([np.sum(op(x)) for op in ops[:k]])
