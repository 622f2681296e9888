"""Source functions for tests/frontend/test_list_operands.py (loaded by jax_twin too).

Each ``*_list`` function hands a Python list to a NumPy function that reads it as an
array (``np.sum(items)`` is ``np.sum(np.asarray(items))``), or maps a function over
an array; its ``*_stacked`` twin spells the same mathematics with ``np.stack``, which
JAX runs (``jnp.sum`` of a list is refused by JAX), so JAX is the oracle."""

import numpy as np


def sum_list(x):
    """a list grown in a loop, summed."""
    out = []
    for t in x:
        out.append(t**3)
    return np.sum(out)


def sum_stacked(x):
    out = []
    for t in x:
        out.append(t**3)
    return np.sum(np.stack(out))


def comprehension_list(x):
    """a comprehension over an array's elements, its max and mean."""
    items = [np.sin(t) * t for t in x]
    more = [np.cos(t) + t for t in x]
    return np.max(items) + np.mean(more)


def comprehension_stacked(x):
    items = [np.sin(t) * t for t in x]
    more = [np.cos(t) + t for t in x]
    return np.max(np.stack(items)) + np.mean(np.stack(more))


def literal_list(x):
    """a list literal of values computed here, summed along an axis."""
    return np.sum(np.sum([x[0] ** 2 * x, np.cos(x)], axis=0) * x)


def literal_stacked(x):
    return np.sum(np.sum(np.stack([x[0] ** 2 * x, np.cos(x)]), axis=0) * x)


def rows_list(x):
    """rows scaled by each element: a list of vectors, cumulated and normed."""
    rows = [t * x for t in x]
    tanhs = [np.tanh(t + x) for t in x]
    return np.linalg.norm(np.cumsum(rows, axis=0)) + np.sum(np.tanh(tanhs))


def rows_stacked(x):
    rows = [t * x for t in x]
    tanhs = [np.tanh(t + x) for t in x]
    return np.linalg.norm(np.cumsum(np.stack(rows), axis=0)) + np.sum(np.tanh(np.stack(tanhs)))


def map_list(x):
    """``map`` over an array's elements, in ``list``, ``sum`` and two sequences."""
    cubes = list(map(lambda t: t**3, x))
    pairs = list(map(lambda a, b: a * b, x, np.sin(x)))
    return np.sum(np.stack(cubes)) + sum(map(np.tanh, x)) + np.sum(np.stack(pairs))


def map_stacked(x):
    cubes = [t**3 for t in x]
    pairs = [a * b for a, b in zip(x, np.sin(x))]
    return np.sum(np.stack(cubes)) + np.sum(np.tanh(x)) + np.sum(np.stack(pairs))


def map_shadow(x):
    """the generated loop's variable must not capture a name the mapped lambda reads."""
    item = 2.0
    return sum(map(lambda v: v * item, x))


def map_shadow_stacked(x):
    return np.sum(x * 2.0)


def param_list(xs):
    """a list argument read as an array (its structure known per call)."""
    return np.sum(np.square(xs)) + np.prod(xs)


def param_stacked(xs):
    return np.sum(np.square(np.stack(xs))) + np.prod(np.stack(xs))


def pytree_list(p):
    """a list inside a dict argument."""
    return np.sum(np.power(p["ws"], 3)) * p["b"]


def pytree_stacked(p):
    return np.sum(np.power(np.stack(p["ws"]), 3)) * p["b"]


def concat_literals(x, w):
    """``+`` of two lists built here concatenates (its backward once unbroadcast the
    row cotangents into the wrong items: 46x where the gradient is 28x)."""
    rows = [x, 2.0 * x] + [3.0 * x]
    return np.sum(np.stack(rows) * w)


def repeat_literal(x, w):
    """``*`` of a list by a count repeats it; the weights tell the copies apart."""
    rows = [x, np.sin(x)] * 2
    return np.sum(np.stack(rows) * w)


def concat_arguments(xs, ys):
    """two list arguments concatenated, then repeated."""
    both = (xs + ys) * 2
    return np.sum(np.stack(both) ** 2 * np.arange(1.0, 1.0 + len(both))[:, None])


def literal_plus_array(x, w):
    """a list met by an array in ``+`` is NumPy's addition of ``np.asarray`` of it."""
    rows = [x, 2.0 * x] + x
    return np.sum(rows**2 * w)


def literal_plus_array_stacked(x, w):
    rows = np.stack([x, 2.0 * x]) + x
    return np.sum(rows**2 * w)


def grown_plus_literal(x):
    parts = []
    for t in x:
        parts.append(t * x)
    rows = parts + [x]
    return np.sum(np.stack(rows))


def tuple_plus_list(x):
    rows = (x,) + [x]
    return np.sum(np.stack(rows))


def literal_changed_later(x):
    pair = [x, 2.0 * x]
    out = []
    for t in x:
        out.append(np.sum(np.stack(pair + [t * x])))
        pair.append(x)
    return np.sum(np.stack(out))


def builtin_sum_vector(x):
    """Python's ``sum`` of an array adds its elements (rows of a matrix)."""
    return sum(x) ** 2


def builtin_sum_rows(m):
    return np.sum(sum(m, 1.0) ** 2)
