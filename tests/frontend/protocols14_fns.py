"""Issue 23: objects of your classes used through Python's protocols, as s2s now runs
them (each spelling is a call of the class's own method): ``obj[k]``
(``__getitem__``, constant and run-time keys), ``len(obj)`` (``__len__``), operators
and their reflected forms (``2.0 * a`` is ``a.__rmul__(2.0)``; a subclass overriding
the reflected method goes first), ``-a``, a method reading module state, a field
holding a list of objects a comprehension built, a ``__getitem__`` that returns a
field itself (aliasing), ``p.w = v`` through a property's setter and of a plain field,
a dataclass field whose ``default_factory`` returns a list literal, and the protocols
of a module's object (``GRID[x]``, ``GRID * x``).  tests/frontend/test_protocols14.py
runs them against JAX on this same source (``newcomer_harness.twin``) and central
differences."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List

import numpy as np

GAIN = 1.5  # (read by `Scaled.__call__`; the tests change it between calls)


class Box:
    def __init__(self, a):
        self.a = a

    def __getitem__(self, key):
        return 3.0 * self.a


class Table:
    def __init__(self, w):
        self.w = w

    def __getitem__(self, t):
        return self.w * t + t ** 2

    def __len__(self):
        return 7


class Holder:
    def __init__(self, data):
        self.data = data

    def __getitem__(self, i):
        return self.data


class Pack:
    def __init__(self, *arrays):
        self._items = list(arrays)

    def __len__(self):
        return len(self._items)


class Vec:
    def __init__(self, data):
        self.data = data

    def __add__(self, other):
        return Vec(self.data + other.data)

    def __sub__(self, other):
        return Vec(self.data - other.data)

    def __mul__(self, s):
        return Vec(self.data * s)

    __rmul__ = __mul__

    def __rsub__(self, s):
        return Vec(s - 2.0 * self.data)

    def __truediv__(self, s):
        return Vec(self.data / s)

    def __neg__(self):
        return Vec(-self.data)

    def __matmul__(self, other):
        return np.sum(self.data * other.data)

    def norm2(self):
        return self @ self


class Tilted(Vec):
    def __rsub__(self, other):
        return Vec(np.sin(other.data) - self.data)


class Scaled:
    def __init__(self, w):
        self.w = w

    def __call__(self, v):
        return np.tanh(GAIN * self.w * v)

    def __mul__(self, v):
        return self(v) * GAIN


class Grid:
    def __init__(self, w):
        self.w = w

    def __getitem__(self, t):
        return self.w * t + t ** 2

    def __len__(self):
        return len(self.w)

    def __mul__(self, v):
        return self.w * v

    def __rmul__(self, s):
        return 2.0 * s * self.w

    def __neg__(self):
        return -3.0 * self.w


GRID = Grid(np.array([1.0, -2.0, 0.5, 3.0]))  # (the tests change its field between calls)


class Layer:
    def __init__(self, w):
        self.w = w


class Seq:
    def __init__(self, ws):
        self.layers = [Layer(w) for w in ws]


class Weights:
    def __init__(self, w):
        self._w = w
        self.steps = 0

    @property
    def w(self):
        return self._w

    @w.setter
    def w(self, value):
        self._w = value
        self.steps = self.steps + 1


class Node:
    def __init__(self, w):
        self.w = w


@dataclass
class LossConfig:
    scales: List[float] = field(default_factory=lambda: [1.0, 0.5, 0.25])
    power: int = 2

    def __post_init__(self):
        self.total = sum(self.scales)


def getitem_string_key(x):
    box = Box(x)
    return np.sum(box["a"] ** 2) + np.sum(np.cos(Box(2.0 * x)[0]))


def getitem_runtime_key(x):
    t = Table(np.sin(x))
    return np.sum(t[x[0]] * t[0.5]) + np.sum(t[x] ** 2)


def len_protocol(x):
    p = Pack(x, 2.0 * x, np.sin(x))
    total = len(Table(x)) * np.sum(x)
    for i in range(len(p)):
        total = total + np.sum(np.cos(x * i))
    return total


def vec_operators(x):
    a = Vec(x)
    b = Vec(np.cos(x))
    c = 2.0 * a + b * 0.5
    d = 1.0 - (-a) / 4.0
    return c.norm2() + (a - b) @ c + d @ b


def subclass_reflected(x):
    a, b = Vec(x), Tilted(np.exp(0.3 * x))
    return (a - b) @ a + (b - a) @ b


def module_state_method(x):
    s = Scaled(x)
    return np.sum(s * x) + np.sum(s(np.cos(x)))


def seq_layers_comprehension(x):
    net = Seq([x, 2.0 * x, np.sin(x)])
    return np.sum(net.layers[1].w ** 2) + np.sum(net.layers[2].w * net.layers[0].w)


def getitem_returns_field(x):
    return np.sum(Holder(x)[0] ** 2) / 2.0


def getitem_value(x):
    return Holder(x)[0]


def property_setter_loop(w0, lr=0.1):
    p = Weights(w0)
    for _ in range(3):
        g = 2.0 * p.w + np.cos(p.w)
        p.w = p.w - lr * g
    return np.sum(p.w ** 2) * p.steps


def field_set(x):
    node = Node(x)
    node.extra = np.sin(x)
    node.w = node.w * node.extra
    return np.sum(node.w) + np.sum(node.extra ** 2)


def dataclass_literal_factory(x):
    cfg = LossConfig(power=3)
    terms = [s * np.sum(np.abs(x) ** cfg.power) for s in cfg.scales]
    return sum(terms) / cfg.total


def module_object_protocols(x):
    return (np.sum(GRID[x] * GRID[0.5]) + np.sum(GRID * x) + np.sum(2.0 * GRID * x)
            + len(GRID) * np.sum(x ** 2) + np.sum(-GRID * np.sin(x)))
