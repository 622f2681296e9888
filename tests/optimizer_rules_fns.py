"""Programs on whose gradients the rules of s2s/optimize/rules.py apply (each rule's
``witness``): tests/test_optimizer_rules.py specializes them."""

import numpy as np


def same_shape_product(x, w):
    return np.sum(np.sin(x) * w)


def row_bias(x, b):
    return np.sum(np.tanh(x + b))


def scaled_sum(x):
    return np.sum(np.exp(x)) * 3.0


def onehot_mean(logits, labels):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * logp, axis=1))


def mean_square(x):
    return np.mean(x**2)


def log_sum(x):
    return np.sum(np.log(x * x + 1.0))


def picked(logits, label):
    shifted = logits - np.max(logits)
    logp = shifted - np.log(np.sum(np.exp(shifted)))
    return -logp[label]


def mlp(w, x, y):
    h = np.tanh(x @ w)
    return np.mean((h - y) ** 2)


def matvec(w, x):
    return np.sum(np.sin(w @ x))


def vecmat(x, w):
    return np.sum(np.sin(x @ w))


def dot(x, w):
    return np.sin(x @ w)


def scaled_by(x, c):
    return np.sum(np.exp(x)) * c


def mlp2(x, w):
    return np.sum(np.tanh(x @ w))


def picked_sub(logits, label):
    shifted = logits - np.max(logits)
    return -(shifted[label] - np.log(np.sum(np.exp(shifted))))


def picked_twice(logits, i, j):
    shifted = logits - np.max(logits)
    return np.log(np.sum(np.exp(shifted))) - shifted[i] - 0.5 * shifted[j]


def gates(w, xs):
    h = np.zeros(w.shape[1])
    for t in range(3):
        s = 1.0 / (1.0 + np.exp(-(xs[t] @ w + h)))
        h = s * np.tanh(h + 1.0)
    return np.sum(h**2)


def logdet(a):
    return np.linalg.slogdet(a @ a.T + np.eye(3))[1]


def picked_rows(logits, y):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(logits.shape[0]), y])


def row_mean(x):
    return np.sum(np.mean(x, axis=1) ** 2)


def scaled_rows(q):
    return np.sum(np.tanh(q / np.sqrt(q.shape[1])))


def relu(x, w):
    h = np.maximum(x, 0.0)
    return np.sum(h * w)


def relu_maximum(a, b):
    h = np.maximum(a, b)
    return np.sum(h * np.cos(b))


def relu_minimum(a, b):
    h = np.minimum(a, b)
    return np.sum(h * np.cos(b))


def tanh_energy(x):
    return np.sum(np.tanh(x) ** 2)


def var_scaled(x):
    return np.sum(x * np.var(x, axis=1, keepdims=True))


def gp_nll(ell, x, y):
    sq = (x[:, None] - x[None, :]) ** 2
    k = np.exp(-0.5 * sq / ell**2) + 0.1 * np.eye(x.shape[0])
    alpha = np.linalg.solve(k, y)
    return 0.5 * (y @ alpha) + 0.5 * np.linalg.slogdet(k)[1]


def centered(mu, x):
    d = x[:, None] - mu[None, :]
    return np.sum(np.exp(-0.5 * d**2))


def row_sums(x):
    return np.sum(np.log(x.sum(1) ** 2 + 1.0))


def col_means(x):
    return np.sum(np.tanh(x).mean(0, keepdims=True) ** 2)
