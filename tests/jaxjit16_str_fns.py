"""Functions reading a string inside a dict, tuple, list or NamedTuple argument
(``cfg["kind"]``, a ``match`` on it): under ``s2s.jit(..., backend="jax")`` the string
is static, part of the signature, as a static argument is (tests/test_jaxjit16.py)."""

import numpy as np
from typing import NamedTuple

class Cfg(NamedTuple):
    kind: str
    w: float

def act(x, kind):
    match kind:
        case "tanh":
            return np.tanh(x)
        case "sin":
            return np.sin(x)
        case _:
            return x * x

def f_dict(x, cfg):
    return np.sum(act(x * cfg["w"], cfg["kind"]) ** 2)

def f_tuple(x, cfg):
    kind, w = cfg
    return np.sum(act(x * w, kind) ** 2)

def f_nested(x, cfg):
    return np.sum(act(x * cfg["layer"]["w"], cfg["layer"]["kind"]) ** 2) + cfg["scale"] * np.sum(x)

def f_list(x, kinds):
    return sum(np.sum(act(x, k)) for k in kinds)

def f_named(x, cfg):
    return np.sum(act(x * cfg.w, cfg.kind) ** 2)


# ---- a NumPy default indexed by a traced value (s2s.jit(..., backend="jax"))


def lerp_default(x, grid=np.array([-1.0, 0.0, 0.5, 2.0]), table=np.array([1.0, 0.0, 0.5, 3.0])):
    i = np.clip(np.searchsorted(grid, x) - 1, 0, grid.size - 2)
    w = (x - grid[i]) / (grid[i + 1] - grid[i])
    return np.sum((1.0 - w) * table[i] + w * table[i + 1])


def sliced_by_default(x, sizes=np.array([2, 3])):
    return np.sum(x[: sizes[0]] ** 2) * sizes[1]


def returns_the_string(x, cfg):
    return {"loss": np.sum(x) * cfg["w"], "name": cfg["kind"]}
