"""Functions whose gradient calls a function the user's module does not define at its
top level: a nested ``def``, a ``lambda``, a function chosen by a test, a nested
function reading the enclosing function's values, partials, a callable object
(tests/test_emit_nested.py emits them as standalone modules)."""

import functools

import numpy as np

SCALE = 1.5


def nested(x):
    def sq(v):
        return np.sin(v) ** 2

    return np.sum(sq(x) * x)


def lam(x):
    f = lambda v: np.cos(v) * SCALE  # noqa: E731
    return np.sum(f(x) * x)


def chosen(x, name="b"):
    f = np.tanh if name == "a" else (lambda v: v**2 * np.sin(v))
    return np.sum(f(x))


def closes(x, y):
    a = y * 2.0

    def inner(v):
        return np.sin(v * a) + y

    return np.sum(inner(x) ** 2)


def helper(v, w):
    return np.exp(v * w)


def partial_in_body(x):
    p = functools.partial(helper, w=0.5)
    return np.sum(p(x) * x)


QUARTER = functools.partial(helper, w=0.25)


def partial_at_module(x):
    return np.sum(QUARTER(x) * np.cos(x))


class Scaled:
    def __init__(self, c):
        self.c = c

    def __call__(self, v):
        return np.tanh(v * self.c) * self.c


SCALED = Scaled(0.75)


def callable_object(x):
    return np.sum(SCALED(x) * x)


def apply(f, x):
    return f(x) * 2.0


def passes_nested(x):
    def cube(v):
        return v**3

    return np.sum(apply(cube, x) + apply(np.tanh, x))


class Holder:
    def __init__(self):
        self.parts = [np.ones(3), np.zeros(3)]

    def __call__(self, v):
        return v * self.parts[0]


HOLDER = Holder()


def holds_a_list(x):
    return np.sum(HOLDER(x))
