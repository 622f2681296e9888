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
