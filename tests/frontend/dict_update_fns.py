"""``d.update(...)`` on dicts the function built (test_dict_update.py).  Plain
Python dicts: JAX runs this same source (support.jax_twin) as its oracle."""

import numpy as np


def literal_and_keywords(x):
    d = {"w": x}
    d.update({"v": np.sin(x)}, u=2.0 * x)
    return np.sum(d["v"] * d["u"] + d["w"])


def swaps_keys(x):
    d = {"a": x, "b": 3.0 * x}
    d.update(a=d["b"], b=d["a"])  # the values are read before either is written
    return np.sum(d["a"] * 2.0 + np.tanh(d["b"]))


def from_another_dict(x):
    d = {"a": x}
    e = {"b": x**2, "a": np.cos(x)}
    d.update(e)
    return np.sum(d["a"] + d["b"] * d["a"])


def repeated_key(x):
    d = {"a": x}
    d.update({"a": np.exp(x)}, a=x**3)  # the keyword is written last
    return np.sum(d["a"])


def in_a_loop(x):
    d = {"h": x, "s": np.zeros_like(x)}
    for k in range(3):
        d.update(h=np.tanh(d["h"] * 1.5 + 0.1 * k), s=d["s"] + d["h"])
    return np.sum(d["h"] * d["s"])


def in_a_branch(x):
    d = {"y": x}
    if np.sum(x) > 0.0:
        d.update(y=np.sin(d["y"]))
    else:
        d.update({"y": d["y"] ** 2})
    return np.sum(d["y"])


def dict_returned(x):
    d = {"a": x}
    d.update(b=x * 2.0)
    return np.sum(d["a"] * d["b"]), d


def shared_then_updated(x):
    d = {"a": x}
    f = d
    d.update(a=2.0 * x)
    return np.sum(f["a"])


def argument_updated(d):
    d.update(a=2.0 * d["a"])
    return np.sum(d["a"])


def key_from_values(x):
    d = {"a": x}
    d.update({str(np.argmax(x)): x})
    return np.sum(d["a"])


def unknown_keys(x, extra):
    d = {"a": x}
    d.update(extra)
    return np.sum(d["a"])
