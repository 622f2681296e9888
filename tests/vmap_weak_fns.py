"""Loop accumulators started at a Python number (weakly typed, in NumPy as in JAX) or
at a NumPy zero (strongly typed), batched by vmap: JAX's twin runs the same source."""

import numpy as np


def acc_float(x, w):
    acc = 0.0
    for i in range(3):
        acc = acc + x[i] * w
    return acc


def acc_int(x, w):
    acc = 0
    for i in range(3):
        acc = acc + x[i] * w
    return acc


def acc_half(x, w):
    acc = 0.1
    for i in range(3):
        acc = acc * 1.5 + np.sin(x[i]) * w
    return acc


def acc_zeros(x, w):
    acc = np.zeros(())
    for i in range(3):
        acc = acc + x[i] * w
    return acc


def acc_rows(x, w):
    total = 1.0
    for row in x:
        total = total * (1.0 + row * w)
    return total


def acc_loss(x, w):
    acc = 0.0
    for i in range(3):
        acc = acc + np.tanh(x[i] * w)
    return acc**2
