"""Workloads for tools/bench.py: each a NumPy function and its gradient written by hand.

`twin(module)` re-executes this file with `np` bound to another NumPy-like module
(autograd.numpy, jax.numpy) so every system differentiates the same source.
"""

import numpy as np

CASES = [
    ("chain", 100),
    ("chain", 1_000_000),
    ("mlp_loss", 16),
    ("mlp_loss", 1024),
    ("softmax_xent", 10),
    ("softmax_xent", 100_000),
    ("rosenbrock", 100),
    ("rosenbrock", 1_000_000),
]


def make_args(name, size):
    rng = np.random.default_rng(0)
    if name == "mlp_loss":
        return (rng.normal(size=(64, 32)) * 0.1, rng.normal(size=(size, 64)),
                rng.normal(size=(size, 32)))
    if name == "softmax_xent":
        return (rng.normal(size=size), 3)
    return (rng.normal(size=size),)


def chain(x):
    return np.sum(np.tanh(np.sin(x) * np.exp(x * 0.1)) ** 2)


def chain_hand(x):
    s = np.sin(x)
    e = np.exp(x * 0.1)
    t = np.tanh(s * e)
    dt = 2 * t * (1 - t * t)
    return dt * (np.cos(x) * e + s * e * 0.1)


def mlp_loss(w, x, y):
    h = np.tanh(x @ w)
    return np.mean((h - y) ** 2)


def mlp_loss_hand(w, x, y):
    h = np.tanh(x @ w)
    dh = 2 * (h - y) / h.size
    return x.T @ (dh * (1 - h * h))


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


def twin(module):
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    namespace = {}
    exec(compile(source, __file__, "exec"), namespace)
    namespace["np"] = module
    return namespace
