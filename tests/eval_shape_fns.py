"""Functions for tests/test_eval_shape.py: adversarial shapes, control flow, refusals
(run by s2s.eval_shape and, through support.jax_twin, by jax.eval_shape)."""

import numpy as np


def mlp(x, w, b):
    h = np.tanh(x @ w + b)
    n = x.shape[0]
    return np.sum(h**2, axis=1) / n, h.T[:, 1:]


def scaled(x):
    return x * 2.0 + 1


def by_shape(x):
    if x.shape[0] > 2:
        return x[:2]
    return x * 2.0


def grows(x):
    for _ in range(4):
        x = np.concatenate([x, x[:1]], axis=0)
    return x


def on_values(x):
    if np.sum(x) > 0:
        return x
    return -x


def mismatched(x, y):
    z = np.sin(x)
    return z + y


def masked(x):
    return x[x > 0]


def reduces(x):
    return np.mean(x, axis=(0, 2), keepdims=True), np.max(x, axis=-1), np.sum(x)


def indexes(x, i):
    return x[i], x[:, i], x[1:, None, ..., 0], x[i, :, i]


def products(a, b, c):
    return np.einsum("bij,bjk->bik", a, b), np.tensordot(a, b, axes=([2], [1])), a @ c


def constructs(x):
    n = x.shape[0]
    z = np.zeros((n, 3))
    r = np.arange(n) * 1.0
    e = np.eye(n, 2)
    return z, r, e, np.ones_like(x, dtype=np.int32)


def reshapes(x):
    y = x.reshape(-1, 2)
    return y, np.transpose(x, (2, 0, 1)), np.stack([x, x], axis=1), np.expand_dims(x, 0)


def no_rule(x):
    return np.linalg.qr(x)[1] + np.linalg.pinv(x).T


def helper(p, q):
    return p @ q


def calls(x, w):
    return helper(x, w) + helper(x, w)


class Model:
    def __init__(self, W, depth):
        self.W, self.depth = W, depth

    def loss(self, x):
        for _ in range(self.depth):
            x = np.tanh(x @ self.W)
        return np.sum(x**2)


def appends(x):
    ys = []
    for i in range(3):
        ys.append(x[i] * 2.0)
    return np.stack(ys), len(ys)


def halves(x):
    n = x.shape[0]
    k = 0
    while n > 1:
        n = n // 2
        k = k + 1
    return np.zeros((k, 2)), x.reshape(n, -1)


def keyword(x, *, scale=2.0):
    return x * scale


def draws(x):
    return x + np.random.normal(size=x.shape)


def checks(x):
    assert x.ndim == 2
    return x.sum(0)


SCALE = np.ones(3)


def scaled_by_module(x):
    return x * SCALE


def vector(x, w):
    return np.tanh(x @ w)


def loss(x, w):
    return np.sum(vector(x, w) ** 2)
