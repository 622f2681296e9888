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


# ---- 2. functions stored in a dict or list argument ---------------------------------


def act_cfg(x, cfg):
    return np.sum(cfg["act"](x) * cfg["scale"])


def act_list(x, fs):
    """A list or tuple: a function, a number, a function."""
    return np.sum(fs[0](x) * fs[1] + fs[2](x * fs[1]))


def act_passed(x, cfg):
    """Passed on to a callee (which reads the same keys)."""
    return act_cfg(x * 2.0, cfg) + cfg["scale"] * np.sum(x)


CONFIG = {"act": np.tanh, "scale": 1.5}


def act_module(x):
    """A module-level dict passed to the callee; changed between calls by the test."""
    return act_cfg(np.sin(x), CONFIG) + np.sum(x ** 2)


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
    items = np.stack(list(scaled(x, 0.5)))
    return np.sum(items * np.cos(items[::-1]))


def nested_generator(x, k=2):
    """A generator defined in the function, reading its values; `sum(gen(...))`."""
    a = np.cos(x[0])

    def windows(xs):
        for i in range(len(xs) - k + 1):
            yield xs[i:i + k] * a

    return sum(np.sum(w ** 2) for w in windows(x)) + sum(scaled(x, 0.5))


def generator_caller(x):
    return pair_sum(x * 0.5) + pair_loop(np.cos(x))


def echo(xs):
    for v in xs:
        got = yield v
        if got is not None:
            yield got


def sent_sum(x):
    return sum(v * v for v in echo(x))


# ---- 5. a sliding window: append, then drop the front item once longer than k --------


def window_sum(x, k=2):
    parts = []
    for i in range(x.shape[0]):
        parts.append(np.sin(x[i]) * x[i])
        if len(parts) > k:
            del parts[0]
    return sum(parts)


def window_pop_stack(x, k=3):
    parts = []
    dropped = 0.0
    for v in x:
        parts.append(v * v + 0.5)
        if len(parts) > k:
            first = parts.pop(0)
            dropped = dropped + first * parts[0]
    stacked = np.stack(parts)
    return np.sum(stacked * stacked[::-1] + stacked) + dropped


def window_caller(x):
    return window_sum(x * 0.5, 3) + window_pop_stack(np.cos(x))


def window_read_inside(x, k=2):
    """The window summed inside the loop (its slice since refused19b)."""
    parts = []
    total = 0.0
    for i in range(x.shape[0]):
        parts.append(x[i] * x[i])
        if len(parts) > k:
            del parts[0]
        total = total + sum(parts)
    return total


def blend_one(v):
    return np.sin(v) * 0.5 + v


def act_by_key(x, cfg, key):
    return np.sum(cfg[key](x))


def misspelled(xs):
    for v in xs:
        yield np.sinn(v)


def misspelled_sum(x):
    return sum(misspelled(x))


def called_items(x, fs):
    """A tuple of functions only, its items called by index and walked."""
    total = np.sum(fs[0](x) * fs[-1](x))
    for f in fs:
        total = total + np.sum(f(x))
    return total
