"""Generators and sliding windows a function consumes (issue 23, eleventh session):
early returns, ``yield from`` a generator, ``next``, ``zip`` over windows of unequal
lengths (``zip(x, x[1:])``), ``itertools.pairwise``, ``list(zip(...))``; and the
reads s2s refuses (a generator read twice, in a loop, passed on, sent to).  The
tests run each function here and its JAX twin (``support.jax_twin``)."""

import itertools

import numpy as np

SCALE = [2.0]


# ---- generators ----------------------------------------------------------------------


def pairs(xs):
    for i in range(len(xs) - 1):
        yield xs[i], xs[i + 1]


def waves(xs):
    for v in xs:
        yield np.sin(v) * SCALE[0]


def first_n(xs, n):
    """An early `return` in the loop, on the call's lengths."""
    for i in range(len(xs)):
        if i >= n:
            return
        yield xs[i] * xs[i]


def below(xs, c):
    """An early `return` on a value (JAX's grad decides it on the concrete value)."""
    for v in xs:
        if v > c:
            return 7.0
        yield np.cos(v)


def nested_early(xs):
    """A `return` in an inner loop ends the generator, not only that loop."""
    for i in range(len(xs)):
        for j in range(i):
            if i + j >= 4:
                return
            yield xs[i] * xs[j]
    yield xs[0]


def chained(xs):
    """`yield from` another generator, a list literal, a comprehension."""
    yield from waves(xs)
    yield from [xs[0], xs[-1] * 2.0]
    yield from (a * b for a, b in pairs(xs))


def early_sum(x):
    return sum(first_n(x, 3)) + x[0] * 0.5


def early_loop(x):
    t = x[0]
    for v in first_n(x, 2):
        t = t * np.sin(v) + v
    return t


def below_sum(x):
    return sum(below(x, 0.8)) + x[0]


def nested_early_sum(x):
    return sum(nested_early(x)) + x[0]


def chained_sum(x):
    return sum(v * v for v in chained(x))


def comprehension_of_pairs(x):
    return np.sum(np.stack([a * np.sin(b) for a, b in pairs(x)]))


def listed_waves(x):
    return np.sum(np.stack(list(waves(x))) ** 2)


def zipped_generators(x):
    return sum(a * b for a, b in zip(waves(x), waves(x * 2.0))) + x[0]


def two_nexts(x):
    g = pairs(x)
    a, b = next(g)
    c, d = next(g)
    return a * b + c * np.cos(d)


def nexts_with_defaults(x):
    g = waves(x)
    a = next(g)
    b = next(g, 0.5)
    c = next(g, 0.25)
    return a + b * c


def next_then_the_rest(x):
    g = waves(x)
    first = next(g)
    t = first
    for v in g:
        t = t + v * first
    return t


def next_of_a_call(x):
    return next(waves(x)) * x[-1]


def passed_on(x):
    g = waves(x * 0.5)
    return total(waves(x)) + total(items=g)


def total(items):
    t = 0.0
    for v in items:
        t = t + v * v
    return t


def generator_caller(x):
    return early_sum(x * 0.5) + two_nexts(np.cos(x)) + chained_sum(x)


# ---- windows -------------------------------------------------------------------------


def window_comprehension(x):
    return sum((b - a) ** 2 for a, b in zip(x, x[1:])) + x[0] * 0.5


def window_list(x):
    steps = list(zip(x, x[1:]))
    return steps[0][0] * steps[-1][1] + steps[-1][0]


def window_array(x):
    return np.sum(np.array([b * a for a, b in zip(x[:-1], x[1:])]) ** 2) + x[0]


def window_in_while(x):
    i = 0
    t = x[0]
    while i < 2:
        for a, b in zip(x, x[1:]):
            t = t + a * np.sin(b) * (i + 1)
        i = i + 1
    return t


def window_of_three(x):
    t = x[0] * 0.5
    for a, b, c in zip(x, x[1:], x[2:]):
        t = t + a * b - np.cos(c)
    return t


def window_of_rows(x):
    m = np.outer(x, np.cos(x))
    t = 0.0
    for a, b in zip(m, m[1:]):
        t = t + np.sum(a * b)
    return t + x[0]


def window_of_arrays(x):
    xs = [x, x * 2.0, np.sin(x)]
    t = 0.0
    for a, b in zip(xs, xs[1:]):
        t = t + np.sum(a * b)
    return t


def window_of_grown(x):
    hs = []
    for i in range(x.shape[0]):
        hs.append(np.sin(x[i]) * x)
    t = x[0]
    for a, b in zip(hs, hs[1:]):
        t = t + np.sum(a * b)
    return t


def pairwise_loop(x):
    t = x[0]
    for a, b in itertools.pairwise(x):
        t = t + a * np.sin(b)
    return t


def pairwise_sum(x):
    return sum(b - a * a for a, b in itertools.pairwise(x)) + x[0]


def pairwise_listed(x):
    steps = list(itertools.pairwise(x))
    return steps[0][1] * steps[-1][0]


def enumerated_window(x):
    t = x[0]
    for i, (a, b) in enumerate(zip(x, x[1:])):
        t = t + (i + 1) * a * b
    return t


WEIGHTS = (0.5, -1.5, 2.0)
TABLE = (1.0, 2.0, 3.0, 4.0)


def zip_of_constants(x):
    """Module tuples of unequal lengths (3 pairs), and one with an array."""
    t = x[0]
    for w, s in zip(WEIGHTS, TABLE):
        t = t + w * s * np.sum(x)
    for w, v in zip(TABLE, x):
        t = t + w * np.sin(v)
    return t


def window_caller(x):
    return window_comprehension(x) + pairwise_loop(np.sin(x)) + window_of_three(x * 2.0)


# ---- refused, located ----------------------------------------------------------------


def read_twice(x):
    g = waves(x)
    return sum(g) + sum(g)


def looped_twice(x):
    g = waves(x)
    t = 0.0
    for v in g:
        t = t + v
    for v in g:
        t = t + 10.0 * v
    return t


def read_in_a_loop(x):
    g = waves(x)
    t = 0.0
    for k in range(2):
        t = t + sum(g) * (k + 1)
    return t


def zipped_with_itself(x):
    g = waves(x)
    return sum(a * b for a, b in zip(g, g))




def passed_to_a_double_reader(x):
    return twice(waves(x))


def twice(items):
    return sum(items) + sum(items)


def passed_on_returned(x):
    return np.sum(np.stack(list(handed_back(waves(x)))))


def handed_back(items):
    return items


def next_then_sum(x):
    g = waves(x)
    first = next(g)
    return first + sum(g)


def sent(x):
    g = waves(x)
    return g.send(None)


def next_under_an_if(x):
    g = waves(x)
    a = next(g)
    if x[0] > 0:
        a = a + next(g)
    return a


SPENT = waves(np.array([0.1, 0.2, 0.3]))


def module_generator(x):
    t = x[0]
    for v in SPENT:
        t = t + v * x[1]
    return t


def pairwise_of_a_call(x):
    return sum(a * b for a, b in itertools.pairwise(np.sin(x)))


def counter():
    i = 0
    while True:
        yield i
        i = i + 1


def zipped_with_endless(x):
    t = 0.0
    for i, v in zip(counter(), x):
        t = t + i * v
    return t


# ---- module state read by a generator, changed between calls -------------------------


class Stepper:
    def __init__(self, c):
        self.c = c

    def steps(self, xs):
        for v in xs:
            yield v * self.c


STEPPER = Stepper(3.0)


def method_steps(x):
    return sum(np.sin(v) for v in STEPPER.steps(x)) + x[0]


def module_scaled(x):
    return sum(v * v for v in waves(x)) + x[0]
