"""Issue 23: objects made again and iterated, as people write them (probe 11's
``namedtuple_replace_step``, ``dataclass_replace_cfg``, ``callable_poly_class``, and
what methods16 left): a NamedTuple walked by value (``for v in p``, ``list(p)``,
``zip(p, ...)``), ``Params(*[f(v) for v in p[:2]])``, ``p._replace(w=...)`` of a
NamedTuple built here, given, or held by an object whose method replaces it,
``dataclasses.replace`` of a default object, ``reversed(s)`` read once (passed to a
constructor that copies it), ``sum(c.out)`` of a list field.  Each runs through s2s
and, in tests/frontend/test_objects17.py, against central differences or JAX on this
same source (``newcomer_harness.twin``)."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray
    scale: float = 2.0


def named_tuple_walked(x):
    p = Params(w=x[:2], b=x[2:])
    t = 0.0
    for v in p:
        t = t + np.sum(v * np.sin(v))
    a, b, c = list(p)
    pairs = sum(np.sum(u * v) for u, v in zip(p, (x[1:3], x[:2])))
    ranked = sum(i * np.sum(v) for i, v in enumerate(tuple(p)))
    return t + np.sum(a * b) * c + pairs + ranked


def spread_then_replace(x, lr=0.1):
    p = Params(w=x[:2], b=x[2:])
    g = Params(*[2.0 * v for v in p[:2]])
    p = p._replace(w=p.w - lr * g.w, b=p.b - lr * np.cos(g.b))
    return p.scale * sum(np.sum(v ** 2) for v in (p.w, p.b)) + np.sum(np.cos(p.w))


def replace_argument(p, x):
    q = p._replace(b=p.b * x[:2])
    return np.sum(np.tanh(q.w * x[2:]) * q.b) * q.scale


@dataclasses.dataclass
class Cfg:
    lr: float = 0.1
    steps: int = 2
    decay: float = 0.9


def replace_default(w, cfg=Cfg()):
    fine = dataclasses.replace(cfg, lr=cfg.lr * 0.5, steps=3)
    for c in (cfg, fine):
        for _ in range(c.steps):
            w = w - c.lr * (w ** 3 - np.cos(w))
            c = dataclasses.replace(c, lr=c.lr * c.decay)
    return np.sum(w ** 2)


class Poly:
    def __init__(self, coefs):
        self.coefs = list(coefs)

    def __call__(self, x):
        return sum(c * x ** i for i, c in enumerate(self.coefs))


def reversed_into_a_constructor(x):
    p = Poly([0.5, -1.0, 0.25])
    q = Poly(reversed(p.coefs))
    rows = list(reversed([x, np.sin(x)]))
    return np.sum(p(x) * q(x)) + np.sum(Poly([1.0, 2.0])(p(x))) + np.sum(rows[0] * x)


class Holder:
    def __init__(self, p):
        self.p = p

    def step(self, g):
        return self.p._replace(w=self.p.w - 0.1 * g)


def replace_in_a_method(x):
    h = Holder(Params(x[:2] * 2.0, x[2:]))
    q = h.step(np.sin(x[:2]))
    return np.sum(q.w ** 2 * q.b) * q.scale


class Terms:
    def __init__(self, xs):
        self.out = []
        for v in xs:
            self.out.append(np.sin(v))


def sum_of_a_list_field(x):
    c = Terms([x, x * x, 2.0 * x])
    return np.sum(sum(c.out) * x) + np.sum(sum(c.out, x))


class Coll:
    def __init__(self):
        self.out = []


def concatenated_into_a_field(x):
    c = Coll()
    c.out = c.out + [np.sin(x)]
    c.out = c.out + [x * x]
    return np.sum(c.out[0] * c.out[1]) + np.sum(c.out[1])


def appended_into_a_field(x):
    a = Coll()
    a.out.append(np.sin(x))
    a.out.append(np.cos(2.0 * x))
    a.out.append(x * x)
    return np.sum(a.out[0] * a.out[1]) + np.sum(a.out[2]) * len(a.out)


def appended_in_a_loop(x):
    a = Coll()
    for v in (x, 2.0 * x):
        a.out.append(np.sin(v))
    return np.sum(a.out[0] * a.out[1])


def concatenated_after_a_loop(x):
    a = Coll()
    for v in (x, 2.0 * x):
        a.out = a.out + [np.sin(v)]
    a.out = a.out + [x * x]
    return np.sum(a.out[2])


# ---- refused, located (Python's meaning is not what s2s would compute) ---------------------


def generator_read_twice(x):
    r = (np.sin(v) for v in x)
    t = sum(r)
    return t + sum(r)  # (Python: the second sum is 0)


def reversed_read_twice(x):
    xs = [x[0], x[1], x[2]]
    r = reversed(xs)
    a = sum(np.sin(v) for v in r)
    return a + sum(10.0 * v for v in r)  # (spent: nothing here)


class Scaled:
    def __init__(self, w):
        self.w = w

    def scaled(self, s):
        return Scaled(self.w * s)


def object_rebound_in_a_loop(x):
    d = Scaled(x * 1.0)
    for _ in range(3):
        d = d.scaled(0.9)
    return np.sum(d.w ** 2)
