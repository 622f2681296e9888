"""Workloads for tools/bench.py: each a NumPy function and its gradient written by hand.

`twin(module)` re-executes this file with `np` bound to another NumPy-like module
(autograd.numpy, jax.numpy) so every system differentiates the same source.

Each hand-written gradient is what a careful person writes: forward values reused,
no work for terms whose gradient is zero, in-place accumulation where it is natural.
"""

import numpy as np

# (workload, size): a small and a large size each
CASES = [
    ("chain", 100),
    ("chain", 1_000_000),
    ("mlp2", 16),
    ("mlp2", 1024),
    ("softmax_xent", 10),
    ("softmax_xent", 100_000),
    ("rosenbrock", 100),
    ("rosenbrock", 1_000_000),
    ("loop50", 10),
    ("loop50", 100_000),
]


def make_args(name, size):
    rng = np.random.default_rng(0)
    if name == "mlp2":
        params = {"w1": rng.normal(size=(32, 64)) * 0.2, "b1": np.zeros(64),
                  "w2": rng.normal(size=(64, 10)) * 0.2, "b2": np.zeros(10)}
        return (params, rng.normal(size=(size, 32)), rng.normal(size=(size, 10)))
    if name == "softmax_xent":
        return (rng.normal(size=size), 3)
    if name == "loop50":
        return (rng.uniform(-0.9, 0.9, size=size),)
    return (rng.normal(size=size),)


def chain(x):
    return np.sum(np.tanh(np.sin(x) * np.exp(x * 0.1)) ** 2)


def chain_hand(x):
    s = np.sin(x)
    e = np.exp(x * 0.1)
    t = np.tanh(s * e)
    dt = 2 * t * (1 - t * t)
    return dt * (np.cos(x) * e + s * e * 0.1)


def mlp2(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return np.mean((out - y) ** 2)


def mlp2_hand(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    d_out = (2.0 / out.size) * (out - y)
    d_pre = (d_out @ params["w2"].T) * (1 - h * h)
    return {"w1": x.T @ d_pre, "b1": d_pre.sum(axis=0),
            "w2": h.T @ d_out, "b2": d_out.sum(axis=0)}


def softmax_xent(logits, label):
    shifted = logits - np.max(logits)
    logp = shifted - np.log(np.sum(np.exp(shifted)))
    return -logp[label]


def softmax_xent_hand(logits, label):
    e = np.exp(logits - np.max(logits))
    g = e / np.sum(e)
    g[label] -= 1.0
    return g


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_hand(x):
    d = x[1:] - x[:-1] ** 2
    g = np.zeros_like(x)
    g[1:] += 200.0 * d
    g[:-1] += -400.0 * d * x[:-1] - 2.0 * (1.0 - x[:-1])
    return g


def loop50(x):
    y = x
    for i in range(50):
        y = y * x + np.sin(y)
    return np.sum(y)


def loop50_hand(x):
    ys = []
    y = x
    for i in range(50):
        ys.append(y)
        y = y * x + np.sin(y)
    y_bar = np.ones_like(x)
    x_bar = np.zeros_like(x)
    for i in range(49, -1, -1):
        y = ys[i]
        x_bar += y_bar * y
        y_bar = y_bar * (x + np.cos(y))
    return x_bar + y_bar


def twin(module):
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    namespace = {}
    exec(compile(source, __file__, "exec"), namespace)
    namespace["np"] = module
    return namespace
