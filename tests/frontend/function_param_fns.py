"""Functions for test_function_params.py: parameters that hold functions
(``act=np.tanh``, ``loss_fn``), and a parameter that shadows a module-level name.
Loaded twice: as written, and by ``jax_twin`` with ``numpy`` bound to ``jax.numpy``."""

import dataclasses
import functools
from typing import NamedTuple

import numpy as np

if np.__name__.startswith("jax"):  # (jax_twin: the classes registered with JAX's)
    from jax import tree_util
else:
    from s2s import tree_util


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


# ---- dataclass arguments with methods calling methods ----------------------------------

@dataclasses.dataclass
class Base:
    w: np.ndarray
    b: np.ndarray

    def pre(self, x):  # (inherited: a base class's method)
        return self.w * x + self.b


@dataclasses.dataclass
class Layer(Base):
    def apply(self, x):
        return np.tanh(self.pre(x))

    def __call__(self, x):
        return self.apply(x) * 2.0 - self.b


tree_util.register_dataclass(Layer, data_fields=["w", "b"], meta_fields=[])


@tree_util.register_pytree_node_class
class Cell:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def gate(self, x):
        return np.sin(self.w * x) + self.b

    def __call__(self, x):
        return self.gate(x) ** 2 + self.gate(x * 0.5)


def layered(p, x):
    return np.sum(p(x) * x)


class Scaler(NamedTuple):
    w: np.ndarray
    b: np.ndarray

    @property
    def doubled(self):
        return self.w * 2.0

    @staticmethod
    def squash(v):
        return np.tanh(v)

    @classmethod
    def offset(cls, v):
        return v + 0.5

    def __call__(self, x):
        return self.squash(self.doubled * x) + self.b

    def shifted(self, x):
        return self.offset(self.b) * x


def shifted(p, x):
    return np.sum(p.shifted(x))
