"""Functions the frontend refuses for a reason of their own (an ``import`` inside, a
``try``, a ``class`` inside) that write into an array in place where another name,
view, container, callee or the caller sees the write (tests/test_jaxjit16.py).
``s2s.jit(f, backend="jax")`` runs such a function's text as written, where JAX's
``+=`` rebinds the written name alone: each must give NumPy's number or be refused
at the line marked ``# refused``.  Those after ``# ---- unshared`` write only arrays
no other name sees, and must run on JAX with NumPy's number."""

from functools import partial

import numpy as np


class Box:
    def __init__(self, w):
        self.w = w


class Acc:
    def __init__(self, v):
        self.v = v

    def add(self, d):
        self.v += d  # refused


def bump(a):
    a += 1.0  # refused


def set_first(a):
    a[0] = 9.0  # refused


def second_name_added(x):
    import math

    y = x * math.pi
    z = y
    z += 1.0  # refused
    return y


def view_slice_added(x):
    import math

    y = x * math.e
    v = y[1:]
    y += 1.0  # refused
    return v


def transposed_view_scaled(x):
    try:
        y = x.reshape(3, 1) * 1.0
    except ValueError:
        y = x * 0.0
    t = y.T
    y *= 2.0  # refused
    return t


def reshaped_view_subtracted(x):
    import math

    y = x * math.sqrt(2.0)
    r = y.reshape(3, 1)
    y -= x  # refused
    return r


def item_set_through_second_name(x):
    import math

    y = x * math.pi
    z = y
    z[0] = 5.0  # refused
    return y + x


def ellipsis_added_through_second_name(x):
    import math

    y = x * math.pi
    z = y
    z[...] += x  # refused
    return y


def list_holds_it(x):
    class Unused:
        pass

    y = x * 1.0
    keep = [y]
    y *= 3.0  # refused
    return keep[0]


def dict_holds_it(x):
    import math

    y = x + math.pi
    d = {"a": y}
    y += x  # refused
    return d["a"]


def dict_item_read_then_added(x):
    import math

    state = {"acc": np.zeros_like(x) + math.pi}
    a = state["acc"]
    state["acc"] += x  # refused
    return a * 1.0


def attribute_added_through_another_name(x):
    import math

    b = Box(x * math.pi)
    w = b.w
    b.w += 1.0  # refused
    return w + b.w


def callee_adds_into_its_parameter(x):
    import math

    y = x * math.pi
    bump(y)
    return y


def callee_sets_an_item_of_its_parameter(x):
    import math

    y = x * math.pi
    set_first(y)
    return y


def method_adds_into_a_field(x):
    import math

    a = Acc(x * math.pi)
    keep = a.v
    a.add(x)
    return keep


def added_in_a_loop_under_an_if(x):
    import math

    y = x * math.pi
    v = y
    for i in range(3):
        if i > 0:
            y += x  # refused
    return v


def add_at_through_second_name(x):
    import math

    y = np.zeros_like(x) * math.pi
    z = y
    np.add.at(z, np.array([0, 0, 1]), x)  # refused
    return y


def out_keyword_through_second_name(x):
    import math

    y = x * math.pi
    z = y
    np.add(z, x, out=z)  # refused
    return y


def sorted_in_place(x):
    import math

    y = x * math.pi
    y.sort()  # refused
    return y


def filled_through_second_name(x):
    import math

    y = x * math.pi
    z = y
    z.fill(2.0)  # refused
    return y


def argument_view_then_added(x):
    import math

    v = x[:2]
    x += math.pi  # refused
    return v


def walrus_second_name(x):
    import math

    y = x * math.pi
    if (z := y) is not None:
        z += 1.0  # refused
    return y


def unpacked_second_name(x):
    import math

    y = x * math.pi
    a, b = y, x
    a += 1.0  # refused
    return y + b


def rows_added_in_a_for_loop(x):
    import math

    m = np.outer(x, x) * math.pi
    for r in m:
        r += 1.0  # refused
    return m


def list_items_one_array(x):
    import math

    y = x * math.pi
    ys = [y, y]
    ys[0] += 1.0  # refused
    return ys[1]


def slice_added_through_view(x):
    import math

    y = x * math.pi
    v = y[:]
    v[0:2] += 1.0  # refused
    return y


def ident(a):
    return a


def bump_by(a, k):
    a += k  # refused


BUMP = partial(bump_by, k=1.0)


def tuple_holds_it(x):
    import math

    y = x * math.pi
    t = (y,)
    y += 1.0  # refused
    return t[0]


def identity_callee_second_name(x):
    import math

    y = x * math.pi
    z = ident(y)
    z += 1.0  # refused
    return y


def dict_call_holds_it(x):
    import math

    y = x * math.pi
    d = dict(a=y)
    y += 1.0  # refused
    return d["a"]


def asarray_second_name(x):
    import math

    y = x * math.pi
    z = np.asarray(y)
    z += 1.0  # refused
    return y


def view_method_then_added(x):
    import math

    y = x * math.pi
    v = y.view()
    y += 1.0  # refused
    return v


def default_array_added(x, acc=np.zeros(3)):
    import math

    acc += x  # refused
    return acc * math.pi


def nested_function_adds_into_its_parameter(x):
    import math

    def g(a):
        a += 1.0  # refused

    y = x * math.pi
    g(y)
    return y


def lambda_sorts(x):
    import math

    srt = lambda a: a.sort()  # refused
    y = x * math.pi
    srt(y)
    return y


def row_of_a_matrix_added(x):
    import math

    y = np.zeros((3, 3)) + math.pi
    r = y[0]
    r += x  # refused
    return y


def array_without_copy_added(x):
    import math

    y = x * math.pi
    z = np.array(y, copy=False)
    z += 1.0  # refused
    return y


def list_copy_item_added(x):
    import math

    a = [x * math.pi]
    b = a.copy()
    b[0] += 1.0  # refused
    return a[0]


def partial_callee_adds(x):
    import math

    y = x * math.pi
    BUMP(y)
    return y


def out_keyword_into_a_new_array(x):
    import math

    y = np.zeros_like(x)
    np.multiply(x, math.pi, out=y)  # refused
    return y


def operator_iadd_through_second_name(x):
    import math
    import operator

    y = x * math.pi
    z = y
    operator.iadd(z, 1.0)  # refused
    return y


def chained_assignment_added(x):
    import math

    a = b = x * math.pi
    a += 1.0  # refused
    return b


def list_extended_by_augmented_assignment(x):
    import math

    y = x * math.pi
    keep = []
    keep += [y]
    y += 1.0  # refused
    return keep[0]


def array_copy_none_added(x):
    import math

    y = x * math.pi
    z = np.array(y, copy=None)
    z += 1.0  # refused
    return y


def median_overwrites_its_input(x):
    import math

    y = x * math.pi
    m = np.median(y, overwrite_input=True)  # refused
    return y * m


# ---- unshared: these run on JAX


def fresh_added(x):
    import math

    y = x * math.pi
    y += 1.0
    y[0] = 5.0
    return y * x


def counted(x):
    import math

    n = 0
    for i in range(3):
        n += 1
    return x * n * math.pi


def dict_built(x):
    class Unused:
        pass

    out = {}
    out["a"] = x * 2.0
    out["b"] = x + 1.0
    return out["a"] * out["b"]


def no_writes(x):
    import math

    return np.sin(x) * math.e


def accumulated(x):
    import math

    acc = np.zeros_like(x)
    for i in range(3):
        acc += x * i * math.pi
    return acc


def item_added_in_a_loop(x):
    import math

    y = x * math.pi
    for i in range(2):
        y[i] += x[i]
    return y * 2.0


def nested_list_item_added(x):
    import math

    m = [[x * math.pi]]
    m[0][0] += 1.0
    return m[0][0]


def rows_summed(x):
    import math

    acc = np.zeros(3)
    for r in np.outer(x, x):
        acc += r * math.pi
    return acc


def copied_then_added(x):
    import math

    y = x * math.pi
    z = y.copy()
    z += 1.0
    return y + z


def stacked(x):
    import math

    parts = []
    for i in range(3):
        parts.append(x * i * math.pi)
    return np.stack(parts)


def total_in_a_try(x):
    total = 0.0
    try:
        for i in range(3):
            total += np.sum(x) * i
    except ValueError:
        total = -1.0
    return x * total


def list_sorted(x):
    import math

    ks = [3, 1, 2]
    ks.sort()
    return x * ks[0] * math.pi


# ---- reached only while JAX traces (test_jaxjit16's own calls, not the tables)


class Stepper:  # (a registered pytree class: test_jaxjit16 registers it)
    def __init__(self, w):
        self.w = w

    def step(self, v):
        v += self.w  # refused


def static_callable_adds(x, g):
    import math

    y = x * math.pi
    g(y)
    return y


def argument_method_adds(x, m):
    import math

    y = x * math.pi
    m.step(y)
    return y
