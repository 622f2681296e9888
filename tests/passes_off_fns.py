"""Programs for tests/test_passes_off.py: between them every pass of the specializer
changes the code (the test checks that it does), and JAX differentiates the same
source (tests/support.py: jax_twin)."""

import numpy as np


def softmax_xent(logits, label):
    shifted = logits - np.max(logits)
    logp = shifted - np.log(np.sum(np.exp(shifted)))
    return -logp[label]


def mlp(w, x, y):
    h = np.tanh(x @ w)
    return np.mean((h - y) ** 2)


def loop(x):
    y = x
    for _ in range(4):
        y = y * x + np.sin(y)
    return np.sum(y)


def repeated(x, w):
    a = np.sin(x) * w
    b = np.sin(x) * w
    return np.sum(a * b) - np.sum(np.cos(x))


def tanh_sq(x):
    return np.sum(np.tanh(x) ** 2)


def rows(a, labels):
    shifted = a - np.max(a, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * logp, axis=1))


def relu(w, x):
    h = np.maximum(x @ w, 0.0)
    return np.sum(h * h + h)


def gp(ell, x, y):
    k = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ell**2) + 0.1 * np.eye(x.shape[0])
    return 0.5 * (y @ np.linalg.solve(k, y)) + 0.5 * np.linalg.slogdet(k)[1]
