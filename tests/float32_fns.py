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


def gp_nll(ell, x, y):
    sq = (x[:, None] - x[None, :]) ** 2
    k = np.exp(-0.5 * sq / ell**2) + 0.1 * np.eye(x.shape[0])
    alpha = np.linalg.solve(k, y)
    return 0.5 * (y @ alpha) + 0.5 * np.linalg.slogdet(k)[1]


def gp_typed(ell, x, y):  # (every array in x's dtype)
    k = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ell**2) + \
        np.diag(np.full_like(x, 0.1))
    alpha = np.linalg.solve(k, y)
    return 0.5 * (y @ alpha) + 0.5 * np.linalg.slogdet(k)[1]


def solve_returned(a, b):
    return np.sum(np.linalg.solve(a, b)) + np.sum(np.linalg.inv(a) ** 2)


def chained(k0, y):
    k = k0 @ k0.T + 3.0 * np.eye(k0.shape[0])
    alpha = np.linalg.solve(k, y)
    beta = np.linalg.solve(k, alpha)
    return np.sum(beta * y) + np.linalg.slogdet(k)[1]


def not_symmetric(x, z, y):
    k = np.exp(-(x[:, None] - z[None, :]) ** 2) + 2.0 * np.eye(x.shape[0])
    return y @ np.linalg.solve(k, y) + np.linalg.slogdet(k)[1]


def outer_sym(x, y):
    k = np.abs(x[:, None] - x[None, :]) + x[:, None] * x[None, :] + 4.0 * np.eye(x.shape[0])
    return y @ np.linalg.solve(k, y) + np.linalg.slogdet(k)[1] + np.sum(np.linalg.inv(k))


def matrix_rhs(a, b):
    c = a @ a.T + 5.0 * np.eye(a.shape[0])
    return np.sum(np.linalg.solve(c, b) ** 2) + np.linalg.slogdet(c)[1]


def rebound_rows(x, y):  # (x rebound between its column and its row: not symmetric)
    col = x[:, None]
    x = x * 1.5
    k = np.exp(-((col - x[None, :]) ** 2)) + 2.0 * np.eye(x.shape[0])
    return y @ np.linalg.solve(k, y) + np.linalg.slogdet(k)[1]


def relu_loss(w, x, y):
    h = np.maximum(x @ w, 0.0)
    return np.sum((h - y) ** 2)


def clip_loss(x):
    return np.sum(np.minimum(np.maximum(x, -0.5), 0.5) * np.cos(x))


def loop_relu(w, x):
    for _ in range(3):
        x = np.maximum(x @ w, 0.0)
    return np.sum(x)
