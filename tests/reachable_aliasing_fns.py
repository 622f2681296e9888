"""Functions for tests/test_reachable_aliasing.py: each returns (or passes on) an
array the caller's module holds inside an object, a NamedTuple, a function's default
or a global a helper reads; the transforms must hand back copies."""

from types import SimpleNamespace
from typing import NamedTuple

import numpy as np


class Params(NamedTuple):
    w: np.ndarray


CFG = SimpleNamespace(W=np.arange(3.0))
PP = Params(w=np.arange(3.0) + 1.0)
W0 = np.arange(3.0) + 2.0
G = np.arange(3.0) + 3.0
BIG = SimpleNamespace(parts=[SimpleNamespace(a=np.ones(1)) for _ in range(5000)],
                      W=np.arange(3.0) + 4.0)


def attr(x):
    return CFG.W


def field(x):
    return PP.w


def whole(x):
    return PP


def default_of(x, w=W0):
    return w


def via_default(x):
    return default_of(x)


def helper_global(x):
    return G


def via_helper(x):
    return helper_global(x)


def big(x):
    return BIG.W


def loss_attr(x):
    return np.sum(x * CFG.W), CFG.W


def loss_default(x):
    return np.sum(default_of(x) * x), default_of(x)


def loss_helper(x):
    return np.sum(x), via_helper(x)
