"""Issue 23 (audit19): methods that set attributes of an object the function built,
reading a ``@property`` or a class attribute (s2s/frontend/record_methods.py's
``SelfCalls``, built_objects.py's ``_class_attributes``), and a property's setter run
by ``self.w = w`` in ``__init__`` or a method.  tests/frontend/test_stateful19.py runs
them against JAX on this same source (``newcomer_harness.twin``) and central
differences."""

from __future__ import annotations

import numpy as np


class Norm:
    eps = 1e-3
    momentum = 0.25

    def __init__(self, n):
        self.mean = np.zeros(n)
        self.k = 0.5

    @property
    def scale(self):
        return self.k * 2.0 + 0.25

    def __call__(self, x):
        self.mean = (1 - self.momentum) * self.mean + self.momentum * x
        return (x - self.mean) * self.scale / (np.abs(self.mean) + self.eps + 1.0)


class WiderNorm(Norm):
    @property
    def scale(self):
        return self.k * 3.0


def property_read_in_a_stateful_call(x):
    bn = Norm(x.size)
    y = bn(x)
    y2 = bn(np.sin(x))
    return np.sum(y * y2) + np.sum(bn.mean ** 2) * bn.scale


def subclass_property_in_a_stateful_call(x):
    bn = WiderNorm(x.size)
    y = bn(x)
    return np.sum(y ** 2) + np.sum(bn.mean) * bn.scale


class Counter:
    count = 0
    scale = 2.0

    def __init__(self, n):
        self.total = np.zeros(n)

    def add(self, v):
        self.total = self.total + v * self.scale
        self.count = self.count + 1
        return self.total / self.count


def class_default_shadowed_by_a_field(x):
    c = Counter(x.size)
    m = c.add(x)
    for _ in range(3):
        m = c.add(np.sin(m))
    return np.sum(m ** 2) * c.count + np.sum(c.total)


class Stored:
    def __init__(self, w):
        self.w = w

    @property
    def w(self):
        return self._w * 2.0

    @w.setter
    def w(self, v):
        self._w = np.sin(v)

    def step(self, v):
        self.w = self.w + v
        return self.w * 3.0


def setter_in_init(x):
    p = Stored(x)
    return np.sum(p.w * x)


def setter_in_a_stateful_method(x):
    p = Stored(np.cos(x))
    y = p.step(x)
    return np.sum(y * p.w) + np.sum(p._w)


def _normed(x):
    bn = WiderNorm(x.size)
    y = bn(np.tanh(x))
    return y * bn.scale + bn.mean


def in_a_callee(x):
    c = Counter(x.size)
    m = c.add(_normed(x))
    return np.sum(m * _normed(x * 0.5)) + c.count
