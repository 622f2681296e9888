"""Source functions for tests/test_adversarial_round9.py (loaded by jax_twin too)."""

import functools

import numpy as np


# ---- a product on the path the first example did not take -------------------------------

def min_of_products(x):
    return min(np.prod(x) * k for k in range(3))


def cumprod_on_one_path(x):
    if x[0] > 0:
        y = np.cumprod(x)
    else:
        y = x * 2.0
    return np.sum(y * x)


# ---- a loop over rows that runs no iteration for one row ---------------------------------

def step(a, r):
    return a * np.tanh(r) + r


def rows_loop(m):
    h = m[0]
    for i in range(1, len(m)):
        h = step(h, m[i])
    return np.sum(h)


def rows_reduce(m):
    return np.sum(functools.reduce(lambda a, r: a * np.tanh(r) + r, m))


# ---- a max or min over three items, differentiated twice ---------------------------------

def max_of_three(x):
    return max(x[0] * x[1], x[1] ** 2, np.sin(x[2]))


def max_by_key(x):
    parts = [x[0], x[1] * 2.0, x[2] - 1.0]
    best = max(parts, key=lambda v: abs(v))
    return best * x[0]


def min_of_three_by_key(x):
    return min(x[0] * 3.0, x[1], x[2], key=np.abs) * x[1]


# ---- a run-time choice of a function inside functools.reduce, under hessian -------------

ACTS = {"tanh": np.tanh, "sin": np.sin, "softplus": lambda v: np.log1p(np.exp(v))}


def reduce_by_name(x, name):
    return functools.reduce(lambda a, b: a + ACTS[name](b), x, 0.0)


# ---- a loop over range(n) whose first call runs no iteration, under jacrev ---------------

def splice_per_iteration(x, n):
    a = [x]
    b = []
    c = [x]
    for i in range(n):
        b.append(np.sin(x) * i)
        a.append(x * c[-1])
        c = a + b
    return np.sum(np.stack(c) ** 2, axis=0)


def copy_literal_loop(x, n):
    pair = [x, x * x]
    b = []
    c = [x]
    for i in range(n):
        b.append(np.sin(x) * i + c[-1])
        c = list(pair)
        for v in b:
            c.append(v)
    return np.sum(np.stack(c) ** 3, axis=0)


# ---- s2s.jit on JAX of a function whose parameter holds a function ----------------------

def relu(v):
    return np.maximum(v, 0.0)


def layer(x, act=np.tanh):
    return np.sum(act(x) * x)


def keyword_act(x, *, act=np.sin, scale=2.0):
    return np.sum(act(x * scale))


def chosen_by_value(x, name):
    if np.sum(x) > 0:
        f = ACTS[name]
    else:
        f = relu
    return np.sum(f(x) * x)
