"""Functions for tests/frontend/test_probe12_fixes.py: the forms the twelfth newcomer
probe (newcomer_probe12_fns.py) found refused, each in a few lines."""

from __future__ import annotations

import types

import numpy as np


def namespace_default(w, cfg=types.SimpleNamespace(lr=0.1, steps=3, wd=1e-2)):
    for _ in range(cfg.steps):
        w = w - cfg.lr * (np.tanh(w) + cfg.wd * w)
    return np.sum(w ** 2) + cfg.wd * np.sum(np.abs(w))


def _namespace_callee(w, cfg=types.SimpleNamespace(scale=2.0, power=3)):
    return np.sum((cfg.scale * w) ** cfg.power)


def namespace_callee_default(w):
    return _namespace_callee(w) + _namespace_callee(w * 0.5)


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a * 2.0, b
        self.c, (self.d, e) = self.b, (a, 3.0)
        self.e = e


def unpack_into_attributes(x):
    p = Pair(x[:2], x[2:])
    p.a, p.b = p.b, p.a  # (the right side read before either is written)
    return np.sum(p.a * np.sin(p.b)) + np.sum(p.c * p.d) * p.e


def unpack_into_items(x):
    y = x.copy()
    y[0], y[1] = y[1], y[0] * 3.0
    d = {"u": x[0], "v": x[1]}
    d["u"], d["v"] = d["v"] ** 2, d["u"]
    return np.sum(y * np.arange(1.0, y.size + 1.0)) + d["u"] * d["v"]


def swap_rows_views(m):
    y = m.copy()
    y[0], y[1] = y[1], y[0]  # (NumPy: y[0] is a view; both rows end as the old y[1])
    return np.sum(y * np.arange(1.0, y.size + 1.0).reshape(y.shape))


def _axpy_tuple(s, h, k):
    return tuple(si + h * ki for si, ki in zip(s, k))


def _axpy_list(s, h, k):
    return list(si * h + ki for si, ki in zip(s, k))


def tuple_of_generator_in_callee(x):
    t = _axpy_tuple((x[0], x[1]), 0.5, (x[1], x[2] ** 2))
    u = _axpy_list([x[2], x[0], x[1]], 2.0, (np.sin(x[0]), x[1], x[2]))
    return t[0] * t[1] + u[0] * u[2] + len(u) * u[1]


def nested_comprehension_array(m, k=np.array([[1.0, -1.0], [0.5, 2.0]])):
    h, w = m.shape
    out = np.array([[np.sum(m[i:i + 2, j:j + 2] * k) for j in range(w - 1)]
                    for i in range(h - 1)])
    cube = np.asarray([[[out[i, j] * c for c in range(2)] for j in range(w - 1)]
                       for i in range(h - 1)], dtype=m.dtype)
    return np.sum(np.tanh(out)) + np.sum(cube ** 2) * 0.1 + cube.shape[2]


_WS = (np.array([[0.5, -0.2], [0.1, 0.3]]), np.array([[1.0, 0.4], [-0.3, 0.8]]),
       np.array([[0.2, 0.0], [0.0, -0.6]]))
_MASK = np.array([True, False, True, True])


def starred_constant_where_dict_spread(x):
    w0, *ws = _WS
    *init, last = ws
    h = np.tanh(x[:2] @ w0)
    for w in init:
        h = np.tanh(h @ w)
    (rows,) = np.where(~_MASK)
    cfg = dict(lr=0.1, **{"wd": 0.01, "p": 3.0})
    return (np.sum(h @ last) + np.sum(x[np.where(_MASK)] ** cfg["p"]) * cfg["lr"]
            + cfg["wd"] * np.sum(x[rows] ** 2) + len(ws))


class Act:
    def __init__(self, kind, scale):
        self.kind, self.scale = kind, scale

    def __call__(self, x):
        return np.tanh(self.scale * x) if self.kind == "tanh" else x ** 2


def string_field_by_unpacking(x):
    for act in [Act("tanh", 2.0), Act("square", 0.5)]:
        x = act(x)
    return np.sum(x)
