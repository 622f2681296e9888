"""Function values passed to helpers, under vmap (issue 23, item 3): vmap's rank probe
runs the helper normalized for the call, which calls the function value by the name
emitted code gives it (a lambda's lifted `lam`, a global of another module)."""

import numpy as np
from fnvalue_vmap_other import apply_other, twice_other


def apply(g, x):
    return g(x)


def scaled(v):
    return np.sin(v) * 1.5


def lambda_to_helper(x):
    w = x * 3.0
    return np.sum(apply(lambda v: v * w, x))


def nested_def_to_helper(x):
    w = np.cos(x)

    def sq(v):
        return v * w * v

    return np.sum(apply(sq, x) + x)


def global_to_other_module(x):
    return np.sum(apply_other(scaled, x) ** 2)


def lambda_to_other_module(x):
    w = x[0] + 1.0
    return np.sum(apply_other(lambda v: np.tanh(v) * w, x))


def nested_to_other_twice(x):
    k = np.exp(x[1])

    def step(v):
        return np.sin(v) * k

    return np.sum(twice_other(step, x))


def ufunc_to_other_module(x):
    return np.sum(apply_other(np.tanh, x) * x)
