"""Functions for test_runtime_choices.py: ``functools.reduce``, a container of
functions indexed by a key known only when the function runs, and starred unpacking
of a value whose length is known only when it runs.  Loaded twice: as written, and
by ``jax_twin`` with ``numpy`` bound to ``jax.numpy`` (the oracle)."""

import functools
import operator

import numpy as np

ACTS = {"tanh": np.tanh, "sin": np.sin, "softplus": lambda v: np.log1p(np.exp(v))}
BY_POSITION = (np.tanh, np.sin, np.cos)


def square_then_sin(v):
    return np.sin(v * v)


# ---- functools.reduce ------------------------------------------------------------------

def reduce_product(x):
    return functools.reduce(operator.mul, x)


def reduce_with_initial(x):
    return functools.reduce(lambda acc, v: acc * np.sin(v) + v, x, 0.5)


def reduce_arrays(x):
    return np.sum(functools.reduce(np.add, [x, x ** 2, np.cos(x)]))


def reduce_layers(x, w):
    def step(h, wi):
        return np.tanh(h * wi + 0.1)

    return np.sum(functools.reduce(step, w, x))


def reduce_static_list(x):
    parts = [x[0], x[1] * 2.0, np.exp(x[2])]
    return functools.reduce(lambda a, b: a * b + 1.0, parts)


def reduce_empty_literal(x):
    return np.sum(x) + functools.reduce(np.add, [])


def reduce_computed_sequence(x):
    return functools.reduce(operator.add, np.sin(x) * x)


# ---- a container of functions, the key known when the function runs -------------------

def act_by_name(x, name):
    return np.sum(ACTS[name](x) * x)


def act_by_name_bound(x, name):
    f = ACTS[name]
    return np.sum(f(x) + f(2.0 * x))


def act_by_position(x, i):
    return np.sum(BY_POSITION[i](x) ** 2)


def index_from_values(x):
    fs = [np.tanh, lambda v: np.maximum(v, 0.0) ** 2]
    i = int(np.sum(x) > 0)
    return np.sum(fs[i](x) * x)


def local_table(x, name):
    table = {"a": np.tanh, "b": lambda v: v ** 3, "c": square_then_sin}
    return np.sum(table[name](x))


# ---- starred unpacking of a value known when the function runs -------------------------

def star_rest(x):
    a, b, *rest = x
    return a * b + sum(rest)


def star_middle(x):
    first, *mid, last = x
    return first * last + np.sum(np.stack(mid) ** 2)


def star_front(x):
    *init, z = np.sin(x)
    return np.sum(np.stack(init)) * z


def star_rows(m):
    top, *others = m
    return np.sum(top * sum(others))


# ---- each as a callee ----------------------------------------------------------------

def calls_them(x):
    return reduce_product(x) + act_by_name(x, "softplus") + star_middle(x)
