"""Dicts changed by a key only the call gives, and dicts made from a dict argument
spread into a call (issue 23, item 4); run by s2s and, through jax_twin, by JAX
(tests/frontend/test_runtime_keys.py)."""

import numpy as np


def drops_from_a_copy(x, params, name):
    d = dict(params)
    del d[name]
    return sum(np.sum(np.sin(v * x)) for v in d.values())


def drops_from_the_argument(x, params, name):
    del params[name]
    return sum(np.sum(v * x**2) for v in params.values())


def pops_from_the_argument(x, params, name):
    v = params.pop(name)
    return np.sum(np.tanh(v * x)) + sum(np.sum(u * x) for u in params.values())


def pops_from_a_built_dict(x, name):
    e = {"a": x, "b": 2.0 * x, "c": np.sin(x)}
    v = e.pop(name)
    return np.sum(v**2) + sum(np.sum(np.cos(u)) for u in e.values())


def drops_from_a_built_dict(x, name):
    e = {"a": x, "b": 2.0 * x, "c": np.sin(x)}
    del e[name]
    return sum(np.sum(u * x) for u in e.values())


def calls_a_popping_function(x, params, name):
    return pops_from_the_argument(x * 2.0, params, name) + np.sum(x)


def shifted(x, w, shift=0.0, scale=1.0):
    return np.sum(np.tanh(x * w + shift) * scale)


def spreads_a_merged_dict(x, params):
    p = {**params, "shift": 1.0}
    return shifted(x, **p)


def spreads_a_dict_call(x, params):
    p = dict(params, shift=0.5)
    return shifted(x, **p) * 2.0


def calls_a_spreading_function(x, params):
    return spreads_a_merged_dict(np.cos(x), params) + np.sum(x**2)


def drops_from_a_copy_in_a_callee(x, params, name):
    return drops_from_a_copy(x * 2.0, params, name) + np.sum(x)


def pops_from_a_built_dict_in_a_callee(x, name):
    return pops_from_a_built_dict(np.sin(x), name) * 2.0
