"""Functions that call s2s transforms in their bodies, for tests/test_transform_calls.py."""

import numpy as np

import s2s

V = np.array([0.3, -1.0, 0.5])


def f(x, w):
    return np.sum(np.tanh(x * w) ** 2)


def directional(x, w):
    return s2s.jvp(f, (x, w), (V, np.zeros(3)))[1]


def both_parts(x, w):
    out, out_dot = s2s.jvp(f, [x, w], [V, w])
    return out * out_dot


grad_f = s2s.grad(f)
grad_f_both = s2s.grad(f, argnums=(0, 1))


def grad_norm(x, w):
    g = grad_f(x, w)
    return np.sum(g * g)


def grad_both_dot(x, w):
    gx, gw = grad_f_both(x, w)
    return np.sum(gx * gw)


def bad_jvp_star(x, w):
    args = (x, w)
    return s2s.jvp(f, args, (V, V))[1]


def bad_jvp_lengths(x, w):
    return s2s.jvp(f, (x, w), (V,))[1]


def stack_of_tuples(x):
    rows = []
    for k in range(3):
        rows.append((np.sin(x) * x[k],))
    return np.sum(np.stack(rows))


def vector_fn(x):
    return np.tanh(x) * np.sum(x**2)


def with_scale(x, y, scale=2.0):
    return np.sum((x * scale + y) ** 2)


def loop_with_n(x, n):
    y = x
    for i in range(n):
        y = y * x + np.sin(y)
    return np.sum(y)
