"""The functions of tests/test_audit19.py (issue 23: objects and methods).

An argument object whose class defines a method named as a dict's or an array's
(``get``) passed on to a function of yours that calls it: Python runs the class's
``get``; s2s read the object as the dict of its fields and ran the dict's in the
callee (a wrong number before audit19: only the transformed function's own body was
checked)."""

from __future__ import annotations

import functools

import numpy as np


class Store:
    def __init__(self, s, t):
        self.s = s
        self.t = t

    def get(self, name):
        return self.s * self.t * 5.0

    def scaled(self, k):
        return self.get("s") * k


def inner(w, st):
    return np.sum(np.sin(w) * st.get("s"))


def passed_on(w, st):
    return inner(w, st)


def passed_by_keyword(w, st):
    return inner(st=st, w=w)


def passed_in_a_tuple(w, st):
    return _first_of(w, (st,))


def _first_of(w, held):
    return inner(w, held[0])


def spread_on(w, *objs):
    return inner(w, *objs)


def keyword_only(w, *, st):
    return inner(w, st)


def own_method_calls_it(w, st):
    return np.sum(np.sin(w)) * st.scaled(2.0)


class Wrap:
    def __init__(self, st):
        self.k = st.get("s")

    def run(self, w):
        return np.sum(np.sin(w) * self.k)


def given_to_a_constructor(w, st):
    return Wrap(st).run(w)


_INNER = functools.partial(inner)


def through_a_partial(w, st):
    return _INNER(w, st)


def through_a_local_name(w, st):
    h = inner
    return h(w, st)


def in_a_nested_function(w, st):
    def read(o):
        return o.get("s")

    return np.sum(np.sin(w) * read(st))


class Summer:
    """``sum`` of its own: ``s.w.sum()`` is the field's (an array's) all the same."""

    def __init__(self, w):
        self.w = w

    def sum(self):
        return np.sum(self.w) * 100.0


def _field_sum(x, s):
    return np.sum(x * s.w.sum()) + np.sum(np.cos(x) * s.w[0])


def field_method_in_a_callee(x, s):
    return _field_sum(x, s)


def callee_not_calling_it(w, st):
    return _scaled_sin(w, st)


def _scaled_sin(w, st):
    return np.sum(np.sin(w) * st.s * st.t)


def _reads_a_field(w, st):
    return np.sum(np.sin(w) * st.s)


CALLEE = _reads_a_field


def through_a_rebound_global(w, st):
    return CALLEE(w, st)
