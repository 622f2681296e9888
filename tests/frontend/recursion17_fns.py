"""Recursion over the static structure of a nested tuple or list (issue 23): each
recursive call is planned for its item's structure (s2s/frontend/nested_types.py).
``test_recursion17.py`` checks them against JAX on this source (``jax_twin``) and
central differences."""

import numpy as np


def tree_sum(tree):
    if isinstance(tree, list):
        return sum(tree_sum(t) for t in tree)
    return np.sum(tree ** 2)


def nested_list_sum(x):
    nested = [x[:2], [np.tanh(x[1:3]), [x[2:] * 3.0, [np.exp(x[:1])]]], [np.sin(x)]]
    return tree_sum(nested)


def _tmap(f, t):
    return tuple(_tmap(f, u) if isinstance(u, tuple) else f(u) for u in t)


def _tsum(t):
    return sum(_tsum(u) if isinstance(u, tuple) else np.sum(u) for u in t)


def tuple_map_sum(x, s=1.5):
    tree = (x, (np.cos(x[:2]) * s, (np.sin(x), (x[1:],))))
    return _tsum(_tmap(lambda a: s * a ** 2, tree))


def _walk(t):
    if isinstance(t, (tuple, list)):
        return [_walk(u) for u in t]
    return np.tanh(t)


def _total(t, w):
    if isinstance(t, list):
        return sum(_total(u, w * 0.5) for u in t)
    return w * np.sum(t * t)


def mixed_nesting(x):
    tree = [x, (x[::-1], [x[:1] * x[1:2]]), ((np.exp(-x),),)]
    return _total(_walk(tree), 2.0)


def with_tree(x, tree):
    return _tsum((x, tree))


def _deeper(t):
    return _deeper((t,)) if isinstance(t, tuple) else np.sum(t)


def unbounded(x):
    return _deeper((x,))


def loop_carried_tree(x):
    t = x
    s = 0.0
    for k in range(3):
        s = s + _tsum((t, x))
        t = (t, x * 2.0)
    return s


def shape_is_a_tuple(x):
    s = x.shape
    return np.sum(x) * (2.0 if isinstance(s, tuple) else 3.0)
