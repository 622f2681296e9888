"""Loops written for checking ``s2s.jit(..., backend="jax")`` against ``jax.jit`` beside
the wide benchmark's ``lstm`` (issue 27): ``tools/bench_jit_instructions.py
loop:loop50 loop:rnn loop:gru loop:long_rnn`` counts them.

``long_rnn`` has 150 steps, above ``s2s.jit``'s ``unroll`` limit (100): it stays one
rolled ``lax.scan`` per direction where ``jax.jit`` unrolls the Python loop it traces
(docs/performance.md, "The lstm cell on the JAX backend").
"""

import numpy as np


def loop50(x):
    y = x
    for i in range(50):
        y = y * x + np.sin(y)
    return np.sum(y)


def rnn(W, U, b, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h**2)


def gru(p, xs):
    h = np.zeros(p["Wz"].shape[0])
    for t in range(10):
        x = xs[t]
        z = 1.0 / (1.0 + np.exp(-(p["Wz"] @ h + p["Uz"] @ x)))
        r = 1.0 / (1.0 + np.exp(-(p["Wr"] @ h + p["Ur"] @ x)))
        cand = np.tanh(p["Wh"] @ (r * h) + p["Uh"] @ x)
        h = (1 - z) * h + z * cand
    return np.mean(h)


def long_rnn(W, xs):
    h = np.zeros(W.shape[0])
    for t in range(150):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h)


def make_args(name):
    rng = np.random.default_rng(1)
    if name == "loop50":
        return (rng.uniform(-0.9, 0.9, size=10),)
    if name == "loop50_1k":
        return (rng.uniform(-0.9, 0.9, size=1000),)
    if name == "rnn":
        return (rng.normal(size=(16, 16)) * 0.3, rng.normal(size=(16, 4)) * 0.3,
                rng.normal(size=16) * 0.1, rng.normal(size=(12, 4)))
    if name == "gru":
        p = {k: rng.normal(size=(8, 8 if k[0] == "W" else 3)) * 0.4
             for k in ("Wz", "Uz", "Wr", "Ur", "Wh", "Uh")}
        return (p, rng.normal(size=(10, 3)))
    if name == "long_rnn":
        return (rng.normal(size=(8, 8)) * 0.3, rng.normal(size=(150, 8)))
    raise KeyError(name)


FUNCTIONS = {"loop50": loop50, "loop50_1k": loop50, "rnn": rnn, "gru": gru,
             "long_rnn": long_rnn}
