"""Functions of the soundness regression tests (tests/test_soundness.py): each one
made the shape specializer, or the gradient's memory, go wrong once."""

import types

import numpy as np

settings = types.SimpleNamespace(WINDOW=2)
N = np.array(2)
W = np.array([1.0, 2.0, 3.0])


def nan_masked(pred, y):
    valid = ~np.isnan(y)
    return np.mean((pred[valid] - y[valid]) ** 2)


def argmax_bound(x):
    return np.mean(x[: np.argmax(x) + 1] ** 2)


def count_bound(x, m):
    return np.mean(x[: np.count_nonzero(m) + 1] ** 2)


def mask_sum_bound(x, m):
    return np.mean(x[: np.sum(m) + 1] ** 2)


def arange_of_argmax(x):
    return np.mean(np.arange(np.argmax(x) + 1) * x[0])


def int_array_bound(x, n):
    return np.mean(x[:n] ** 2)


def attribute_bound(x):
    return np.mean(x[: settings.WINDOW] ** 2)


def module_array_bound(x):
    return np.mean(x[:N] ** 2)


def at_argmax(x):
    return x[np.argmax(x)] * 2.0


def mask_argument(x, m):
    return np.mean(np.sin(x[m]))


def index_argument(x, k):
    return np.mean(x[k] ** 2)


def transposed_other(w, x):
    return np.sum(w * x.T)


def times_module_array(x):
    return np.sum(x * W)


def dict_times_module_array(p):
    return np.sum(p["a"] * W) + np.sum(p["b"])


def passthrough(x):
    return x


def transpose(x):
    return x.T


def squared_norm(z):
    return np.real(z * np.conj(z))


def sum_of_squares(x):
    return np.sum(x * x)


def batch_loss(w, batch):
    return np.sum((batch @ w) ** 2)


K = 2


def module_int_bound(x):
    return np.mean(x[:K] ** 2)


def make_closure_bound(k):
    def closure_bound(x):
        return np.mean(x[:k] ** 2)

    return closure_bound


def default_bound(x, k=2):
    return np.mean(x[:k] ** 2)


def loop_count(x, n):
    s = x * 1.0
    for i in range(n):
        s = s * 0.5 + np.sin(s)
    return np.sum(s[:n] ** 2) * 0.5 + np.sum(s)
