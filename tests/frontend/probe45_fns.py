"""Functions for tests/frontend/test_probe45_fixes.py: the newcomer probes 4 and 5's
refused functions made to run (issue 23), and adversarial variations of them."""

from __future__ import annotations

import numpy as np

# ---- a `try` around a dict parameter's lookup (kept_try.py) --------------------------


def try_dict_default(x, cfg={"n": "3"}):
    try:
        n = int(cfg["n"])
    except (KeyError, ValueError):
        n = 2
    try:
        scale = cfg["scale"]
    except KeyError:
        scale = 0.5
    return np.sum(x ** n) * scale


def try_dict_argument(x, cfg):
    """The same with the dict passed at each call (not a default)."""
    try:
        scale = float(cfg["scale"])
    except KeyError:
        scale = 1.5
    except ValueError:
        scale = -1.0
    return np.sum(np.sin(x) * scale)


def try_lookup_of_array_code(x, cfg):
    """A `try` whose body computes with `x` (array code): refused, located."""
    try:
        s = cfg["s"] * np.sum(x)
    except KeyError:
        s = 0.0
    return s + np.sum(x ** 2)


def try_lookup_through_unknown_class(x, cfg):
    """An `except` naming a class of the user's (not Python's own): not decided now;
    kept as Python (KeyError is a LookupError)."""
    try:
        s = cfg["s"]
    except LookupErrorAlias:
        s = 2.0
    return np.sum(x) * s


LookupErrorAlias = LookupError
