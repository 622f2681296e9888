"""Functions over objects that s2s refused (issue 23, items 1-3), run by s2s and,
through jax_twin, by JAX (tests/frontend/test_object_refusals.py)."""

from typing import NamedTuple

import numpy as np


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray

    def apply(self, x):
        return np.tanh(self.w * x + self.b)

    def norm(self):
        return np.sum(self.w**2)


def fit_loss(x, p):
    return np.sum(p.apply(x) ** 2) + p.norm() * np.sum(np.sin(x))


def calls_fit_loss(x, p):
    return fit_loss(x * 2.0, p) + np.sum(x**3)


class Model:
    BIAS = 0.5

    def __init__(self, scale):
        self.scale = scale

    def loss(self, x):
        return np.sum(self.scale * np.sin(x)) + self.BIAS


MODEL = Model(np.array([1.0, 2.0, 3.0]))


def module_model_loss(x):
    return MODEL.loss(x * 2.0) ** 2


class Pair(NamedTuple):
    a: np.ndarray
    b: np.ndarray


def returns_argument(p):
    return p


def returns_argument_and_value(p, x):
    return p, np.sin(x) * p.a


def returns_built(p):
    return Pair(np.sin(p.b), p.a * 2.0)


def calls_returns_argument(p, x):
    q = returns_argument(p)
    return q, x * 2.0
