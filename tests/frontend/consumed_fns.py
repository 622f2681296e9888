"""Functions for test_consumed_functions.py: ``functools.reduce`` of a function
passed in, a generator helper the function consumes, a sliding window of a list
(``del parts[0]`` in a loop).  Loaded twice: as written, and by ``jax_twin`` with
``numpy`` bound to ``jax.numpy`` (the oracle)."""

import functools

import numpy as np


def blend(acc, v):
    return acc * 0.5 + np.sin(v)


def times(acc, v):
    return acc * v


def soft(acc, v):
    return np.logaddexp(acc, v)


# ---- 1. functools.reduce of a function given as an argument -------------------------


def reduce_rows(x, f):
    """Over an array's items: the loop Python runs."""
    return functools.reduce(f, x, 0.25) * 2.0


def reduce_items(x, f):
    """Over a list known when transforming: unrolled, no initial value."""
    return functools.reduce(f, [x[0], x[1] * 2.0, np.tanh(x[2])]) + x[3]


def reduce_caller(x):
    """A callee given the function (the caller names it)."""
    return reduce_rows(x * 1.5, blend) + reduce_items(x, soft)


# ---- 3. a generator helper the function consumes -----------------------------------


def pairs(xs):
    for i in range(len(xs) - 1):
        yield xs[i], xs[i + 1]


def scaled(xs, s):
    """Yields before and after a loop, and `yield from` another generator."""
    yield xs[0] * s
    for v in xs[1:]:
        yield np.sin(v) * s
    yield from (a * b for a, b in pairs(xs))
    yield xs[-1] ** 2


def pair_sum(x):
    return sum(a * b for a, b in pairs(x))


def pair_loop(x):
    total = 0.0
    for a, b in pairs(x):
        total = total + a * np.sin(b)
    return total


def stacked_yields(x):
    return np.sum(np.stack(list(scaled(x, 0.5))) * np.arange(2 * len(x)))


def generator_caller(x):
    return pair_sum(x * 0.5) + pair_loop(np.cos(x))


def echo(xs):
    for v in xs:
        got = yield v
        if got is not None:
            yield got


def sent_sum(x):
    return sum(v * v for v in echo(x))
