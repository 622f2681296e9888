"""The functions of tests/test_audit18.py: an argument object (a plain class of yours,
a dataclass) whose class defines a method named as a dict's or an array's (``get``,
``items``, ``keys``): Python runs the class's method, s2s read the object as the dict
of its fields and ran the dict's (a wrong number before the audit)."""

from __future__ import annotations

import dataclasses

import numpy as np


class Store:
    def __init__(self, s, t):
        self.s = s
        self.t = t

    def get(self, name):
        return self.t * 10.0

    def scaled(self, k):
        return self.s * k


@dataclasses.dataclass
class Pairs:
    s: float
    t: float

    def items(self):
        return [("t", self.t)]

    def keys(self):
        return ["t"]


def use_get(w, st):
    return np.sum(np.sin(w) * st.get("s"))


def use_items(w, st):
    out = 0.0
    for k, v in st.items():
        out = out + np.sum(np.sin(w) * v)
    return out


def use_keys(w, st):
    return np.sum(w) * len(st.keys())


def use_get_typed(w, st):
    return np.sum(np.sin(w) * st.get("s")) + st.scaled(1.0)


def use_get_as_written(w, st):
    return np.sum(np.sin(w) * Store.get(st, "s"))


def cast(x, dtype=np.float32):
    return x.astype(dtype) * 2


def cast_kwonly(x, *, n=2, dtype=np.float32):
    return np.tile(x, n).astype(dtype)


def act_step(grad, w, act, x):
    """A lambda made per step closing over a function that changes between steps."""
    return grad(lambda w: np.sum(act(w * x)))(w)


def make_grad(grad, x):
    return grad(lambda w: np.sum(np.sin(w) * x))
