"""Dict keys built from string arguments, dicts of functions chosen by a string,
NamedTuples under vmap of a hessian and jvp, partials binding containers, dataclass
defaults (issue 23, items 3 to 5); run by s2s and, through jax_twin, by JAX
(tests/frontend/test_objects11.py)."""

import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


# ---- dict keys built from string arguments ------------------------------------------


def fstring_key(x, d, name):
    return np.sum(d[f"w{name}"] * x**2) + np.sum(np.sin(d[f"b{name}"] * x))


def plus_key(x, d, name):
    return np.sum(np.tanh(d["w" + name] * x)) + np.sum(d["b" + name] ** 2 * x)


def two_part_key(x, d, layer, kind):
    return np.sum(np.cos(d[f"{kind}{layer}"] * x) * d[kind + "_" + layer])


def calls_a_keyed_function(x, d):
    return fstring_key(x * 2.0, d, "a") + plus_key(np.sin(x), d, "b")


def hands_the_name_on(x, d, name):
    return plus_key(x, d, name) * 2.0 + np.sum(x)


def _params(x):
    return {"wa": x + 1.0, "ba": 0.5 * x, "wb": np.cos(x), "bb": x[::-1] * 1.0}


# ---- dicts of functions chosen by a string ----------------------------------------


def relu(x):
    return np.maximum(x, 0.0)


ACTS = {"tanh": np.tanh, "relu": relu, "sin": np.sin}


def module_acts(x, key):
    return np.sum(ACTS[key](x) ** 2 * x)


def built_acts(x, key):
    acts = {"tanh": np.tanh, "relu": relu, "sin": np.sin}
    return np.sum(acts[key](x) * x)


def argument_acts(x, cfg, key):
    return np.sum(cfg[key](x) * cfg["scale"])


def apply_pair(fs, x):
    return fs["f"](x) + fs["g"](x) * 2.0


def passes_a_function_dict(x):
    return np.sum(apply_pair({"f": np.sin, "g": relu}, x) * x)


def passes_a_built_function_dict(x):
    fs = {"f": np.tanh, "g": relu}
    return np.sum(apply_pair(fs, np.cos(x)) ** 2)


def passes_a_chosen_function_dict(x, key):
    fs = {"f": ACTS[key], "g": np.cos}
    return np.sum(apply_pair(fs, x))


# ---- NamedTuples: vmap of a hessian, jvp's tangent ----------------------------------


class Affine(NamedTuple):
    w: np.ndarray
    b: np.ndarray

    def apply(self, x):
        return self.w * x + self.b

    def norm(self):
        return np.sum(self.w**2)

    @property
    def shift(self):
        return np.sum(self.b)


def affine_loss(x, p):
    return np.sum(np.tanh(p.apply(x))) + p.norm() * np.sum(x**2) + p.shift * np.sum(np.sin(x))


def affine_loss_in_a_callee(x, p):
    return affine_loss(x * 2.0, p) + np.sum(np.cos(x) * p.w)


def returns_it(p):
    return p


def builds_one(p):
    return Affine(p.w * 2.0, np.sin(p.b) * p.w)


def returns_it_and_more(p, x):
    return p, np.sin(x) * p.w


def returns_it_through_a_callee(p):
    return builds_one(Affine(p.w, p.b * 2.0))


# ---- partials binding a dict; dataclasses with a default field ------------------------


def partial_dict(x, cfg):
    return np.sum(np.sin(x * cfg["a"]) * cfg["b"])


@dataclass
class Scaled:
    w: np.ndarray
    scale: float = 0.5


@dataclass(frozen=True)
class FrozenScaled:
    w: np.ndarray
    scale: float = 0.5


@dataclass(frozen=True)
class RegisteredScaled:
    w: np.ndarray
    scale: float = 0.5


def scaled_loss(c, x):
    return np.sum(np.tanh(c.w * x)) * c.scale + np.sum(x**2) * c.scale**2


def scaled_loss_in_a_callee(c, x):
    return scaled_loss(c, np.sin(x)) + np.sum(x)


# ---- a callee deleting from the dict it is given -----------------------------------


def drop(d):
    del d["b"]
    return d


def calls_drop(x):
    d = {"a": x, "b": 2.0 * x}
    e = drop(d)
    return np.sum(np.sin(e["a"])) * len(d)


def drop_a_copy(d):
    d = dict(d)
    del d["b"]
    return d


def calls_drop_a_copy(x):
    d = {"a": x, "b": 2.0 * x}
    e = drop_a_copy(d)
    return np.sum(np.sin(e["a"])) * len(d)
