"""Functions for tests/frontend/test_probe11_fixes.py: the forms the eleventh newcomer
probe (newcomer_probe11_fns.py) found refused, each in a few lines."""

from __future__ import annotations

import math

import numpy as np

T = 2.5


def cumsum_dtype(x):
    return np.sum(np.cumsum(x, dtype=x.dtype) ** 2) + np.sum(np.cumprod(x, axis=0,
                                                                       dtype=np.float64))


def float32_cast(x):
    return np.sum(np.float32(x) ** 2) + np.float32(0.5) * x[0] + np.sum(np.float16(x[1:]))


def math_constants(x):
    return (np.sum(x ** 2) * math.gamma(T) + math.log(8.0, 2) * np.sum(x)
            + math.isclose(T, 2.5) * x[0] + math.comb(4, 2) * x[-1] ** 3)


def math_of_a_value(x):
    return math.gamma(x[0]) * np.sum(x)


def zip_strict(x, w=np.array([0.5, 1.0, -1.0, 2.0])):
    total = 0
    for i, (a, b) in enumerate(zip(x, w, strict=True), start=1):
        total += i * a * b + a ** 2 / i
    for a, b in zip(x, w, strict=False):
        total = total + np.sin(a) * b
    return total


def zip_strict_break(x, w=np.array([0.5, 1.0, -1.0, 2.0])):
    total = 0.0
    for a, b in zip(x, w, strict=True):
        if a > 10.0:
            break
        total = total + a * b
    return total


def try_around_nothing(x):
    y = x * 1.0
    try:
        pass
    except Exception:
        raise
    try:
        pass
    except ValueError:
        y = np.zeros_like(x)
    else:
        y = y * 2.0
    finally:
        y = y + 1.0
    return np.sum(y ** 2)
