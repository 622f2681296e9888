"""Functions of issue 23's internal14 pass (``test_internal14.py``): composed
transforms that raised errors from emitted code, refusals located at emitted code, and
float32 programs whose results or warnings were float64's.  The tests run each function
here and its JAX twin (``support.jax_twin``)."""

import numpy as np


def polyder_of_constant(c, t=np.linspace(-1.0, 1.0, 5)):
    dv = np.polyval(np.polyder(c), t)
    return np.sum(dv ** 2) + np.sum(np.polyval(c, t) * t)


def polyder_at(c, t):
    return np.sum(np.polyval(np.polyder(c), t) * t + np.polyval(c, t) ** 2)


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


def tail_squares(xs):
    for v in xs[3:]:
        yield v * v


def tail_generator_sum(x):
    return sum(tail_squares(x)) + np.sum(np.sin(x))


def tail_generator_loop(x):
    s = 0.0
    for t in tail_squares(x):
        s = s + t * t
    return s + np.sum(np.sin(x))


def generator_loop_squared(x):
    s = 0.0
    for t in squares_over_ten(x):
        s = s + t * t
    return s + np.sum(np.sin(x))


def inner_break_from_outer_index(x):
    acc = 0.0
    for i in range(len(x)):
        for j in range(i, len(x)):
            if x[j] < 0:
                break
            acc = acc + x[i] * np.tanh(x[j])
    return acc
