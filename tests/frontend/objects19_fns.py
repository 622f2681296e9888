"""Issue 23 (audit19): a parameter whose default is an object of a plain class of
yours (``def f(w, opt=Opt())``), its attributes read (``opt.lr``) with no method
called on it: read as the object's fields at each call (frontend/object_fields.py),
as a dataclass default is.  tests/frontend/test_objects19.py runs them against JAX
on this same source and central differences."""

from __future__ import annotations

import numpy as np


class Opt:
    decay = 0.5

    def __init__(self, lr=0.1, steps=3):
        self.lr = lr
        self.steps = steps


def default_object_fields(w, opt=Opt()):
    out = w
    for _ in range(opt.steps):
        out = out - opt.lr * np.sin(out) * opt.decay
    return np.sum(out ** 2)


def _step(w, opt=Opt(0.3, 2)):
    return w - opt.lr * np.tanh(w) ** opt.steps


def default_object_in_a_callee(w):
    return np.sum(_step(w) * _step(w * 2.0))


class Acc:
    def __init__(self):
        self.out = []


class Box:
    def __init__(self, out):
        self.out = out


class Rec:
    def __init__(self, w):
        self.w = w
        self.out = []


def field_appended_in_a_loop(x):
    a = Acc()
    h = x
    for i in range(3):
        h = np.sin(h) * (i + 1.0)
        a.out.append(h)
    return np.sum(np.stack(a.out) ** 2) + len(a.out)


def field_grown_in_a_loop(x):
    c = Box([])
    h = x
    for _ in range(3):
        h = np.tanh(h) + 0.5
        c.out = c.out + [h]
    return np.sum(np.stack(c.out) * np.arange(3.0)[:, None]) + sum(np.sum(v) for v in c.out)


def field_appended_beside_a_field_write(x):
    r = Rec(x)
    for i in range(3):
        r.out.append(r.w * (i + 1.0))
        r.w = np.sin(r.w)
    return np.sum(np.stack(r.out) ** 2) + np.sum(r.w)


def field_appended_twice(x):
    a = Acc()
    a.out.append(np.sin(x))
    a.out.append(np.cos(x) * x)
    return np.sum(np.stack(a.out) ** 2)
