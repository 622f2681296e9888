"""Issue 23 (ufunc16): ufunc methods, ``np.bincount`` with weights, ``np.finfo`` of the
call's dtype.  NumPy source; tests/test_ufunc16.py transforms it with s2s and runs the
same text on jax.numpy (``support.jax_twin``) as the oracle."""

import numpy as np


def logaddexp_forms(m):
    a = np.logaddexp.reduce(m)  # (axis=0)
    b = np.logaddexp.reduce(m, axis=-1, keepdims=True)
    c = np.logaddexp.reduce(m, axis=None)
    d = np.logaddexp.reduce(m * 0.5, axis=(0, 1))
    e = np.logaddexp2.reduce(m, axis=1)
    return np.sum(a ** 2) + np.sum(b * m) + c * d + np.sum(np.sin(e))


def logaddexp_rows(m):
    return np.sum(np.logaddexp.reduce(m, axis=1) * np.array([1.0, -2.0, 0.5])[: m.shape[0]])


def logaddexp_initial(m):
    return np.sum(np.logaddexp.reduce(m, axis=1, initial=0.25) ** 2) + np.sum(
        np.logaddexp2.reduce(m, initial=-1.5))


def ufunc_methods(m):
    s = np.add.reduce(m, axis=1) + np.multiply.reduce(m, axis=-1)
    t = np.maximum.reduce(m) + np.minimum.reduce(m, axis=0)
    u = np.maximum.reduce(m, axis=None, keepdims=True) * np.add.accumulate(m, axis=1)
    v = np.multiply.accumulate(m) + np.add.accumulate(m, axis=-1)
    return np.sum(s ** 2) + np.sum(t * t) + np.sum(np.tanh(u)) + np.sum(v * m)


def bincount_sums(w, labels):
    c = np.bincount(labels, weights=w ** 2, minlength=3)
    k = np.arange(c.shape[0]) + 1.0
    return np.sum(c * k) + np.sum(np.sin(c)) + c[0] * c[-1]


def bincount_positional(w, labels):
    c = np.bincount(labels, w)
    return np.sum(c ** 3)


def finfo_consts(x):
    eps = np.finfo(x.dtype).eps
    half = x.dtype.type(0.5)
    big = np.finfo(x.dtype).max
    return (np.sum(np.log(x ** 2 + eps)) * half + np.sum(np.sqrt(x ** 2 + eps))
            + np.sum(np.minimum(x, big)) * np.finfo(x.dtype).resolution
            + np.sum(x * np.finfo(np.float32).tiny) * 1e30
            + np.sum(x) * (np.iinfo(np.int8).max - np.iinfo(np.int8).min))


def eps_scaled(x):
    return np.sum(x) * np.finfo(x.dtype).eps


def dtype_cast(x):
    return x.dtype.type(x[0] * 3.0) ** 2 + np.sum(x)
