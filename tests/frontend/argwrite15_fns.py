"""A function with an `assert` for tests/frontend/test_argwrite15.py (pytest rewrites
the asserts of a test module, so its functions' code no longer matches their source)."""

import numpy as np


def bump(y):
    y += 1.0
    return y


def asserts_on_the_call(x):
    a = x * 1.0
    assert np.all(bump(a) > -5.0)
    return a * x
