"""Functions of tests/frontend/test_window_sums.py (issue 23): a sliding window (a
``collections.deque(maxlen=k)``, or a list whose front item ``del parts[0]`` drops)
read whole inside the loop that fills it, by ``sum``, ``len`` and NumPy functions
(frontend/windows.py).  Written with ``np``: the test's JAX twin runs the same source
with ``jax.numpy``."""

import collections
from collections import deque

import numpy as np


def deque_mean_window(x):
    buf = collections.deque(maxlen=3)
    acc = 0.0
    for v in x:
        buf.append(v)
        acc = acc + sum(buf) / len(buf) * v
    return acc


def deque_default_maxlen(x, m=2):
    buf = deque(maxlen=m)
    acc = 0.0
    for v in x:
        buf.append(np.sin(v))
        acc = acc + np.sum(np.stack(buf) ** 2) * v
    return acc


def list_window_np_mean(x):
    parts = []
    acc = 0.0
    for v in x:
        parts.append(v * v)
        if len(parts) > 2:
            del parts[0]
        acc = acc + np.mean(np.stack(parts)) * np.cos(v)
    return acc + sum(parts)


def rows_window(m):
    buf = deque(maxlen=2)
    out = np.zeros(m.shape[1])
    for row in m:
        buf.append(np.tanh(row))
        out = out + np.sum(np.stack(buf), axis=0) * row
    return np.sum(out ** 2)


def _windowed(x, scale):
    buf = deque(maxlen=3)
    acc = 0.0
    for v in x:
        buf.append(v * scale)
        acc = acc + sum(buf) * v
    return acc


def window_in_callee(x):
    return _windowed(x, 1.5) + _windowed(x[::-1], 0.5) * np.sum(x)


def _total(parts):
    return parts[0] + parts[-1]


def refused_window_passed(x):
    buf = deque(maxlen=2)
    acc = 0.0
    for v in x:
        buf.append(v)
        acc = acc + _total(buf)
    return acc


def refused_list_window_passed(x):
    parts = []
    acc = 0.0
    for v in x:
        parts.append(v)
        if len(parts) > 2:
            del parts[0]
        acc = acc + _total(parts)
    return acc


def window_listed_to_callee(x):
    buf = deque(maxlen=2)
    acc = 0.0
    for v in x:
        buf.append(np.exp(v))
        acc = acc + _total(list(buf)) * v
    return acc
