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


def make_power(k):
    """A factory returning a lambda."""
    return lambda v: v ** k


def lambda_factory(x):
    square = make_power(2)
    cube = make_power(3)
    return np.sum(square(x) + cube(x) * 0.1)


def joined_lists(x):
    base = [np.sin, make_power(2)]
    more = base + [make_module_loss(0.25)]
    return sum([np.sum(f(x)) for f in more[1:]]) + np.sum(more[0](x))


def factory_reads_enclosing(x):
    """The nested factory reads a value of the transformed function, and its made
    function a parameter named as the factory's (the made function's own wins)."""
    a = np.sum(x ** 2)

    def make(s):
        def f(v, s=0.5):
            return s * a * v
        return f

    def make2(s):
        def g(v):
            return s * np.cos(v) + a
        return g

    return np.sum(make(2.0)(x)) + np.sum(make2(3.0)(x))


def factory_with_statements(x):
    def make(s):
        t = 2.0 * s
        def f(v):
            return t * v
        return f

    return np.sum(make(1.5)(x))
