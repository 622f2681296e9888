"""Source functions for tests/frontend/test_builtins.py (loaded by jax_twin too)."""

from types import SimpleNamespace

import numpy as np

CONFIG = {"wd": 0.1, "depth": 2, "mode": "tanh"}
cfg = SimpleNamespace(lr=0.5)
B = np.array([1.0, 2.0, 3.0])
TABLE = (0.5, 1.5, 2.5)
WEIGHTS = [1.0, -2.0]


def max_scalars(x, y):
    return max(np.sum(x), np.sum(y)) * 2.0


def min_scalars(x, y):
    return min(np.sum(x * x), np.sum(y), 1.0)


def max_tie(x):
    a = np.sum(x)
    return max(a, a * 1.0)


def abs_scalar(x):
    return abs(np.sum(x) - 1.0)


def static_builtins(x):
    n = max(CONFIG["depth"], 1) + len(TABLE) + abs(-1) + round(2.6)
    flag = all([n > 0, True]) and not any([False, n < 0])
    if isinstance(CONFIG["wd"], float) and flag:
        return np.sum(x) * n
    return np.sum(x)


def membership(x, mode="tanh"):
    if mode in ("tanh", "relu"):
        return np.sum(np.tanh(x))
    return np.sum(x)


def membership_const(x):
    if CONFIG["mode"] not in ("sin",):
        return np.sum(x * 2.0)
    return np.sum(np.sin(x))


def config_wd(x):
    return np.sum(x * x) * CONFIG["wd"] + cfg.lr * np.sum(x)


def config_get(x):
    return np.sum(x) * CONFIG.get("wd", 1.0) + CONFIG.get("missing", 0.25) * np.sum(x * x)


def to_float(x):
    s = float(np.sum(x))
    return s * np.sum(x)


def item_method(x):
    return np.sum(x).item() * np.sum(x)


def builds_containers(x):
    t = tuple([x, x * 2.0])
    ls = list((x, t[1]))
    d = dict(a=x, b=ls[1])
    return np.sum(t[0] * d["b"]) + np.sum(ls[0])


def sorted_keys(x):
    d = {"b": 2.0, "a": 1.0}
    return sum(np.sum(x * d[k]) for k in sorted(d))


def enumerate_list(x):
    total = 0.0
    for i, w in enumerate([1.0, 2.0]):
        total = total + w * np.sum(np.sin(x) ** (i + 1))
    return total


def zip_constants(x):
    total = 0.0
    for w, s in zip(WEIGHTS, TABLE):
        total = total + w * np.sum(x * s)
    return total


def index_constant(x):
    return np.sum(x * B[..., None]) + np.sum(x * B[1])


def r_constant(x):
    return np.sum(x * np.r_[0.0, 1.0, 2.0])


def tuple_by_int(x, i):
    return np.sum(x) * TABLE[i]


def calls_max(x, y):
    return max_scalars(x, y) + config_wd(x)


def max_with_key(x):
    return max(np.sum(x), 1.0, key=abs)


def any_of_array(x):
    if any(x > 0):
        return np.sum(x)
    return np.sum(x * 2.0)


def isinstance_of_argument(x):
    if isinstance(x, float):
        return x * 2.0
    return np.sum(x)


def missing_key(x):
    return np.sum(x) * CONFIG["nope"]


def type_test(x):
    if type(CONFIG["wd"]) is float and CONFIG["depth"] in (1, 2):
        return np.sum(x * np.c_[B, B].sum(axis=1))
    return np.sum(x)
