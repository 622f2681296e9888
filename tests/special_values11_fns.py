"""Functions of tests/test_special_values11.py (each run by s2s and, through
``support.jax_twin``, by JAX on the same source)."""

import functools
import operator

import numpy as np


def product_fold(x):
    return functools.reduce(operator.mul, x)


def product_fold_from_one(x):
    return functools.reduce(operator.mul, x, 1.0)


def product_fold_of_a_lambda(x):
    return functools.reduce(lambda a, b: a * b, x)


def log_sum_exp_pair(x):
    return np.logaddexp(x[0], x[1])


def log_sum_exp2_pair(x):
    return np.logaddexp2(x[0], x[1])


def log_sum_exp_against(x):
    return np.sum(np.logaddexp(x, -np.inf) + np.logaddexp(0.5, x))


def largest(x):
    return np.max(x)


def smallest(x):
    return np.min(x)


def largest_by_amax(x):
    return np.amax(x)


def spread(x):
    return np.ptp(x)


def spread_of_columns(x):
    return np.sum(np.ptp(np.reshape(x, (2, -1)), axis=0))


def largest_of_rows(x):
    return np.sum(np.max(np.reshape(x, (2, -1)), axis=1))


def largest_ignoring_nan(x):
    return np.nanmax(x)


def middle(x):
    return np.median(x)


def middle_of_rows(x):
    return np.sum(np.median(np.reshape(x, (2, -1)), axis=1) * np.array([1.0, 2.0]))


def quantiles(x):
    return np.sum(np.quantile(x, np.array([0.25, 0.5, 0.9])))


def percentile_of_columns(x):
    return np.sum(np.percentile(np.reshape(x, (2, -1)), 40.0, axis=0))


def middle_ignoring_nan(x):
    return np.nanmedian(x)


def middle_of_rows_ignoring_nan(x):
    return np.sum(np.nanmedian(np.reshape(x, (2, -1)), axis=1) * np.array([1.0, 2.0]))
