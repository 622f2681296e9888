"""Programs for tests/test_products.py: sums and means over one axis of a matrix."""

import numpy as np

ones_5x1 = 2.0  # (a module name the pass's constant must not take)


def softmax_xent(logits, labels):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * logp, axis=1)) * ones_5x1


def layer_norm(x, t):
    mu = x.mean(axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return np.sum((x - mu) / np.sqrt(var + 1e-5) * t)


def column_stats(x, w):
    m = np.mean(x * w, axis=0)
    s = (x * x).sum(axis=0, keepdims=True)
    return np.sum(m**2) + np.sum(np.sin(s))


def rows_in_loop(x, w):
    acc = 0.0
    for _ in range(3):
        x = np.tanh(x * w)
        acc = acc + np.sum(x.sum(axis=1) ** 2)
    return acc


def outer(x, w):
    return np.sum(np.sin(x[:, :1] @ w[:1, :]) * w)


def relu_bias(b, x):
    return np.sum(np.maximum(x + b, 0.0) ** 2)
