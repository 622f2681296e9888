"""Functions whose value or aux output is an argument, a view of one, or a module
array (tests/test_output_aliasing.py); a twin with ``jax.numpy`` is JAX's oracle."""

from typing import NamedTuple

import numpy as np

W = np.array([1.0, -2.0, 3.0])
WS = [W, np.array([0.5, 0.25, -1.0])]


def aux_is_x(x):
    return np.sum(x**2), x


def aux_is_view(x):
    return np.sum(np.sin(x)), x[::-1]


def aux_is_reshaped(x):
    return np.sum(x**3), np.reshape(x, (-1, 1))


def aux_is_module_array(x):
    return np.sum(x * W), W


def aux_is_a_tree(x):
    return np.sum(np.cos(x)), {"x": x, "pair": (x * 2.0, x[1:])}


def aux_of_a_module_list(x):
    parts = WS + [x]
    return np.sum(parts[1] * x**2), parts


def aux_is_fresh(x):
    return np.sum(x**2), x * 3.0


def aux_of_dict(p):
    return np.sum(p["w"] ** 2) + np.sum(p["b"]), {"w": p["w"], "both": (p["b"], p["w"] * 2.0)}


def identity(x):
    return x


def second(x, y):
    return y


def module_array_out(x):
    return W if x.ndim else x


def pair_out(x, y):
    return x * y, (y, x)


def aux_is_keyword(x, *, w):
    return np.sum(x * w), w


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray


def aux_is_a_namedtuple(p):
    return np.sum(p.w**2) + np.sum(p.b), p
