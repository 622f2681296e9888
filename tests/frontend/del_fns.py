"""Source functions for tests/frontend/test_del.py (loaded by jax_twin too)."""

import numpy as np


def drops_a_temporary(x):
    """`del` of a temporary; the name bound again after it is a new value."""
    t = np.sin(x)
    s = np.sum(t * x)
    del t
    t = np.cos(x) * s
    return np.sum(t)


def drops_several(x, w=2.0):
    a, b = x * w, np.exp(x)
    c = np.sum(a * b)
    del a, b
    return c * c


def drops_a_parameter(x):
    y = x * 3.0
    del x
    return np.sum(np.tanh(y))


def drops_on_one_path(x, flag):
    t = x * x
    if flag:
        del t
        t = np.sin(x)
    return np.sum(t)


def drops_in_a_loop(x):
    """a value the loop's body bound, deleted in the body."""
    s = 0.0
    for i in range(x.shape[0]):
        tmp = x[i] * s + 1.0
        s = s + np.tanh(tmp)
        del tmp
    return s


def caller(x):
    return drops_a_temporary(x) + drops_in_a_loop(x)


# refused: a read after `del`, a `del` of an item, a `del` in a loop of a name bound
# before it, a `del` of a name not bound


def reads_after_del(x):
    t = x * 2.0
    del t
    return np.sum(t)  # noqa: F821 (refused: read after del)


def reads_after_del_on_a_path(x, flag):
    t = x * 2.0
    if flag:
        del t
    return np.sum(t)


def deletes_an_item(x):
    d = {"a": x, "b": x * 2.0}
    del d["b"]
    return np.sum(d["a"])


def deletes_in_a_loop(x):
    t = x * 2.0
    for i in range(3):
        del t
    return np.sum(x)


def deletes_twice(x):
    t = x * 2.0
    del t
    del t  # noqa: F821 (refused: deleted twice)
    return np.sum(x)
