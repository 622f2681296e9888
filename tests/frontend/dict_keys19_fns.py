"""Functions for test_dict_keys19.py: dicts read by a key and written in a loop over
another dict's items, ``.get`` with a loop's key, and a key an ``if`` on an array
chooses."""

from __future__ import annotations

import numpy as np


def const_get_items_loop(w):
    params = {"a": w[:2], "b": w[2:]}
    seen = {}
    tot = 0.0
    for k, p in params.items():
        tot = tot + np.sum(p) * seen.get("a", 0.5)
        seen[k] = 2.0
    return tot


def const_in_items_loop(w):
    params = {"a": w[:2], "b": w[2:]}
    seen = {}
    tot = 0.0
    for k, p in params.items():
        if "a" in seen:
            tot = tot + 3.0 * np.sum(p)
        seen[k] = p
        tot = tot + np.sum(p ** 2)
    return tot


def len_items_loop(w):
    params = {"a": w[:2], "b": w[2:]}
    seen = {}
    tot = 0.0
    for k, p in params.items():
        tot = tot + np.sum(p) * (len(seen) + 1.0)
        seen[k] = p
    return tot


def get_loop_key(w):
    params = {"a": w[:2], "b": w[2:]}
    vel = {"a": 1.5}
    tot = 0.0
    for k, p in params.items():
        tot = tot + np.sum(p * vel.get(k, 0.5))
    return tot


def get_then_write(w):
    params = {"a": w[:2], "b": w[2:]}
    vel = {"a": 2.0}
    tot = 0.0
    for k, p in params.items():
        tot = tot + np.sum(p * vel.get(k, 0.5))
        vel[k] = p
    return tot + np.sum(vel["b"] * vel["a"])


def momentum_local_dict(w):
    vel = {}
    params = {"a": w[:2], "b": w[2:]}
    out = {}
    for k, p in params.items():
        v = 0.9 * vel.get(k, 0.0) + np.sin(p)
        vel[k] = v
        out[k] = p - 0.1 * v
    return sum(np.sum(p ** 2) for p in out.values()) + np.sum(vel["a"])


def chosen_key(w):
    d = {"a": 2.0}
    if np.sum(w) > 0:
        k = "a"
    else:
        k = "b"
    return np.sum(w) * d.get(k, 0.5)


def copy_items_loop(w):
    params = {"a": w[:2], "b": w[2:]}
    seen = {}
    tot = 0.0
    for k, p in params.items():
        c = dict(seen)
        tot = tot + np.sum(p) * c.get("a", 0.5)
        seen[k] = 2.0
    return tot


def grown_in_an_outer_loop(w):
    vel = {}
    params = {"a": w[:2], "b": w[2:]}
    for _ in range(3):
        out = {}
        for k, p in params.items():
            v = 0.9 * vel.get(k, 0.0) + np.sin(p)
            vel[k] = v
            out[k] = p - 0.1 * v
        params = out
    return sum(np.sum(p ** 2) for p in params.values())
