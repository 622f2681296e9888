"""Functions for test_idioms8.py: type tests on arguments, methods inherited and
overridden, sums over empty lists, max/min over arrays, keyword arguments (issue 23).
Loaded again with ``numpy`` bound to ``jax.numpy`` (``support.jax_twin``)."""

from typing import NamedTuple

import numpy as np


def powered(x, scale):
    if isinstance(scale, int):
        return np.sum(x ** scale)
    return np.sum(np.sin(x) * scale)


def typed(x, c):
    if type(c) is float:
        return np.sum(x * c)
    elif type(c) in (int, bool):
        return np.sum(x ** 2) * c
    return np.sum(np.cos(x))


def arrayish(x, y):
    y = y if isinstance(y, np.ndarray) else np.asarray(y)
    return np.sum(np.tanh(x) * y)


def containers(p, x):
    if isinstance(p, dict):
        return np.sum(p["w"] * x)
    if isinstance(p, (tuple, list)):
        return np.sum(p[0] * x) + np.sum(p[1] ** 2)
    return np.sum(p * np.cos(x))


def calls_typed(x):
    return powered(x, 2) + powered(x, 1.5) + typed(x, 3.0) + typed(x, 2)


class Base(NamedTuple):
    w: np.ndarray

    @staticmethod
    def helper(v):
        return np.sin(v)

    @property
    def scale(self):
        return 2.0 * self.w

    def loss(self, x):
        return np.sum(self.helper(x) * self.scale)

    def __call__(self, x):
        return self.loss(x) * 2.0


class Sub(Base):
    @staticmethod
    def helper(v):
        return np.cos(v)

    @property
    def scale(self):
        return 3.0 * self.w


def method_loss(o, x):
    return o.loss(x)


def called_object(o, x):
    return o(x) + np.sum(o.scale * x)


def empty_sum(xs, x):
    return sum((np.sum(v * x) for v in xs), np.sum(x ** 2))


def empty_sum_zero(xs, x):
    return np.sum(x) + sum(np.sum(v * x) for v in xs)


def max_of_generator(x):
    return max(np.sum(x * k) for k in (1.0, -2.0, 0.5)) + min(np.prod(x) * k for k in range(3))


def max_of_list(x):
    a = np.sum(x)
    b = np.sum(x ** 2)
    return max([a, b, a]) + min(a, b)


def max_tie(x):
    a = np.sum(x)
    b = np.sum(x * 1.0)
    return max([a, b]) * 2.0 + max(b, a)


def max_of_arrays(x):
    return np.sum(max([x, 2.0 * x]))


def max_over_list_argument(xs):
    return max(np.sum(v) for v in xs)


def with_keyword(x, k=2):
    return np.sum(x ** k)


def with_keyword_only(x, *, k=2):
    return np.sum(x ** k)


def vector_keyword_only(x, *, k=2, shift=0.0):
    return np.sin(x) ** k + shift * x


def two_args_keyword_only(x, y, *, k=2):
    return np.sum(x * y ** k) * np.cos(x)


def min_over_list_argument(xs, x):
    return min(np.sum(v * x) for v in xs) * 2.0


def max_of_array_items(xs):
    return np.sum(max(v for v in xs))


def direct_members(o, x):
    return np.sum(o.helper(x) * o.scale) + np.sum(x)
