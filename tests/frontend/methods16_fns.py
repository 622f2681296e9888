"""Functions for test_methods16.py (issue 23): model classes as people write them,
after methods15: lists grown by two loops (a wrong "index 4 is out of range for a
list of length 3" before), a loop over a list field in the function itself, a
``@property`` setter pair, a method returning a new object of its class, in-place
adds of float32 fields."""

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
