"""Names an ``if`` binds on one path, read by later ``if``s on the same test
(tests/frontend/test_one_path_names.py).  Each function ``f(x)`` tests the sign of
``np.sum(x)``; its twin ``f_on(x, t)`` takes the test's truth as an argument, so JAX
(loaded by ``jax_twin``) differentiates the path taken with ``t`` static."""

import numpy as np


def alias_then_reads(x):
    t = np.sum(x) > 0
    return alias_then_reads_on(x, t)


def alias_then_reads_on(x, t):
    if t:
        a = np.sin(x)
        z = a
    else:
        z = x
    if t:
        b = z * a
    if t:
        c = b + x
    else:
        c = x
    return np.sum(c * x)


def negated_then_plain(x):
    t = np.sum(x) > 0
    return negated_then_plain_on(x, t)


def negated_then_plain_on(x, t):
    if not t:
        y = np.exp(x)
    else:
        y = x ** 3
    z = y * x
    if t:
        z = z + np.tanh(y)
    return np.sum(z)


def three_ifs(x):
    t = np.sum(x) > 0
    return three_ifs_on(x, t)


def three_ifs_on(x, t):
    if t:
        tanh_x = np.tanh(x)
        z = tanh_x * 2.0
    else:
        z = x
    if t:
        y = z * tanh_x
    if t:
        y = y + x * z
    else:
        y = x * z
    return np.sum(y ** 2)
