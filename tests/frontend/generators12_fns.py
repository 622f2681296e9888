"""Generators, windows and reductions of issue 23's twelfth pass
(``test_generators12.py``): ``max``/``min`` of a generator's items,
``itertools.islice`` of one, a generator method (``__iter__`` too) of an object the
function builds, ``sum`` of a window empty on some call, ``initial=`` of np.max/np.min
over a size-0 axis, and ``pairwise``/``zip`` loops carrying an accumulator.  The
tests run each function here and its JAX twin (``support.jax_twin``)."""

import itertools

import numpy as np


def squares(xs):
    for v in xs:
        yield v * v


def waves(xs):
    for v in xs:
        yield np.sin(v) + 0.5 * v


# ---- max / min / islice of a generator ------------------------------------------------


def max_of_generator(x):
    return max(squares(x)) + 0.1 * np.sum(x)


def min_of_generator(x):
    return min(waves(x)) * 2.0


def max_of_generator_bound(x):
    m = max(waves(x))
    return m * m + min(squares(x))


def islice_sum(x):
    return sum(itertools.islice(squares(x), 3))


def islice_loop(x):
    total = 0.0
    for v in itertools.islice(waves(x), 1, 4):
        total = total + v * total + v
    return total


def islice_listed(x):
    firsts = list(itertools.islice(waves(x), 2))
    return firsts[0] * np.sum(x) + firsts[-1]


def islice_step(x):
    return sum(v * v for v in itertools.islice(waves(x), 0, None, 2))


def islice_max(x):
    return max(itertools.islice(waves(x), 2)) + 0.5 * np.sum(x)


def islice_of_array(x):
    return sum(np.tanh(v) for v in itertools.islice(x, 3))


# ---- generator methods of objects built in the function ------------------------------


class Layers:
    def __init__(self, ws, scale):
        self.ws = ws
        self.scale = scale

    def __iter__(self):
        for w in self.ws:
            yield np.tanh(w * self.scale)

    def steps(self, h):
        for w in self.ws:
            h = np.sin(h * w) + h
            yield h


def iterated_object(x):
    total = 0.0
    for h in Layers(x, 1.5):
        total = total + h * h
    return total


def iterated_name(x):
    layers = Layers(x, 0.5)
    return sum(h * h for h in layers) + max(layers.steps(x[0]))


def generator_method(x):
    net = Layers(x[1:], 2.0)
    out = 0.0
    for h in net.steps(x[0]):
        out = out + np.cos(h)
    return out


def listed_object(x):
    layers = Layers(x, 1.0)
    hs = list(layers)
    return hs[0] * 2.0 + max(layers) + min(Layers(x, -0.5))


class Plain:
    def __init__(self, w):
        self.w = w


def not_iterable(x):
    total = 0.0
    for h in Plain(x):
        total = total + h
    return total


# ---- np.max / np.min with initial= over a size-0 axis --------------------------------


def max_initial(x):
    return np.max(x * x, initial=-1.0) + 0.5 * np.sum(x)


def min_initial(x):
    return np.min(np.sin(x), initial=2.0) * 3.0


def max_initial_axis(x):
    m = np.reshape(x, (-1, 1)) * np.array([1.0, -2.0, 0.5])
    return np.sum(m.max(axis=0, initial=0.25) ** 2)


def min_initial_rows(x):
    m = np.reshape(x, (1, -1)) * np.array([[1.0], [-0.5]])
    return np.sum(np.min(m, axis=1, initial=1.5) * np.array([2.0, 1.0]))


# ---- sum of a window empty on some call ------------------------------------------------


def window_slice_sum(x, w):
    return sum(x[1:w]) * 2.0 + 0.5 * np.sum(x * x)


def window_generator_sum(x, w):
    return sum(np.sin(v) * v for v in x[w:]) + np.sum(x) * 0.25


def sliding_sums(x):
    total = 0.0
    for i in range(len(x)):
        total = total + sum(x[i + 1:i + 2]) * x[i]
    return total


def window_of_generator(x):
    return sum(v for v in squares(x[2:])) + 0.1 * np.sum(x)


# ---- pairwise / zip loops carrying an accumulator -------------------------------------


def pairwise_accumulator(x):
    acc = 0.0
    for a, b in itertools.pairwise(x):
        acc = acc * np.cos(a) + np.sin(a - b) * b
    return acc + 0.5 * np.sum(x * x)


def zip_accumulator(x):
    acc = 1.0
    for a, b in zip(x, x[1:]):
        acc = acc * np.cos(a) + b * b
    return acc


def zip_rows_accumulator(x):
    m = np.reshape(x, (-1, 1)) * np.array([1.0, -0.5])
    acc = np.zeros(2)
    for r, s in zip(m, m[1:]):
        acc = np.tanh(acc + r * s)
    return np.sum(acc * acc) + 0.1 * np.sum(x)


# ---- kept statements -------------------------------------------------------------------


def printed_digits(x):
    print(f"{np.sum(x):.4f}")
    return np.sum(x * x)
