"""Functions for tests/test_mutable_defaults.py: defaults Python shares between calls."""

import numpy as np


def scaled(x, cfg={"a": 1.0}, extra=[0.5]):  # noqa: B006 (the shared default is the point)
    return cfg["a"] * np.sum(np.sin(x)) + extra[0] * np.sum(x ** 2)


def calls_scaled(x):
    return 2.0 * scaled(x)


def walked(x, cfg={"a": 1.0}):  # noqa: B006
    s = 0.0
    for _, v in cfg.items():
        s = s + v * np.sum(np.sin(x))
    return s
