"""Programs for tests/test_specialize_scalars.py: NumPy scalars meeting Python numbers
held by module names (a Python float divided by zero raises, NumPy's gives inf/nan)."""

import numpy as np

SCALE = 2.0  # a module-level Python float
BIG = 1e30
ZERO = 0.0


def mean_times_module_float(x):
    return np.mean(x) * SCALE


def mean_of_row_sums_times_module_float(x):
    return -np.mean(np.sum(x, axis=1)) * SCALE


def module_float_over_sum(x):
    return SCALE / np.sum(x)


def sum_times_big_twice(x):
    return np.sum(x) * BIG * BIG


def mean_times_argument(x, c):
    return np.mean(x) * c


def mean_over_module_float(x):
    return np.mean(x) / SCALE + np.mean(x * SCALE)


def loop_of_module_floats(x):
    acc = 0.0
    for _ in range(2):
        acc = acc + np.mean(x) * SCALE
    return acc


def module_float_over_sum_times_module_float(x):
    return SCALE / np.sum(x) * SCALE
