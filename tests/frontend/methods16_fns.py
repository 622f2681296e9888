"""Functions for test_methods16.py (issue 23): model classes as people write them,
after methods15: lists grown by two loops (a wrong "index 4 is out of range for a
list of length 3" before), a loop over a list field in the function itself, a
``@property`` setter pair, a method returning a new object of its class, in-place
adds of float32 fields."""

from typing import NamedTuple

import numpy as np


def two_loops_appending(x):
    out = []
    for v in [x, x * x, 2.0 * x]:
        out.append(np.sin(v))
    for v in [x, x * x]:
        out.append(2.0 * v)
    return np.sum(out[4] * out[1]) + np.sum(out[0])


class TwoLoops:
    def __init__(self, xs):
        self.terms = []
        for v in xs:
            self.terms.append(np.sin(v))
        for v in xs[:2]:
            self.terms.append(2.0 * v)


def two_loops_in_init(x):
    c = TwoLoops([x, x * x, 2.0 * x])
    return np.sum(c.terms[4] * x) + np.sum(c.terms[0])


def appended_then_walked(x):
    out = []
    out.append(np.sin(x))
    out.append(np.cos(x) * x)
    t = 0.0
    for v in out:
        t = t + np.sum(v * v)
    return t


def two_loops_then_walked(x):
    out = []
    for v in (x, x * x, 2.0 * x):
        out.append(np.sin(v))
    for v in (x, x * x):
        out.append(2.0 * v)
    t = 0.0
    for k, v in enumerate(out):
        t = t + (k + 1.0) * np.sum(v * x)
    return t


class Dense:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return np.tanh(x @ self.w + self.b)


class Net:
    def __init__(self, ws):
        self.layers = []
        for w in ws:
            self.layers.append(Dense(w, 0.1 * w[0]))


class LiteralNet:
    def __init__(self, a, b):
        self.layers = [Dense(a, 0.1), Dense(b, -0.2)]


def loop_over_layers(x):
    net = Net([np.outer(x, x) * 0.3, np.eye(4) * 0.5 + 0.1 * x])
    h = x
    for l in net.layers:
        h = l(h)
    return np.sum(h) + len(net.layers)


def loop_over_literal_layers(x):
    net = LiteralNet(np.outer(x, x) * 0.3, np.eye(4) * 0.5 + 0.1 * x)
    h = x
    for i, l in enumerate(net.layers):
        h = l(h) * (i + 1.0)
    return np.sum(h * h)


class Terms:
    def __init__(self, xs):
        self.terms = []
        for v in xs:
            self.terms.append(np.sin(v))


def loop_over_terms(x):
    c = Terms([x, x * x, 2.0 * x])
    t = 0.0
    for v in c.terms:
        t = t + np.sum(v * x)
    return t


class Box:
    def __init__(self, w):
        self._w = w

    @property
    def w(self):
        return self._w

    @w.setter
    def w(self, v):
        self._w = v

    @property
    def doubled(self):
        return self._w * 2.0


def property_added_in_place(x):
    p = Box(np.sin(x))
    p.w += x * x
    return np.sum(p.w * x) + np.sum(p.doubled)


def property_read_by_name(x):
    p = Box(x * 1.0)
    v = p.w
    d = p.doubled
    return np.sum(v * d * x)


def property_added_into_a_shared_array(x):
    w0 = x * 1.0
    p = Box(w0)
    p.w += x
    return np.sum(w0 * p.w)


def property_added_in_a_loop(x):
    p = Box(x * 1.0)
    for i in range(3):
        p.w += x * i
    return np.sum(p.w)


class Affine:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def with_w(self, v):
        return type(self)(v, self.b)

    def shifted(self, s):
        return self.__class__(self.w, self.b + s)

    def __call__(self, x):
        return np.tanh(x * self.w + self.b)


def new_object_of_its_class(x):
    d = Affine(np.sin(x), 0.5).with_w(x * x)
    e = d.shifted(np.sum(x))
    return np.sum(e(x) * d.w) + np.sum(Affine(x, 0.1).with_w(2.0 * x)(x))


class Grower:
    def __init__(self):
        self.terms = []

    def grow(self, v):
        self.terms = self.terms + [np.sin(v)]


def method_grows_a_list(x):
    g = Grower()
    g.grow(x[0] * x)
    g.grow(x[1] * x)
    return np.sum(g.terms[0] * 10.0 + g.terms[1] * x)


def method_grows_a_list_in_a_loop(x):
    g = Grower()
    for i in range(3):
        g.grow(x[i])
    return g.terms[0] + g.terms[2]


class DenseT(NamedTuple):
    w: np.ndarray
    b: np.ndarray

    def __call__(self, x):
        return np.tanh(x @ self.w + self.b)


class SineT(NamedTuple):
    w: np.ndarray
    b: np.ndarray

    def __call__(self, x):
        return np.sin(x @ self.w) * self.b


class NetT(NamedTuple):
    layers: list


def loop_over_argument_layers(net, x):
    h = x
    for l in net.layers:
        h = l(h)
    return np.sum(h * h)


def argument_layers_by_index(net, x):
    h = net.layers[0](x)
    return np.sum(net.layers[1](h) * x)
