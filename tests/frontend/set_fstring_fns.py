"""Source functions for tests/frontend/test_sets_fstrings.py (loaded by jax_twin too)."""

import numpy as np

MODES = {"tanh", "sin"}
CONFIG = {"prefix": "W", "act": "tanh"}
LAYER = 1


def in_a_set(x, mode="tanh"):
    """membership in a set literal of constants, decided when transformed."""
    if mode in {"tanh", "relu"}:
        return np.sum(np.tanh(x))
    return np.sum(x * x)


def set_bound_to_a_name(x, mode="sin"):
    allowed = {"sin", "cos"}
    y = np.sin(x) if mode in allowed else x
    if mode not in {"cos"}:
        y = y * 2.0
    return np.sum(y)


def module_set(x):
    if CONFIG["act"] in MODES:
        return np.sum(np.tanh(x) * x)
    return np.sum(x)


def keyed_by_fstring(x, params):
    """f-strings of constants as dict keys: in a comprehension over `range` (unrolled)
    and in a dict the function builds."""
    hs = [params[f"W{i}"] * x for i in range(2)]
    out = {f"{name}_sq": np.sum(x * x) * len(name) for name in ("a", "bb")}
    out[f"{'c'}_sq"] = np.sum(hs[1])
    return np.sum(hs[0] * hs[1]) + out["a_sq"] + out["bb_sq"] + out["c_sq"]


def fstring_of_a_constant(x, params):
    key = f"{CONFIG['prefix']}{LAYER:d}"
    return np.sum(params[key] * np.sin(x))


def fstring_in_kept(x):
    y = np.sum(x * x)
    print(f"y = {y}")
    assert y >= 0.0, f"negative {y}"
    return y


def caller(x):
    return in_a_set(x) + set_bound_to_a_name(x) + in_a_set(x, "relu")


# refused


def set_of_values(x):
    s = {np.sum(x), 1.0}
    return len(s) * np.sum(x)


def fstring_of_a_value(x):
    key = f"{np.sum(x)}"
    return np.sum(x) + len(key)
