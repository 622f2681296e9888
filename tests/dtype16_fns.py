"""Functions for tests/test_dtype16.py: Python numbers read from a list at a run-time
index (float32 must stay float32, as in NumPy's own run of the function), and products
and slogdet at special values (zeros, negatives, size-0 and size-1 axes, singular
matrices)."""

import numpy as np

SCHEDULE = [1.0, 0.5, 0.25, 0.125]
COUNTS = [1, 2, 3]
STEP = 2


def schedule_lr(w):
    lr = SCHEDULE[STEP % len(SCHEDULE)]
    return lr * np.sum(w ** 2) + np.sum(np.sin(w)) * STEP


def int_table(w, k):
    return COUNTS[k] * np.sum(w ** 2)


def table_at_argmax(w):
    return SCHEDULE[np.argmax(w)] * np.sum(w ** 2)


def scaled_powers(x, scales=(1.0, 0.5, 0.25), stop=5):
    total = 0.0
    for i, s in enumerate(scales):  # (a loop s2s keeps: its break)
        if i == stop:
            break
        total = total + s * np.sum(x ** (i + 1))
    return total


def read_by_counter(x, scales, stop=5):
    total = 0.0
    for i in range(len(scales)):
        if i == stop:
            break
        total = total + scales[i] * np.sum(np.cos(x) * x ** i)
    return total


def scaled_powers_called(x):
    return scaled_powers(x)


def read_by_counter_called(x):
    return read_by_counter(x, (1.0, 0.5, 0.25))


# ---- products and slogdet -------------------------------------------------------------


def prod_all(x):
    return np.prod(x)


def prod_rows(x):
    return np.sum(np.prod(x, axis=1) ** 2)


def prod_cols(x):
    return np.sum(np.sin(np.prod(x, axis=0)))


def cumprod_sum(x):
    return np.sum(np.cumprod(x) * np.arange(1.0, np.size(x) + 1.0))


def cumprod_rows(x):
    return np.sum(np.cumprod(x, axis=1) ** 2)


def slogdet_logabs(a):
    sign, logabs = np.linalg.slogdet(a)
    return logabs


def slogdet_sign_times(a):
    sign, logabs = np.linalg.slogdet(a)
    return sign * np.exp(logabs)
