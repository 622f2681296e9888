"""Programs for tests/test_wide_rules.py: maximum/minimum whose operands tie, and
gradients made in loops (returned as a dict)."""

import numpy as np
import scipy.special


def relu_layer(x, w):
    h = np.maximum(x @ w, 0.0)
    return np.sum(h * np.cos(x @ w))


def number_first(x):
    h = np.maximum(0.0, x)
    return np.sum(h * np.sin(x))


def both_maximum(a, b):
    h = np.maximum(a, b)
    return np.sum(h * np.cos(b) + h**2)


def both_minimum(a, b):
    h = np.minimum(a, b)
    return np.sum(h * np.cos(b) + h**2)


def broadcast_maximum(a, b):
    h = np.maximum(a, b)
    return np.sum(np.tanh(h))


def rebound_operand(a, b):
    h = np.maximum(a, b)
    a = a * 2.0
    return np.sum(h * a)


def in_a_loop(a, b):
    total = 0.0
    for _ in range(3):
        h = np.minimum(a, b)
        total = total + np.sum(h * a)
        a = a + 1.0
    return total


def rnn_dict(params, xs):
    h = np.zeros(4)
    for t in range(3):
        h = np.tanh(xs[t] @ params["wx"] + h @ params["wh"] + params["b"])
    return np.sum(h**2)


def same_cotangent(params, x):
    return np.sum(np.sin(params["a"] + params["b"]) * x)


def layer_norm(x, gamma, t):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + 1e-5) * gamma
    return np.sum(y * t)


def layer_norm_var(x, gamma, t):
    mu = x.mean(axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(np.var(x, axis=-1, keepdims=True) + 1e-5) * gamma
    return np.sum(y * t)


def mixture(mu, x, logw):
    d = x[:, None] - mu[None, :]
    lp = logw - 0.5 * d**2
    m = np.max(lp, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(lp - m), axis=1, keepdims=True))
    return -np.sum(lse)


def not_positive(x, s):
    q = np.sqrt(s)  # may be 0: the divisor stays in the sum
    return np.sum(np.sum(x / q / q, axis=1, keepdims=True) ** 2)


def attention(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[1])
    a = np.exp(s - np.max(s, axis=1, keepdims=True))
    a = a / np.sum(a, axis=1, keepdims=True)
    return np.sum((a @ v) ** 2)


def unshifted(x, w):
    e = np.exp(x - 3.0)  # not shifted by its maximum: the sum may be 0
    return np.sum(np.sum(w * e / np.sum(e, axis=1, keepdims=True), axis=1, keepdims=True) ** 2)


def lse_xent(logits, labels):
    logp = logits - scipy.special.logsumexp(logits, axis=1, keepdims=True)
    return -np.mean(np.sum(labels * logp, axis=1))


def lse_vector(x, w):
    return scipy.special.logsumexp(x) * 2.0 + np.sum(w * x)


def softmax_xent(logits, labels):
    p = scipy.special.softmax(logits, axis=1)
    return -np.mean(np.sum(labels * np.log(p), axis=1))
