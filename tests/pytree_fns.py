"""Functions of pytree arguments for tests/test_pytrees.py.

The same text runs under JAX (tests/support.py ``jax_twin``: numpy is jax.numpy
there), so the containers register with whichever library's tree_util this is."""

import dataclasses
from collections import OrderedDict, defaultdict  # noqa: F401  (the tests build them)
from typing import NamedTuple

import numpy as np

if np.__name__.startswith("jax"):
    from jax import tree_util as tu
    from jax.lax import stop_gradient
else:
    from s2s import tree_util as tu
    from s2s import stop_gradient


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray


@tu.register_pytree_node_class
class Layer:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def loss(self, x):
        return np.sum(np.tanh(x @ self.w + self.b) ** 2)


@dataclasses.dataclass
class Net:
    layers: list
    scale: float = dataclasses.field(default=1.0, metadata=dict(static=True))


tu.register_dataclass(Net, data_fields=["layers"], meta_fields=["scale"])


class Pair:
    """Registered with register_pytree_node (JAX's signature)."""

    def __init__(self, a, b):
        self.a = a
        self.b = b


tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, ch: Pair(*ch))


class Model:
    """Not a pytree: its bound method reads ``self.W`` as a constant of each call."""

    def __init__(self, W):
        self.W = W
        self.tag, self.config = "model", {"lr": 0.1}  # (data no transform reads)

    def loss(self, x):
        return np.sum(np.tanh(x @ self.W) ** 2)

    def predict(self, x):
        return np.tanh(x @ self.W) * self.scale

    def loss_aux(self, x):
        h = np.tanh(x @ self.W)
        return np.sum(h ** 2), h

    scale = 2.0  # (a class attribute the method reads too)
    kind = "mlp"


def linear(p, x):
    return np.tanh(x @ p.w + p.b)


def params_loss(p, x):
    return np.sum(linear(p, x) ** 2)


def params_loss_inline(p, x):
    return np.sum((x @ p.w + p.b) ** 2) + np.sum(p.w ** 3)


def layer_apply(layer, x):
    return np.tanh(x @ layer.w + layer.b)


def net_loss(net, x):
    h = layer_apply(net.layers[0], x)
    return np.sum(layer_apply(net.layers[1], h) ** 2)


def net_loss_scaled(net, x):
    return net.scale * np.sum(net.layers[0].w * x)


def pair_loss(p, x):
    return np.sum(np.sin(p.a * x) * p.b)


def dict_loss(d, x):
    return np.sum(d["z"] * x) + np.sum(d["a"] ** 2 * x)


def none_loss(p, x):
    return np.sum(p[0] * x) + np.sum(p[2]["c"] ** 2)


def nested_loss(p, x):
    return np.sum(p["layer"].w * x) + np.sum(p["pair"].b ** 2)


def params_out(p, x):
    return linear(p, x)


def stopped(x):
    return np.sum(x * stop_gradient(x) ** 2)


def stopped_vector(x):
    return np.sin(x) * stop_gradient(np.cos(x))


def int_scaled(x, n):
    return np.sum(x ** 2) * n


def linear_map(x, y):
    return 2.0 * x + np.sum(y) * np.ones_like(x)


# ---- objects the function builds and returns ----------------------------------------


class Out(NamedTuple):
    h: np.ndarray
    s: np.ndarray


@dataclasses.dataclass
class Stats:
    mean: np.ndarray
    spread: np.ndarray


tu.register_dataclass(Stats, data_fields=["mean", "spread"], meta_fields=[])


@tu.register_pytree_node_class
class Scaled:
    """A constructor that computes (its tree_unflatten calls it again, undoing the
    computation first: the rebuilt object is the one the function built)."""

    def __init__(self, w):
        self.w = w * 2

    def tree_flatten(self):
        return (self.w,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0] / 2)


def make_out(x):
    return Out(np.tanh(x), np.sum(x ** 2, axis=-1) * x)


def make_layer(x):
    return Layer(np.sin(x), x * 2.0)


def make_stats(x):
    return Stats(spread=np.cos(x) * x, mean=np.sin(x) + 1.0)


def through_callee(x):
    o = make_out(x * 3.0)
    return Out(o.h * o.s, o.s)


def nested_out(x):
    return (np.sin(x), {"o": Out(x * x, np.cos(x)), "l": [make_layer(x)]})


def out_aux(x):
    return np.sum(x ** 2), Out(np.sin(x), x * 3.0)


def branch_out(x):
    if np.sum(x) > 0:
        out = Out(x * 2.0, np.sin(x))
    else:
        out = Out(np.cos(x), x)
    return out


def make_scaled(x):
    return Scaled(x)


def uses_scaled(x):
    s = Scaled(np.sin(x))
    return np.sum(s.w ** 2 * x)


def by_position(p, x):
    w, b = p
    return np.sum(np.tanh(x @ w + b) ** 2) + np.sum(p[1] * p[0][0]) + np.sum(p[-1])


def built_by_position(x):
    o = Out(np.sin(x), x * 2.0)
    h, s = o
    return np.sum(h * o[1]) + np.sum(o[-2] ** 2) + np.sum(s)


class Net2:
    """A callable object reading its attributes, as a bound method does."""

    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return np.sum(np.tanh(x @ self.W) ** 2, axis=-1)


NET2 = Net2(np.ones((3, 2)))


def calls_an_object(x):
    return np.sum(NET2(x))


# ---- a NamedTuple the function built, read by position in the callees it is passed to


def out_by_position(o):
    return np.sum(o[0] * o[1])


def out_unpacked(o):
    h, s = o
    return np.sum(h * np.sin(s))


def out_mixed(o):
    return np.sum(o.h * o[-1]) + np.sum(o[0] ** 2)


def built_to_callees(x):
    o = Out(np.tanh(x), x * 2.0)
    pair = (x, np.cos(x))  # (a plain tuple through the same callee: read as a tuple)
    return out_by_position(o) + out_unpacked(o) + out_mixed(o) + out_by_position(pair)


@tu.register_pytree_node_class
class Normed:
    """A constructor that computes, reads what it set and takes a default; rebuilt
    without __init__ (its tree_unflatten sets the attributes)."""

    def __init__(self, w, scale=2.0):
        self.w = w * scale
        self.norm = np.sum(self.w ** 2)

    def tree_flatten(self):
        return (self.w, self.norm), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.w, obj.norm = children
        return obj


@tu.register_pytree_node_class
class Checked:
    """A constructor that calls a method: s2s cannot write its body as a function."""

    def __init__(self, w):
        self.w = self.clean(w)

    def clean(self, w):
        return w * 1.0

    def tree_flatten(self):
        return (self.w,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0])


def uses_normed(x):
    n = Normed(np.tanh(x))
    return np.sum(n.w * np.sin(x)) + n.norm


def makes_normed(x):
    return Normed(np.sin(x), 3.0)


def makes_checked(x):
    return Checked(x)
