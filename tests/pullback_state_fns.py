"""The functions of tests/test_pullback_state.py: a pullback's recorded objects and the
emitted code other transforms share, a linear function and the module objects it reads,
the JAX backend's pullback, a callee's array default written in place.  Written once
with ``grad`` read from ``T`` (``s2s`` here; ``jax`` in the JAX twin the tests load:
this text with ``jax.numpy`` and ``jax``'s transforms)."""

import numpy as np
import pullback_state_cfg as cfgmod

import s2s as T

SCALE = 2.0  # (rebound by the scenarios, restored after)


def inner(w):
    print("inner")  # (kept: where a test's stdout hook runs another call)
    return SCALE * np.sum(np.sin(w))


def outer(w):
    return np.sum(T.grad(inner)(w) ** 2)


def other(w):
    return np.sum(T.grad(inner)(w) * 3.0)


class Settings:
    def __init__(self):
        self.scale = 2.0
        self.unused = 1.0
        self.table = {"k": 3.0}


CFG = Settings()


def reads_cfg(w):
    return CFG.scale * CFG.table["k"] * np.sum(np.sin(w))


def reads_module(w):
    return cfgmod.SCALE * np.sum(np.sin(w))


W0 = np.array([1.0, 2.0, 3.0])


def helper(x, w=W0):
    return np.sum(np.sin(x) * w)


def calls_helper(x):
    return helper(x) * 2.0


def times_two_list(x):
    xs = [x, x * x]
    return np.sum(np.multiply(xs, 2.0))


def scaled(w, x):
    return SCALE * np.sum(np.sin(x @ w))


def kw_helper(x, *, w=W0):
    return np.sum(np.cos(x) * w)


def calls_kw_helper(x):
    return kw_helper(x) + helper(x)


def list_times(x, xs):
    """NumPy's function converts the list argument ``xs`` (Python's ``xs * 2.0``
    raises): it was refused, "can't multiply sequence by non-int"."""
    return np.sum(np.multiply(xs, 2.0) * x)


def list_sin(xs):
    return np.sum(np.sin(np.multiply(xs, 2.0)))


def list_mean_by_int(xs):
    """``np.multiply(xs, 2)`` by an int: NumPy's product, not the list repeated (the
    mean of the repetition was half NumPy's)."""
    return np.mean(np.multiply(xs, 2))


def list_add(xs, ys):
    """``np.add`` of two lists: NumPy's sum of items, not their concatenation."""
    return np.mean(np.sin(np.add(xs, ys)))


class Level:
    def __init__(self, inner):
        self.inner = inner


CHAIN = Level(Level(Level(Level(Level({"scale": 2.0})))))  # (CHAIN.inner x5["scale"])


def reads_chain(w):
    return CHAIN.inner.inner.inner.inner.inner["scale"] * np.sum(np.sin(w))


def reads_module_object(w):
    return cfgmod.DEEP.scale * np.sum(np.sin(w))
