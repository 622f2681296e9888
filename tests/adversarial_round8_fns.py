"""Source functions for tests/test_adversarial_round8.py (loaded by jax_twin too)."""

import functools
import operator

import numpy as np


# ---- an item read before a loop that may run no iteration -------------------------------

def reduce_computed(x):
    return functools.reduce(operator.add, np.sin(x) * x)


def head_before_tail_loop(x):
    y = np.sin(x) * x
    s = 3.0 * y[0]
    for k in range(1, len(y)):
        s = s + y[k] * k
    return s


def head_before_while(x):
    y = np.sin(x) * x
    s = y[0] * 3.0
    k = 1
    while k < len(y) and s < 10.0:
        s = s + y[k] * k
        k = k + 1
    return s


# ---- a lambda that calls a function-valued parameter -------------------------------------

def calls_param_in_lambda(x, f):
    g = lambda b: x * f(b)
    return np.sum(g(x))


def reduce_calls_param(x, f):
    return functools.reduce(lambda a, b: a + f(b), x, 0.0)


def make_scaled(c):
    def scaled(v):
        return np.sin(v) * c

    return scaled


def make_cubed(c):
    return lambda v: v ** 3 * c


# ---- an integer exponent saved on a loop's tape ------------------------------------------

def loop_index_power(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(x ** (i + 1))
    return s


# ---- a list copied from itself in a loop that runs no iteration, under jacrev -------------

def copy_pop_loop(x, n):
    parts = [x[0], x[1]]
    for i in range(2, n):
        q = list(parts)
        last = q.pop()
        q.append(last * np.cos(x[i]))
        q.append(np.sin(x[i]) * parts[-2])
        parts = q
    return np.stack(parts) * 2.0


# ---- a dict filled in a loop over a dict argument's keys, read after the loop -----------

def dict_filled_then_counted(x, p):
    out = {}
    for k in p:
        out[k] = p[k] * x
    return len(out) * np.sum(x) + sum(np.sum(v ** 2) for v in out.values())


def dict_filled_then_listed(x, p):
    out = {}
    for k in p:
        out[k] = np.sin(p[k] * x)
    names = list(out)
    return np.sum(out[names[0]] * x) + np.sum(np.stack([out[k] for k in out]))


# ---- jacfwd of an input with no element -------------------------------------------------

def loop_over_items(x):
    s = 0.5
    for i in range(len(x)):
        s = s * np.sin(x[i]) + x[i]
    return s


# ---- a Hessian whose output's rank follows the input's ----------------------------------

def cubes_down_axis0(x):
    return np.sum(x ** 3, axis=0)
