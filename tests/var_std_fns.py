"""Variance and standard deviation for tests/test_var_std_nonfinite.py; a twin with
``jax.numpy`` is JAX's oracle."""

import numpy as np


def var_all(x):
    return np.var(x)


def std_all(x):
    return np.std(x)


def var_rows(x):
    return np.sum(np.var(x, axis=1) * np.array([1.0, 2.0, 3.0]))


def std_rows_ddof(x):
    return np.sum(np.std(x, axis=1, ddof=1))


def var_cols_keepdims(x):
    return np.sum(np.sin(np.var(x, axis=0, keepdims=True)))


def std_method(x):
    return np.sum(x.std(axis=-1) ** 2)
