"""Functions for tests/frontend/test_probe11_fixes.py: the forms the eleventh newcomer
probe (newcomer_probe11_fns.py) found refused, each in a few lines."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

T = 2.5


def cumsum_dtype(x):
    return np.sum(np.cumsum(x, dtype=x.dtype) ** 2) + np.sum(np.cumprod(x, axis=0,
                                                                       dtype=np.float64))


def float32_cast(x):
    return np.sum(np.float32(x) ** 2) + np.float32(0.5) * x[0] + np.sum(np.float16(x[1:]))


def math_constants(x):
    return (np.sum(x ** 2) * math.gamma(T) + math.log(8.0, 2) * np.sum(x)
            + math.isclose(T, 2.5) * x[0] + math.comb(4, 2) * x[-1] ** 3)


def math_of_a_value(x):
    return math.gamma(x[0]) * np.sum(x)


def zip_strict(x, w=np.array([0.5, 1.0, -1.0, 2.0])):
    total = 0
    for i, (a, b) in enumerate(zip(x, w, strict=True), start=1):
        total += i * a * b + a ** 2 / i
    for a, b in zip(x, w, strict=False):
        total = total + np.sin(a) * b
    return total


def zip_strict_break(x, w=np.array([0.5, 1.0, -1.0, 2.0])):
    total = 0.0
    for a, b in zip(x, w, strict=True):
        if a > 10.0:
            break
        total = total + a * b
    return total


def try_around_nothing(x):
    y = x * 1.0
    try:
        pass
    except Exception:
        raise
    try:
        pass
    except ValueError:
        y = np.zeros_like(x)
    else:
        y = y * 2.0
    finally:
        y = y + 1.0
    return np.sum(y ** 2)


class Poly:
    def __init__(self, coefs):
        self.coefs = list(coefs)

    def __call__(self, x):
        return sum(c * x ** i for i, c in enumerate(self.coefs))


def reversed_values(x):
    p = Poly([0.5, -1.0, 0.25])
    q = Poly(reversed(p.coefs))
    rows = list(reversed(x))
    return np.sum(p(x) * q(x)) + np.sum(rows[0] * x) + sum(r ** 2 for r in reversed(x[1:]))


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray
    scale: float = 2.0


def namedtuple_slice(x):
    p = Params(w=x[:2], b=x[2:])
    g = Params(*p[:2])
    vs = [2.0 * v for v in p[:2]]
    return p.scale * np.sum(g.w ** 2) + np.sum(g.b ** 3) + np.sum(vs[0] * vs[1][:2])


def concat_grown_list(x):
    parts = []
    for i in range(x.size):
        parts.append(x[:i + 1] ** 2)
    flat = np.concatenate(parts)
    return np.sum(flat * np.linspace(0.1, 1.0, flat.size))


def key_method_filter(x, n_layers=3):
    params = {f"w{i}": x * (i + 1.0) for i in range(n_layers)}
    params["b0"] = x ** 2
    return sum(np.sum(v ** 2) for k, v in params.items() if k.startswith("w")) + sum(
        np.sum(v) for k, v in params.items() if k.endswith("0") and not k.isdigit())


LAYERS = ((np.array([[0.5, -0.2], [0.1, 0.3]]), np.array([0.1, 0.0])),
          (np.array([[1.0, 0.4], [-0.3, 0.8]]), np.array([0.0, -0.2])))


def zip_with_a_named_tuple(x, layers=LAYERS):
    scales = (1.0, 0.5, 2.0)
    h = x
    for (w, b), s in zip(layers, scales):
        h = s * np.tanh(h @ w + b)
    return np.sum(h ** 2)


def spent_reversed(x):
    xs = [x[0], x[1], x[2]]
    r = reversed(xs)
    a = 0.0
    for v in r:
        a = a + np.sin(v)
    for v in r:  # (spent: Python's iterator gives nothing here)
        a = a + 10.0 * v
    return a
