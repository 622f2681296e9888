"""Tuples, lists and dicts of functions (tests/frontend/test_function_containers.py):
built in the body or at module level, read with a constant key, walked by a ``for``
loop (``enumerate``/``zip`` too) or a comprehension.

Loaded twice: as written (s2s transforms them) and by ``jax_twin`` with ``np`` bound
to ``jax.numpy`` (JAX's results are the oracle)."""

import numpy as np


def relu(x):
    return np.maximum(x, 0.0)


def softplus(x):
    return np.log1p(np.exp(x))


ACTS = (np.tanh, relu, np.sin)
ACTIVATIONS = {"tanh": np.tanh, "softplus": softplus}
CONFIG = {"act": "softplus"}
LAYERS = [np.sin, softplus]


def local_list_loop(x):
    layers = [np.tanh, softplus, np.sin]
    h = x
    for g in layers:
        h = g(h) * 1.5
    return np.sum(h * x)


def literal_tuple_loop(x):
    h = x
    for g in (softplus, np.tanh):
        h = g(h) + h
    return np.sum(h)


def module_tuple_loop(x):
    h = x
    for g in ACTS:
        h = g(h) * x
    return np.sum(h)


def enumerate_and_after(x):
    layers = [np.tanh, softplus, np.cos]
    h = x
    for i, g in enumerate(layers):
        h = g(h) * (i + 1)
    return np.sum(h) + np.sum(g(x))  # (after the loop `g` is the last one, as in Python)


def zip_with_scales(x):
    h = x
    for g, s in zip(LAYERS, (2.0, 0.5)):
        h = g(h) * s
    return np.sum(h ** 2)


def dict_by_config(x):
    act = ACTIVATIONS[CONFIG["act"]]
    return np.sum(act(x) * x)


def local_dict_and_lambda(x):
    acts = {"a": np.tanh, "b": lambda t: t ** 2 * x}
    return np.sum(acts["b"](x) + acts["a"](x))


def comprehension_over_local(x):
    fs = [np.tanh, softplus, lambda t: t * x]
    return sum(np.sum(f(x) ** 2) for f in fs)


def nested_loops(x):
    acc = 0.0 * x
    for f in (np.sin, np.cos):
        for g in LAYERS:
            acc = acc + f(g(x))
    return np.sum(acc * x)


def calls_a_container_user(x):
    return local_list_loop(x) + module_tuple_loop(2.0 * x)
