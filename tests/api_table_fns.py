"""Tiny functions for tests/test_api_table.py (the same text runs under JAX through
tests/support.py ``jax_twin``: numpy is jax.numpy there)."""

from typing import NamedTuple

import numpy as np

if np.__name__.startswith("jax"):
    import jax as s2s
    from jax import lax
    from jax import tree_util as tu
    from jax.lax import stop_gradient
else:
    import s2s
    from s2s import lax, stop_gradient
    from s2s import tree_util as tu


def loss(x):
    return np.sum(np.sin(x) * x)


def loss2(x, y):
    return np.sum(np.sin(x) * y)


def with_aux(x):
    return np.sum(x ** 2), np.cos(x)


def vector(x):
    return np.tanh(x) * x[0]


def linear(x):
    return 2.0 * x - x[::-1]


def count_loss(x, n):
    return np.sum(x ** 2) * 1.0


def scaled(x, k):
    return x * k


def stopped(x):
    return np.sum(stop_gradient(x) * x)


def looped(x):
    for _ in range(4):
        x = np.sin(x) * 1.5
    return np.sum(x)


def centred(x):
    return x - lax.pmean(x, "b")


def summed(x):
    return x / lax.psum(x, "b")


def spread(x):
    return lax.pmax(x, "b") - lax.pmin(x, "b")


def gathered(x):
    return lax.all_gather(x, "b") * lax.axis_size("b")


def indexed(x):
    return x * lax.axis_index("b").astype(x.dtype)


@s2s.custom_jvp
def soft(x):
    return np.log1p(np.exp(x))


@soft.defjvp
def soft_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return soft(x), t / (1 + np.exp(-x))


@s2s.custom_vjp
def clipped(x):
    return x * 1.0


def clipped_fwd(x):
    return clipped(x), None


def clipped_bwd(res, g):
    return (np.clip(g, -0.5, 0.5),)


clipped.defvjp(clipped_fwd, clipped_bwd)


def custom_loss(x):
    return np.sum(soft(x)) + np.sum(clipped(x) * 3.0)


@tu.register_pytree_node_class
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


class Scale:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return x * self.k


class Out(NamedTuple):
    value: np.ndarray
    slope: np.ndarray


def as_pair(x):
    return Out(np.sin(x), np.cos(x))


def pair_aux(x):
    return np.sum(x ** 2), Out(np.sin(x), x * 2.0)


def by_position(p):
    value, slope = p
    return np.sum(value * p[1]) + np.sum(p[0] ** 2)


class Linear:
    def __init__(self, w):
        self.w = w

    def loss(self, x):
        return np.sum(np.sin(x * self.w) ** 2)

    def predict(self, x):
        return np.tanh(x * self.w)

    def __call__(self, x):
        return np.tanh(x * self.w)


class LinearLoss(Linear):
    def __call__(self, x):
        return np.sum(np.sin(x * self.w) ** 2)
