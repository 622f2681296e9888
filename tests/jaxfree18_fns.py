"""Functions over lists, dicts, tuples and objects a training loop changes
(tests/test_jaxfree18.py): an item replaced, an item appended, a dict value rebound, an
object's number or array attribute set, a nested tuple of arrays, a closure cell holding
a list; the source s2s reads is this file's (and jax.grad's, with ``np`` as jax.numpy)."""

import functools

import numpy as np

LAYERS = None  # [w_in (4, 3), data (n, 4)]
SHIFTS = None  # [float, ...]: the loop's length is the list's
PARAMS = None  # {"w": (3,), "b": float}
NEST = None  # (data (n, 4), (w_in (4, 3), scale))
CFG = None  # a Config
BATCH = None  # a Batch (NamedTuple) of data and targets
SCALED = None  # functools.partial(scaled_sum, array)


class Config:
    """A run's settings, set attribute by attribute."""

    def __init__(self, scale, w):
        self.scale, self.w = scale, w


class Loss:
    """A callable object whose weights a loop replaces (``LOSS.w = new``)."""

    def __init__(self, w):
        self.w = w

    def __call__(self, v, x):
        return np.sum(np.tanh(x @ self.w) @ v)


LOSS = None


def list_loss(v):  # a list of arrays: an item replaced between calls
    return np.sum(np.tanh(LAYERS[1] @ LAYERS[0]) @ v) + np.sum(v**2)


def shifts_loss(v):  # a list of numbers appended to: the loop unrolled over its length
    s = 0.0
    for a in SHIFTS:
        s = s + a
    return np.sum(np.sin(v) * s)


def dict_loss(v):  # a dict's array and number rebound
    return np.sum((v * PARAMS["w"]) ** 2) * PARAMS["b"]


def object_loss(v):  # an object's number and array attributes set
    return np.sum(np.cos(v * CFG.w)) * CFG.scale


def nested_loss(v):  # a nested tuple of arrays and a number, rebound
    return np.sum(np.tanh(NEST[0] @ NEST[1][0]) @ v) * NEST[1][1]


def callable_loss(v):  # a callable object's weights, and its batch in a list
    return LOSS(v, LAYERS[1])


def batch_loss(v):  # a NamedTuple of arrays, rebound
    return np.sum((np.tanh(BATCH.x @ BATCH.w) @ v - 1.0) ** 2)


def scaled_sum(a, v):
    return np.sum(a * v**2)


def partial_loss(v):  # a functools.partial holding an array written in place
    return SCALED(v)


def cell_loss():
    """A loss over a closure cell holding a list the caller changes."""
    layers = []

    def loss(v):
        return np.sum(np.tanh(layers[1] @ layers[0]) @ v)

    return loss, layers


def partial_of(a):
    return functools.partial(scaled_sum, a)


XB = None  # (a batch read in C on the fast lane, and what else it may come to hold)
SCALE = 1.0


def fast_loss(v):
    return np.sum(np.sin(XB) * v**2) * SCALE


def relu(x):
    return np.maximum(x, 0.0)


def softplus(x):
    return np.log1p(np.exp(x))


ACT = relu


def act_loss(v):  # a module function the loop rebinds (inlined by the transform)
    return np.sum(ACT(v * 2.0) ** 2)


def method_loss(v):  # a bound method a module name holds, its object's weights set
    return PREDICT(v)


class Model:
    def __init__(self, w):
        self.w = w

    def predict(self, v):
        return np.sum(np.tanh(self.w * v))


PREDICT = None
