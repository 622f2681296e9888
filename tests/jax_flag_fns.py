"""A `while` whose `if` on a carried flag calls a function on one path
(tests/test_jax_lowering.py)."""

import numpy as np


def helper(v, s):
    return np.sin(v) + s


def looped(x, n):
    s = x * 0.1
    i = 0
    flag = False
    while i < n:
        if flag:
            out = helper(s, s)
        else:
            out = np.exp(s)
        s = out * 0.5
        flag = True
        i = i + 1
    return np.sum(x * s)
