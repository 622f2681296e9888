"""Closures with ``nonlocal`` state made inside the transformed function
(s2s/frontend/closure_cells.py), for tests/frontend/test_fnvalues15.py; the same
source runs under JAX (``newcomer_harness.twin``)."""

import numpy as np

SCALE = 1.5  # (read at each call: a test changes it between calls)


def make_counter_loss():
    calls = 0

    def loss(v):
        nonlocal calls
        calls += 1
        return calls * np.sum(v ** 2)

    return loss


def make_acc(scale, start):
    """Two cells, one an array the derivative flows through, and a parameter read."""
    total = start * 1.0
    n = 0

    def acc(v):
        nonlocal total, n
        total = total + scale * v
        n += 1
        return np.sum(total ** 2) / n

    return acc


def make_scaled():
    k = 0

    def step(v):
        nonlocal k
        k = k + 1
        return SCALE * k * np.sum(np.sin(v))

    return step


def two_counters(x):
    a = make_counter_loss()
    b = make_counter_loss()
    return a(x) + b(x) + a(np.cos(x))  # 1, 1, then a's second call: 2


def counter_in_loop(x):
    loss = make_counter_loss()
    s = 0.0
    for i in range(3):
        s = s + loss(x * (i + 1))
    return s


def counter_in_branch(x, flag=True):
    loss = make_counter_loss()
    if flag:
        y = loss(x)
    else:
        y = 0.0
    return y + loss(np.tanh(x))


def array_cell(x):
    acc = make_acc(2.0, x)
    r = acc(np.sin(x))
    return r + acc(x)


def nested_calls(x):
    loss = make_counter_loss()
    return loss(x * loss(x))  # the inner call counts 1, the outer 2


def made_again_in_loop(x):
    s = 0.0
    for _ in range(3):
        loss = make_counter_loss()
        s = s + loss(x) + loss(x)  # each closure counts from 0
    return s


def module_constant_read(x):
    step = make_scaled()
    return step(x) + step(x ** 2)


def make_halves():
    c = 0.0

    def loss(v):
        nonlocal c
        c = c + 0.5
        return c * np.sum(v)

    return loss


def two_factories_one_name(x, flag=True):
    if flag:
        loss = make_counter_loss()
    else:
        loss = make_halves()
    return loss(x)


def called_in_a_target(x):
    loss = make_counter_loss()
    d = {}
    d[loss(x) > 0] = loss(x)  # (Python evaluates the value first)
    return d[True]


def callee_makes_the_closure(x):
    loss = make_halves()
    a = loss(x); b = loss(np.cos(x))  # noqa: E702 - one line, two calls in order
    return a * b


def caller_of_a_maker(x):
    return callee_makes_the_closure(x) + nested_calls(np.sin(x))


LOSS = make_counter_loss()  # a closure made outside the call: its cell outlives it


def module_closure(x):
    return LOSS(x)


def closure_as_value(x):
    loss = make_counter_loss()
    f = loss
    return f(x)


def closure_in_comprehension(x):
    loss = make_counter_loss()
    return sum(loss(x * k) for k in range(3))


# ---- an object of your class built to hold functions (refused, located) ---------------


def relu(v):
    return np.maximum(v, 0.0)


class Stack:
    def __init__(self, layers):
        self.layers = layers

    def __iter__(self):
        return iter(self.layers)

    def __call__(self, h):
        for layer in self:
            h = layer(h)
        return h


class Layer:
    def __init__(self, act, scale=1.0):
        self.act = act
        self.scale = scale * 2.0

    def __call__(self, h):
        return self.scale * self.act(h)


def stack_of_functions(x):
    net = Stack([np.tanh, lambda v: 0.5 * v ** 2, np.sin])
    return np.sum(net(x)) + sum(np.sum(f(x)) for f in net)


def layer_of_function(x):
    return np.sum(Layer(relu, 0.5)(x))


def make_array_adder(start):
    """An array cell written with ``+=``: NumPy adds into the array the cell holds,
    here the caller's own ``start``, which the closure's earlier result also is."""
    total = start

    def add(v):
        nonlocal total
        total += v
        return total

    return add


def array_cell_added_in_place(x):
    add = make_array_adder(x * 1.0)
    first = add(x)
    return np.sum(first * add(np.sin(x)))  # (NumPy: `first` is the array added again)


def make_counter_by(step):
    n = 0

    def count(v):
        nonlocal n
        n += step  # (not a number literal: the cell may become an array)
        return n * np.sum(v)

    return count


def counter_stepped_by_a_value(x):
    count = make_counter_by(x[0])
    return count(x) + count(x)
