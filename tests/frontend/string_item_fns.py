"""Comprehensions and loops over the characters of a string constant
(tests/frontend/test_string_items.py); loaded again by ``jax_twin``."""

import numpy as np

NAMES = "uvw"


def dict_over_enumerate(x):
    ys = {k: x * (i + 1) for i, k in enumerate("abc")}
    return np.sum(ys["c"] * ys["a"])


def loop_over_module_string(x):
    out = 0.0
    for c in NAMES:
        out = out + np.sum(np.sin(x) * (2.0 if c == "u" else 0.5))
    return out


def literal_tests(x):
    if "a" in ("a", "b") and not 1 > 2:
        y = np.tanh(x)
    else:
        y = x
    return np.sum(y * x)
