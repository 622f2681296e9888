"""Functions for tests/frontend/test_dtype17.py: an augmented assignment into an array
keeps its dtype (NumPy writes into it), Python numbers of tuples read at a loop's
counter stay weak, ``zip`` of a row array and a shorter or longer constant tuple, a
module table read at ``k % 4``, dicts passed by keyword to ``eval_shape``.

Loaded twice: as written (s2s transforms them) and by ``jax_twin`` with ``np`` bound to
``jax.numpy`` (JAX's values are the oracle; its ``y += v`` rebinds ``y``, so the dtype
oracle of those is NumPy's own run)."""

import numpy as np

V64 = np.float64(0.25)
TABLE = (0.5, 1.5, 2.5, 3.5)


def add_into_local(x):
    y = x * 2.0
    y += V64
    y *= np.cos(x)
    return np.sum(y ** 2)


class Box:
    def __init__(self, a):
        self.a = a


def add_into_field(x):
    b = Box(x * 2.0)
    b.a += V64
    return np.sum(np.sin(b.a) * b.a)


def add_into_loop(x):
    acc = np.zeros_like(x)
    for i in range(3):
        acc += V64 * x ** (i + 1)
    return np.sum(acc ** 2)


def scalar_rebinds(x):
    s = np.sum(x ** 2)  # (a NumPy scalar: `s += v` rebinds it, promoted)
    s += V64
    return s * 2.0


def named_stages(x, stages=(("scale", 2.0), ("sin", 0.0), ("stop", 0.0), ("square", 0.0))):
    y = x
    for name, arg in stages:
        if name == "stop":
            return np.sum(y ** 2)
        if name == "scale":
            y = y * arg
        elif name == "sin":
            y = np.sin(y)
    return np.sum(y)


def named_stages_called(x):
    return named_stages(x)


def zip_rows(x):
    total = 0.0
    for xi, s in zip(x, (1.0, 2.0, 3.0)):
        total = total + s * np.sum(xi ** 2)
    return total


def enumerate_zip_rows(x):
    total = 0.0
    for i, (s, xi) in enumerate(zip([0.5, 2.0, 3.0], x)):
        total = total + s * np.sum(np.sin(xi)) * (i + 1)
    return total


def table_at_step(x, k):
    return np.sum(x ** 2) * TABLE[k % 4]


def tanh_dict(x, p):
    return np.tanh(x * p["w"]) + p["b"]


def tanh_dict_sum(x, p):
    return np.sum(np.tanh(x * p["w"]) + p["b"])


def bincount_default_labels(w, labels=np.array([0, 1, 1, 3]), scale=2.0):
    return np.bincount(labels, weights=w) * scale
