"""Functions that write into an array in place where another name, view, container or
the caller sees the write (tests/test_jaxalias15.py): NumPy's result is what
``s2s.jit(f, backend="jax")`` must give, or refuse at the write."""

import numpy as np


def dict_item_in_a_list_returned(x):
    state = {"acc": np.zeros_like(x)}
    keep = [state["acc"]]
    state["acc"] += x  # refused
    return keep[0]


def dict_item_read_then_added(x):
    state = {"acc": np.zeros_like(x)}
    a = state["acc"]
    state["acc"] += x  # refused
    return np.sum(a * x)


def second_name_added(x):
    y = x * 1.0
    z = y
    z += 1.0  # refused
    return y


def view_then_added(x):
    y = x * 2.0
    v = y[1:]
    y += 1.0  # refused
    return v


def view_then_item_set(x):
    y = x * 2.0
    v = y[1:]
    y[1] = 9.0
    return v * x[1:]  # refused (the read after the write)


def second_name_item_set(x):
    y = x * 2.0
    z = y
    z[0] = 5.0  # refused
    return y + x


def list_holds_it(x):
    y = x * 1.0
    keep = [y]
    y *= 3.0  # refused
    return keep[0]


def tuple_holds_it(x):
    y = x + 1.0
    t = (y, x)
    y -= x  # refused
    return t[0] * 2.0


def dict_holds_it(x):
    y = x + 0.5
    d = {"a": y}
    y += x  # refused
    return d["a"]


def appended_then_added(x):
    y = x * 1.0
    keep = []
    keep.append(y)
    y += x  # refused
    return keep[0] - x


def second_name_add_at(x):
    y = np.zeros_like(x)
    z = y
    np.add.at(z, np.array([0, 0, 1]), x)  # refused
    return y


def argument_second_name(x):
    y = x
    y += 1.0  # refused
    return x * 2.0


def argument_item_set(x):
    x[0] = 2.0  # refused
    return x * 2.0


def added_in_a_loop(x):
    y = x * 1.0
    v = y
    for _ in range(3):
        y += x  # refused
    return v


def second_name_sorted(x):
    y = x * 1.0
    z = y
    z.sort()  # refused
    return y * x


def argument_added(x):
    x += 1.0
    return x * 2.0


def fresh_writes(x):
    y = x * 1.0
    y += 1.0
    y[0] = 5.0
    np.add.at(y, np.array([1, 1]), x[:2])
    return y * x


class Box:
    def __init__(self, w):
        self.w = w


def attr_added_through_another_name(x):
    b = Box(x * 1.0)
    w = b.w
    b.w += 1.0  # refused
    return w + b.w  # (NumPy: 2 * (x + 1), `w` is the array `b.w` added into)
