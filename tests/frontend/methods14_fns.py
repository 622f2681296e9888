"""Functions for test_methods14.py (issue 23): a field only ever a Python number
updated with ``+=`` in a setter, a method or ``__init__``; a list field appended to in
``__init__``; a method that sets attributes called as a statement."""

import numpy as np


class Counted:
    def __init__(self, w):
        self._w = w
        self.steps = 0
        self.scale = 1.0

    @property
    def w(self):
        return self._w

    @w.setter
    def w(self, value):
        self._w = value
        self.steps += 1
        self.scale *= 0.5


def setter_counts(x):
    p = Counted(np.sin(x))
    for _ in range(3):
        p.w = p.w - 0.1 * (2.0 * p.w + np.cos(p.w))
    return np.sum(p.w ** 2) * p.steps + p.scale * np.sum(p.w)


class Ticker:
    def __init__(self, w, k):
        self.w = w
        self.calls = 0
        for _ in range(k):
            self.calls += 1
        self.advance(0.5 * w)

    def advance(self, g):
        self.calls -= 1
        self.w = self.w * np.tanh(g)
        self.calls += 2.5


def method_counts(x):
    t = Ticker(2.0 * x, 2)
    t.advance(x)
    t.advance(np.cos(x))
    return np.sum(t.w) * t.calls


class Shared:
    def __init__(self, w):
        self.w = w

    @property
    def v(self):
        return self.w

    @v.setter
    def v(self, value):
        self.w += value  # (an array field: Python changes it in place)


def array_field_updated_in_place(x):
    s = Shared(x)
    s.v = np.cos(x)
    return np.sum(s.w)


def number_field_set_to_array(x):
    p = Counted(x)
    p.steps = x
    p.w = 2.0 * x
    return np.sum(p.w) + np.sum(p.steps)


class Terms:
    def __init__(self, x):
        self.terms = []
        self.terms.append(x)
        self.terms.append(x * x)
        self.terms.append(np.sin(x))

    def total(self):
        return sum(np.sum(t) for t in self.terms)


def init_appends_terms(x):
    t = Terms(np.cos(x))
    return t.total() + np.sum(t.terms[2] * t.terms[1])


class Concatenated:
    def __init__(self, x):
        self.terms = [x]
        self.terms = self.terms + [np.sin(x)]
        self.terms = self.terms + [x * x]


def init_concatenates_terms(x):
    t = Concatenated(np.cos(x))
    return np.sum(t.terms[2] * t.terms[1]) + np.sum(t.terms[0])


class Aliased:
    def __init__(self, x):
        self.terms = []
        self.first = self.terms  # (the same list: an append shows through both)
        self.terms.append(x)


def init_append_aliased(x):
    a = Aliased(x)
    return np.sum(a.first[0])


class Bumped:
    def __init__(self, w):
        self.w = w

    def bump(self, v):
        self.w = self.w + v


def method_statement(x):
    p = Bumped(np.sin(x))
    p.bump(np.cos(x))
    p.bump(x * x)
    return np.sum(p.w ** 2)


def passed_object_bumped(p, x):
    p.bump(x)
    return np.sum(p.w)


def held_object_bumped(x):
    p = Bumped(x)
    held = [p]
    p.bump(x)
    return np.sum(held[0].w)


def number_field_set_by_the_function(x):
    p = Counted(np.sin(x))
    p.steps = p.steps * 2 + 1  # (a number: the class's `+=` of it stays exact)
    p.w = p.w * np.cos(x)
    return np.sum(p.w) * p.steps
