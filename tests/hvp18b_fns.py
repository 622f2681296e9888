"""The functions of tests/test_hvp18b.py, in a module of their own (a lambda's source is
read from its file; ``jax_twin`` loads this one again with jax.numpy)."""

import numpy as np

import s2s


def logistic_mean(w, x, y):
    return np.mean(np.log1p(np.exp(-y * (x @ w))))


def hvp_grad_inside(w, v, x, y):
    """The closure form: a new lambda each call, the grad made inside it."""
    return s2s.jvp(lambda w: s2s.grad(logistic_mean)(w, x, y), (w,), (v,))


def hvp_grad_of_lambda(w, v, x, y):
    """The grad of a new lambda each call, its jvp taken."""
    return s2s.jvp(s2s.grad(lambda w: logistic_mean(w, x, y)), (w,), (v,))
