"""Source functions for tests/frontend/test_plain_objects.py (loaded by jax_twin too)."""

import numpy as np


class Layer:
    """a plain class: its constructor only stores its parameters."""

    def __init__(self, w, b=0.5):
        self.weight = w
        self.b = b


class Scaled:
    def __init__(self, w):
        self.w = w * 2.0  # (computes: not a plain store)


class WithMethod:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return self.w * x


def builds_and_reads(x):
    layer = Layer(x * 2.0, np.sin(x))
    other = Layer(x)
    return np.sum(np.tanh(layer.weight * x + layer.b)) + np.sum(other.weight * other.b)


def in_a_loop(x):
    layers = [Layer(x * k, b=float(k)) for k in range(1, 4)]
    h = x
    for layer in layers:
        h = np.tanh(layer.weight * h + layer.b)
    return np.sum(h)


def passes_to_a_helper(x):
    return np.sum(helper(Layer(np.cos(x), x), x))


def helper(layer, x):
    return layer.weight * x + layer.b


def returns_one(x):
    return Layer(x * 2.0, np.sin(x))


# built as records (tests/frontend/test_built_objects.py)


def computes(x):
    return np.sum(Scaled(x).w)


def calls_a_method(x):
    return np.sum(WithMethod(x).apply(x))
