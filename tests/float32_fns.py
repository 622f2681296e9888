"""Programs whose specialized float32 gradients tests/test_float32_specialized.py
checks for float64 work (and against ``jax.grad`` in float32 and float64)."""

import numpy as np


def mlp_relu(params, x, y):
    h = np.maximum(x @ params["w1"] + params["b1"], 0.0)
    out = h @ params["w2"] + params["b2"]
    return np.mean((out - y) ** 2)


def clipped_pair(a, b):
    lo = np.minimum(a, b)
    hi = np.maximum(lo, -0.5)
    return np.sum(hi * np.cos(b))
