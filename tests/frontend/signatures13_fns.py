"""The functions people actually write (issue 23, the thirteenth round): a registered
dataclass whose meta (static) field the function reads (``range(p.n_layers)``), a
keyword-only parameter given a NamedTuple (``def f(x, *, p)``).
tests/frontend/test_signatures13.py compares each with JAX on this same source
(``numpy`` bound to ``jax.numpy``, the class registered with ``jax.tree_util``) or
with central differences."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

import s2s

# ---- 1. a registered dataclass's meta field read in the function ----------------------


@dataclasses.dataclass
class Layers:
    w: np.ndarray
    b: np.ndarray
    n_layers: int
    name: str = "mlp"


s2s.tree_util.register_dataclass(Layers, data_fields=["w", "b"],
                                 meta_fields=["n_layers", "name"])


def deep(p, x):
    h = x
    for i in range(p.n_layers):
        h = np.tanh(h * p.w + p.b * (i + 1))
    scale = 2.0 if p.name == "mlp" else 0.5
    return scale * np.sum(h ** 2)


def deep_after(x, p):
    return deep(p, x)


# ---- 2. a keyword-only parameter given a NamedTuple ----------------------------------


class Params(NamedTuple):
    a: np.ndarray
    b: np.ndarray


def keyword_only(x, *, p, scale=1.0):
    return scale * np.sum(np.sin(x * p.a) + p.b * x ** 2) + np.sum(p[1] * p.a)


# ---- 6. a loop over a slice of functions with a float bound --------------------------


OPS = [np.sin, np.cos, np.tanh]


def first_k(x, k):
    for op in OPS[:k]:
        x = op(x)
    return np.sum(x)


def first_k_in_callee(x):
    return first_k(x, 2.0)


def first_k_in_range(x):
    return first_k(x, 2) + first_k(x, -1) * 0.5


# ---- 3. a dict read by a plain string parameter -------------------------------------


def by_name(params, x, name):
    return np.sum(params[name] * x ** 2) + np.sum(np.sin(params["a"]) * x)


def index_by_int(x, i):
    return np.sum(x[i] ** 2)


# ---- 7. a module-level list of lambdas on one line -----------------------------------

ACTS = [lambda z: np.tanh(z), lambda z: z * z, lambda z: np.sin(z) + z]


def acts(x):
    h = x
    for i in range(3):
        h = ACTS[i](h)
    return np.sum(h)


def acts_looped(x):
    h = x
    for act in ACTS[::-1]:
        h = act(h) * 0.5
    return np.sum(h)


# ---- 5. np.random.RandomState's methods --------------------------------------------


def state_draws(x):
    rs = np.random.RandomState(0)
    n = rs.normal(size=x.shape)
    u = rs.uniform(-1.0, 1.0, size=x.shape)
    r = rs.randn(*x.shape)
    c = rs.choice(x.shape[0], size=2)
    return np.sum(np.sin(x) * n + u * x ** 2 + r * x) + np.sum(x[c] ** 2)


RS = np.random.RandomState(5)


def module_state_draws(x):
    return np.sum(x * RS.randn(*x.shape)) + np.sum(x ** 2 * RS.uniform(size=x.shape))


# ---- 4. a slice of *args -------------------------------------------------------------


def sum_tail(x, *args):
    return np.sum(np.sin(x) * sum(args[2:])) + np.sum(x * args[0])


def every_other(x):
    terms = (x, 2.0 * x, np.sin(x), x ** 2)
    return np.sum(sum(terms[::2]) * sum(terms[-1:0:-2]))
