"""Functions for test_function_params.py: parameters that hold functions
(``act=np.tanh``, ``loss_fn``), and a parameter that shadows a module-level name.
Loaded twice: as written, and by ``jax_twin`` with ``numpy`` bound to ``jax.numpy``."""

import functools
from typing import NamedTuple

import numpy as np


def relu(v):
    return np.maximum(v, 0.0)


def scaled_sin(v, k=1.5):
    return np.sin(k * v)


def mse(w):
    return np.sum((w - 1.0) ** 2)


def layer(x, act=np.tanh):
    return np.sum(act(x) * x)


def fit(w, loss_fn, scale=2.0):
    return scale * loss_fn(w)


def keyword_only(x, *, act=np.tanh, power=2):
    return np.sum(act(x) ** power)


def dense(v, act):
    return act(v) * 2.0 + v


def model(x, act=np.tanh):
    return np.sum(dense(x, act) ** 2)


def optional_transform(x, transform=None):
    if transform is not None:
        x = transform(x)
    return np.sum(x ** 2 + x)


def two_functions(x, inner=np.sin, outer=relu):
    return np.sum(outer(inner(x) - 0.2) * x)


def loop_of_layers(x, act=np.tanh):
    h = x
    for _ in range(3):
        h = act(h * 0.9 + 0.1)
    return np.sum(h)


PARTIAL = functools.partial(scaled_sin, k=0.5)


# ---- a parameter named as a module-level object -------------------------------------

class Net:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return np.tanh(self.w * x)


net = Net(np.array([0.5, -0.2, 0.1]))


def loss_of_net(net, x):
    return np.sum(net(x))


# ---- an argument's methods: p.apply(x), model(x) ----------------------------------------

class Affine(NamedTuple):
    w: np.ndarray
    b: np.ndarray

    def apply(self, x):
        return np.tanh(self.w * x + self.b)

    def __call__(self, x):
        return self.apply(x) * 2.0 - self.b


class Scaled(NamedTuple):
    w: np.ndarray
    b: np.ndarray

    def apply(self, x):
        return np.sin(self.w * x) + self.b ** 2

    def __call__(self, x):
        return self.apply(x) ** 2


def applied(p, x):
    return np.sum(p.apply(x) * x)


def called(model, x):
    return np.sum(model(x) ** 2)
