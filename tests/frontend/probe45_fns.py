"""Functions for tests/frontend/test_probe45_fixes.py: the newcomer probes 4 and 5's
refused functions made to run (issue 23), and adversarial variations of them."""

from __future__ import annotations

from dataclasses import dataclass, field

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


# ---- a dataclass default holding containers (static.FieldsVar) -----------------------


@dataclass
class Hyper:
    scales: list = field(default_factory=lambda: [1.0, 0.5, 0.25])
    names: dict = field(default_factory=dict)
    dims: tuple = (3, 1)
    act: str = "tanh"
    bias: float = 0.1


HYPER = Hyper()


def dataclass_containers(x, h=HYPER):
    act = np.tanh if h.act == "tanh" else np.sin
    total = h.bias * np.sum(x)
    for i, s in enumerate(h.scales):
        total = total + s * np.sum(act(x * (i + 1)).reshape(h.dims))
    return total + len(h.names) * np.sum(x ** 2)


def dataclass_containers_grad(x, h):
    """Its gradient by hand (the oracle of the default tier)."""
    d = (lambda v: 1.0 - np.tanh(v) ** 2) if h.act == "tanh" else np.cos
    g = h.bias + 2.0 * len(h.names) * x
    for i, s in enumerate(h.scales):
        g = g + s * (i + 1) * d(x * (i + 1))
    return g


# ---- a dict literal of functions read by a module constant's key (fncontainers.py) ---

CONFIG = {"act": "softplus", "layers": 2, "scale": 1.5, "pick": 1}


def literal_dict_of_functions(x):
    act = {"tanh": np.tanh, "softplus": lambda v: np.log1p(np.exp(v)), "sin": np.sin}[
        CONFIG["act"]]
    h = x
    for _ in range(CONFIG["layers"]):
        h = act(CONFIG["scale"] * h)
    return np.sum(h) + {"a": np.cos, "b": np.exp}["a"](np.sum(x)) + (np.sin, np.tanh)[
        CONFIG["pick"]](x[0])


def literal_dict_by_a_value(x, key):
    """A key known only when the function runs (a string argument)."""
    return np.sum({"tanh": np.tanh, "sin": np.sin}[key](x))


# ---- an f-string of strings computed when the function runs (literals.py) ------------


def einsum_fstring(a, b):
    idx = "ijk"[: a.ndim]
    spec = f"{idx},{idx[1:]}->{idx[0]}"
    return np.sum(np.einsum(spec, a, b) ** 2)


def einsum_fstring_braces(a):
    """Escaped braces, a constant int field, a string built with `+` first."""
    s = "ij"[: a.ndim] + ""
    key = f"{{{s}}}{2}"
    return np.sum(np.einsum(f"{s}->{s[0]}", a) ** 2) * len(key)


def fstring_of_an_int(a):
    """An int known only when the function runs (a shape): formatted there ("i2"), so
    NumPy's einsum raises its ValueError, as Python's run does (refused before)."""
    n = a.shape[0]
    return np.sum(np.einsum(f"i{n}", a))


def fstring_with_a_conversion(a):
    s = "ij"[: a.ndim]
    return np.sum(np.einsum(f"{s!s}->", a))


def fstring_of_a_string_from_two_paths(a, flag):
    s = "ij"[: a.ndim] if flag else "i"
    return np.sum(np.einsum(f"{s}->", a))
