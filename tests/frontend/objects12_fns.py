"""Dict items read by a string argument (``params[name]``), by an f-string of an int
argument (``params[f"W{i}"]``) and in a loop over ``range(n)`` building the keys
(issue 23, item 5); a dataclass default argument whose fields are read, a NamedTuple
passed by keyword or bound by keyword in a ``functools.partial`` (items 2 and 3); run
by s2s and, through jax_twin, by JAX (tests/frontend/test_objects12.py); a model
built by a ``@classmethod`` constructor (item 1)."""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

N_LAYERS = 3


def name_key(params, x, name="w"):
    return np.sum(params[name] * x) + np.sum(np.sin(params[name]) * x**2)


# a module's string and int passed to a callee whose copy is made per string or int
# (rebound between calls by tests/frontend/test_objects12.py)
KEY = "w"
INDEX = 1


def global_key(params, x):
    return name_key(params, x, KEY)


def global_index(params, x):
    return int_key(params, x, INDEX)


KIND = "tanh"
COUNT = 2


def by_kind(x, spec):
    if spec["kind"] == "tanh":
        return np.sum(np.tanh(x))
    return np.sum(np.sin(x) * x)


def held_kind(x):
    return by_kind(x, {"kind": KIND})


def built_layers(x, n):
    d = {f"w{i}": x * (i + 1) for i in range(n)}
    return np.sum(x) + sum(np.sum(np.sin(d[f"w{i}"])) for i in range(n))


def global_count(x):
    return built_layers(x, COUNT)


def annotated_key(params, x, name: str):
    return np.sum(np.tanh(params[name] * x))


def int_key(params, x, i):
    return np.sum(params[f"W{i}"] * x**2) + np.sum(np.cos(params[f"b{i}"] * x))


def loop_keys(x, params, n):
    h = x
    for i in range(n):
        h = np.tanh(params[f"W{i}"] * h + params[f"b{i}"])
    return np.sum(h**2)


def loop_keys_module(x, params):
    h = x
    for i in range(N_LAYERS):
        h = np.tanh(params[f"W{i}"] * h)
    return np.sum(h**2)


def loop_keys_after(x, params, n):
    h = x
    for i in range(n):
        h = np.sin(params[f"W{i}"] * h)
    return np.sum(h) * (i + 1)


def mlp_params(x):
    """A dict of parameters ``W0..W2``, ``b0..b2`` and ``w`` built from ``x``."""
    out = {"w": x * 2.0 + 0.1}
    for i in range(3):
        out[f"W{i}"] = np.cos(x + i)
        out[f"b{i}"] = 0.1 * (i + 1) * np.sin(x)
    return out


# ---- a dataclass default, a NamedTuple by keyword -------------------------------------


@dataclass
class OptConfig:
    lr: float
    steps: int
    momentum: float


DEFAULT_CFG = OptConfig(lr=0.1, steps=3, momentum=0.5)


def momentum_steps(w, cfg=DEFAULT_CFG):
    v = np.zeros_like(w)
    for _ in range(cfg.steps):
        g = np.cos(w) + w
        v = cfg.momentum * v + g
        w = w - cfg.lr * v
    return np.sum(w**2)


def calls_momentum_steps(w):
    return momentum_steps(np.sin(w)) + np.sum(w)


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray


def nt_loss(x, p):
    return np.sum(np.tanh(x * p.w + p.b) ** 2) + 0.1 * np.sum(p.b * x)


def nt_default(x, p=Params(np.array([0.5, -1.0, 2.0]), np.array([0.1, 0.2, -0.3]))):
    return np.sum(np.sin(x * p.w) * p.b)


# ---- a classmethod constructor ---------------------------------------------------------


class Quadratic:
    def __init__(self, a, c):
        self.a = a
        self.c = c

    @classmethod
    def from_config(cls, cfg):
        return cls(cfg["a"], cfg["c"])

    @classmethod
    def from_scale(cls, s):
        return cls(2.0 * s, -0.5)

    def energy(self, x):
        return 0.5 * self.a * np.sum(x**2) + self.c * np.sum(x)


class Shifted(Quadratic):
    def energy(self, x):
        return np.sum(np.sin(x + self.c)) * self.a


def classmethod_model(x):
    q = Quadratic.from_config({"a": 2.0, "c": -0.5})
    return q.energy(x) + q.energy(np.sin(x))


def classmethod_of_values(x):
    q = Quadratic.from_scale(np.sum(x**2))
    return q.energy(np.cos(x))


def classmethod_of_subclass(x):
    q = Shifted.from_config({"a": 1.5, "c": 0.25})
    return q.energy(x)


def shifted_products(x):
    s = 0.0
    for i in range(2):
        s = s + x[i + 1] * x[i]
    return s
