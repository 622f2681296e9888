"""Functions for tests/test_eval_shape18.py: keyword-only parameters with defaults and
jitted functions under eval_shape (run by s2s.eval_shape and, through
support.jax_twin, by jax.eval_shape on the same source)."""

import numpy as np


def kwonly(x, *, n=3, axis=0, scale=2.0):
    return {"summed": np.sum(x, axis=axis) * scale, "ones": np.ones(n) * np.sum(x)}


def kwonly_tuple(x, y=1.0, *, sizes=(2, 3), mode="tile"):
    z = np.zeros(sizes, dtype=x.dtype) + np.mean(x)
    if mode == "tile":
        return z, np.concatenate([x, x]) * y
    return z.T, x * y


def kwonly_required(x, *, w, k=2):
    return (x @ w)[:k], np.repeat(x, k)


def plain(x, w):
    return np.tanh(x @ w), np.sum(x**2)


def loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def static_count(x, n):
    return np.ones((n, x.shape[0]), dtype=x.dtype) * x


def static_kw(x, *, n=2, mode="sum"):
    return np.sum(x[:n], axis=0) if mode == "sum" else np.max(x[:n], axis=0)


def static_sum(x, n):
    return np.sum(np.sin(x[:n]) ** 2) * n


def kwonly_objects(x, *, cfg={"s": 2.0, "n": 3}, k=None, shape=(3, 2), dtype=np.float32):
    head = x if k is None else x[:k]
    return {"scaled": head * cfg["s"], "zeros": np.zeros(cfg["n"]),
            "reshaped": np.reshape(x, shape), "cast": np.asarray(x, dtype=dtype) * 2}
