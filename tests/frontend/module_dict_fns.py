"""Functions walking a module's dict (tests/frontend/test_module_dicts.py)."""

import numpy as np

WEIGHTS = {"a": 1.0, "b": 0.5}
LAYERS = {"w2": np.array([0.5, -1.0, 0.25]), "w1": np.array([1.0, 2.0, -0.5])}
EMPTY = {}


def items_sum(x):
    s = 0.0
    for name, w in WEIGHTS.items():
        s = s + w * np.sum(np.sin(x))
    return s


def keys_read(x):
    s = np.sum(x * x)
    for k in WEIGHTS:
        s = s + WEIGHTS[k] * np.sum(np.cos(x))
    return s


def sorted_layers(x):
    h = x
    for name in sorted(LAYERS):
        h = np.tanh(h * LAYERS[name])
    return np.sum(h)


def enumerate_values(x):
    h = x
    for i, w in enumerate(LAYERS.values()):
        h = np.tanh(h * w) + 0.1 * i
    return np.sum(h * h)


def reversed_items(x):
    h = x
    for k, w in reversed(LAYERS.items()):
        h = np.sin(h) * w
    return np.sum(h)


def key_after_loop(x):
    for k, w in LAYERS.items():
        x = x * w
    return np.sum(x) * len(k)


def nothing_walked(x):
    s = np.sum(x)
    for k, v in EMPTY.items():
        s = s + v * x[0]
    return s


def helper_walks(x):
    return np.sum(np.exp(-x)) + items_sum(x)


class Color:
    """Keys with no literal spelling."""

    def __repr__(self):
        return "<Color>"


BY_OBJECT = {Color(): 2.0}


def object_keys(x):
    s = 0.0
    for k, w in BY_OBJECT.items():
        s = s + w * np.sum(x)
    return s


def leaves_early(x):
    s = 0.0
    for k, w in WEIGHTS.items():
        if k == "b":
            break
        s = s + w * np.sum(x)
    return s
