"""Functions of ``np.abs`` for tests/test_abs_special_values.py (re-run on JAX by
``jax_twin``)."""

import numpy as np


def l1(x):
    return np.sum(np.abs(x))


def max_abs(x):
    return np.max(np.abs(x))


def signed_sqrt(x):  # (+ 1e-6: its float32 Hessian at 0 stays finite)
    return np.sum(np.sign(x) * np.sqrt(np.abs(x) + 1e-6))


def huber_like(x):
    a = np.abs(x)
    return np.sum(np.where(a < 1.0, 0.5 * x**2, a - 0.5))


def abs_builtin(x):
    return np.sum(abs(x) * 2.0)


def nansum_l1(p, t):  # (a NaN target: its element's cotangent is 0)
    return np.nansum(np.abs(p - t))
