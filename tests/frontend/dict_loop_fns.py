"""Loops and comprehensions over a dict argument (the optimizer idiom), for
tests/frontend/test_dict_loops.py: each is run by s2s and, loaded again with
``numpy`` bound to ``jax.numpy``, by JAX."""

import numpy as np


def items_loop(params, x):
    t = 0.0
    for k, p in params.items():
        t = t + np.sum(p * x)
    return t


def keys_loop(params, x):
    t = 0.0
    for k in params:
        t = t + np.sum(np.sin(params[k]) * x)
    return t


def keys_method_loop(params, x):
    t = 0.0
    for k in params.keys():
        t = t + np.sum(params[k] * params[k] * x)
    return t


def values_loop(params, x):
    t = 0.0
    for p in params.values():
        t = t + np.sum(np.tanh(p) * x)
    return t


def sorted_keys_loop(params, x):
    t = 0.0
    for k in sorted(params):
        t = t * 0.5 + np.sum(params[k] * x)
    return t


def sorted_items_loop(params, x):
    t = 0.0
    for k, p in sorted(params.items()):
        t = t * 0.5 + np.sum(p * x)
    return t


def dict_comp(params, x):
    scaled = {k: p * x for k, p in params.items()}
    return np.sum(scaled["w"]) + np.sum(scaled["b"])


def dict_comp_chain(params, x):
    scaled = {k: p * x for k, p in params.items()}
    squared = {k: v * v for k, v in scaled.items()}
    return sum(np.sum(v) for v in squared.values())


def list_comp_values(params, x):
    parts = [np.sum(p * x) for p in params.values()]
    return parts[0] + 2.0 * parts[1]


def sum_gen_items(params, x):
    return sum(np.sum(np.cos(p) * x) for k, p in params.items())


def sgd_step(params, x):
    grads = {k: 2.0 * p * x for k, p in params.items()}
    new = {k: params[k] - 0.1 * grads[k] for k in params}
    return sum(np.sum(v * v) for v in new.values())


def key_in_body(params, x):
    t = 0.0
    for k, p in params.items():
        if k == "w":
            t = t + np.sum(p * x)
        else:
            t = t + 2.0 * np.sum(p)
    return t


def sgd_update(params, x):
    return {k: p - 0.1 * p * x for k, p in params.items()}


def comp_over_array_rows(x):
    d = {k: x[k] * 2.0 for k in x}  # keys from an array's values: known only at run time
    return np.sum(d[0])
