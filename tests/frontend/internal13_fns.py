"""Functions of issue 23's internal13 pass (``test_internal13.py``): composed
transforms that raised internal errors, or refusals located at emitted code.  The
tests run each function here and its JAX twin (``support.jax_twin``)."""

import numpy as np


def squares_over_ten(xs):
    for v in xs:
        if v > 10:
            yield v * v


def generator_plus_sines(x):
    return sum(squares_over_ten(x)) + np.sum(np.sin(x))


def loop_over_generator(x):
    s = 0.0
    for t in squares_over_ten(x):
        s = s + t
    return s + np.sum(x * x)


def window_squares(x):
    s = 0.0
    for a, b in zip(x, x[1:]):
        s = s + (b - a) ** 2
    return s


def window_early_return(x):
    s = 0.0
    for a, b in zip(x, x[1:]):
        if b < a:
            return s
        s = s + (b - a) ** 2
    return s


def unrolled_min_max(x):
    lo = x[0]
    hi = x[0]
    if x[1] < lo:
        lo = x[1]
    elif x[1] > hi:
        hi = x[1]
    if x[2] < lo:
        lo = x[2]
    elif x[2] > hi:
        hi = x[2]
    return lo * hi


def nested_break(x):
    acc = 0.0
    for i in range(3):
        for v in x:
            if v > 1.0:
                break
            acc = acc + v * v * (i + 1)
    return acc


def power_sum(x, n):
    return np.sum(x ** n)


def bound_on_one_path_then_looped(x, a):
    if a:
        y = x * 2.0
    for k in range(2):
        y = y + x
    return np.sum(y * x)
