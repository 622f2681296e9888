"""Functions of tests/frontend/test_probe13_fixes.py: forms the thirteenth newcomer
probe found refused where JAX runs them."""

from __future__ import annotations

import math

import numpy as np
import scipy.special

# ---- np.arange(..., dtype=...) ---------------------------------------------------------------


def arange_dtype(x):
    t = np.arange(x.shape[0], dtype=float)
    u = np.arange(1, 4, dtype=np.float32)
    k = np.arange(x.shape[0], dtype=int)
    return np.sum(x * t) + np.sum(x[:3] * u) + np.sum(k * x ** 2)


# ---- np.fft.fftfreq / rfftfreq ---------------------------------------------------------------


def fft_frequencies(x, d=0.1):
    n = x.shape[0]
    mag = np.abs(np.fft.rfft(x))
    return np.sum(mag * np.fft.rfftfreq(n, d=d)) + np.sum(x * np.fft.fftfreq(n) ** 2)


# ---- a raise in a branch ---------------------------------------------------------------------


def _loss(r, kind, c=1.0):
    if kind == "huber":
        a = np.abs(r)
        y = np.where(a <= c, 0.5 * r ** 2, c * (a - 0.5 * c))
    elif kind == "cubic":
        y = np.abs(r) ** 3
    else:
        raise ValueError(f"unknown loss {kind!r}")
    return np.sum(y)


def else_raise_static(x):
    return _loss(x, "huber") + 0.5 * _loss(x, "cubic")


def else_raise_bad_kind(x):
    return _loss(x, "l7")


def else_raise_value(x):
    if np.sum(x) > 0:
        y = x ** 2
    elif np.min(x) > -1.0:
        y = np.sin(x)
    else:
        raise ValueError("too negative")
    return np.sum(y * np.arange(1.0, x.shape[-1] + 1))


def first_branch_raises(x, axis=0):
    if x.ndim != 1:
        raise ValueError(f"expected a vector, got {x.ndim} axes")
    elif axis != 0:
        raise ValueError("axis must be 0")
    else:
        y = np.tanh(x) * x
    return np.sum(y)


def first_raises_then_chain(x, mode="b"):
    if x.shape[0] < 2:
        raise ValueError("too short")
    elif mode == "a":
        y = x[0] * x[1]
    else:
        y = x[0] ** 2 - x[1]
    return y


def else_raise_return_branches(x, kind="sin"):
    if kind == "sin":
        return np.sum(np.sin(x) * x)
    elif kind == "cos":
        return np.sum(np.cos(x))
    else:
        raise ValueError(kind)


def _positive(v):
    return v > 0


def else_raise_user_test(x):
    if _positive(np.sum(x)):
        y = x ** 2
    else:
        raise ValueError("negative")
    return np.sum(y)


# ---- `scipy.special.erf` in a callee, `import scipy.special` (the JAX backend) -----------


def _normal_cdf(z):
    return 0.5 * (1 + scipy.special.erf(z / math.sqrt(2)))


def black_scholes_lambda(params, K=1.0, r=0.02):
    S, sigma, T = params[0], params[1], params[2]
    N = lambda z: 0.5 * (1 + scipy.special.erf(z / math.sqrt(2)))  # noqa: E731
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    return S * N(d1) - K * np.exp(-r * T) * _normal_cdf(d2)


# ---- sorted() of a module dict constant's items, walked in a zip ---------------------------

WEIGHTS = {"b": 2.0, "a": 0.5, "c": -1.0}


def sorted_const_items_zip(x):
    total = 0.0
    for (name, w), xi in zip(sorted(WEIGHTS.items()), x):
        total = total + w * xi ** 2 * len(name)
    return total + sum(w * xi for w, xi in zip(list(WEIGHTS.values()), x[1:]))


# ---- vmap of an `if` joining a name bound None first (a gradient's) ------------------------


def box_sdf_inner(p):
    q = np.abs(p) - np.array([0.5, 0.3])
    return min(max(q[0], q[1]), 0.0) + 0.1 * np.sum(p ** 2)


# ---- |z| of a complex zero: a spectrum's empty bin --------------------------------------


def spectrum_magnitudes(x):
    return np.sum(np.abs(np.fft.rfft(x))[1:] * np.arange(1.0, 4.0))
