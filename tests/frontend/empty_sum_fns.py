"""``sum`` over a dict that may be empty, and a dataclass argument with a string
field (tests/frontend/test_empty_sum_dataclass.py); a twin with ``jax.numpy`` is
JAX's oracle."""

from dataclasses import dataclass

import numpy as np

EMPTY = {}


def sum_of_values(x, d):
    return np.sum(x**2) + sum(v for v in d.values())


def sum_of_products(x, d):
    return np.sum(np.sin(x)) + sum(np.sum(v * x) for v in d.values())


def sum_with_start(x, d):
    return np.sum(x**2) + sum((np.sum(v * x) for v in d.values()), 0.5)


def sum_filtered(x, d):
    return np.sum(x**3) + sum(np.sum(v * x) for k, v in d.items() if k != "b")


def sum_of_module_empty(x):
    return np.sum(x**2) + sum(v for v in EMPTY.values())


def sum_of_local_empty(x):
    d = {}
    return np.sum(np.cos(x)) + sum(np.sum(v * x) for v in d.values())


@dataclass
class Cfg:
    w: np.ndarray
    name: str = "a"


def weighted(cfg, x):
    scale = 2.0 if cfg.name == "a" else 0.5
    return np.sum(cfg.w * np.tanh(x)) * scale


def sum_of_nothing(x, d):
    return sum(np.sum(v * x) for k, v in d.items() if k != "b")
