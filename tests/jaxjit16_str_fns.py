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
