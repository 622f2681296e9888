"""User functions for tests/test_closure.py: the constructs s2s's own emitted
gradients use, written by hand (calls into another module, writes into arrays,
``np.add.at``, reversed loops, tapes of tuples, names bound on one path of an ``if``).

In-place code cannot run under JAX; those functions are checked against finite
differences, or an oracle written in jax.numpy in the test.
"""

import numpy as np

import closure_fns_other as other
from closure_fns_other import layer

SCALE = other.SCALE  # the very same object as other.SCALE
OFFSET = 0.75  # a different object from other.OFFSET
W4 = np.array([0.5, -1.0, 2.0, 0.3])


# ---- 1: free names shared with a called function in another module ---------------------


def calls_other_module(x, w):
    # `np` and `SCALE` are read here and, from closure_fns_other's namespace, in layer
    return np.sum(layer(x, w) * SCALE)


def reads_a_different_offset(x, w):
    return np.sum(layer(x, w) * OFFSET)


def reads_other_offset(x, w):
    return np.sum(layer(x, w) * other.OFFSET)


# ---- 2: writes into arrays, and values that share their memory ---------------------------


def view_read_before_write(x):
    y = x * 1.0
    head = y[:2]
    s = np.sum(head * x[:2])  # read before the write: the values it was bound to
    y[0] = 5.0
    return s + np.sum(y * x)


def shape_read_after_write(x):
    y = np.zeros(3)
    tail = y[1:]
    y[1:] = np.sin(x[1:])
    pad = np.zeros_like(tail)  # only tail's shape is read after the write
    return np.sum(y * x) + np.sum(pad) + np.shape(tail)[0] * np.sum(x)


def save_and_restore(x):
    z = x * 2.0
    kept = np.copy(z[0])
    z[0] = np.sin(x[1])
    w = np.sum(z * x)
    z[0] = kept
    return w + np.sum(z**2)


def element_copied_before_write(x):
    h = np.zeros((3, 2))
    h[0] = x[:2]
    for t in range(2):
        row = np.copy(h[t])
        h[t + 1] = np.tanh(row * x[2] + 0.1)
        h[t] = row * 0.5  # written again after it was read
    return np.sum(h**2)


def list_of_rows(x):
    rows = list(x)
    rows.append(np.sin(x[0]))
    return np.sum(np.stack(rows) ** 2)


# ---- 3: np.add.at -------------------------------------------------------------------------


def scatter_add(x):
    buf = np.zeros(4)
    idx = np.array([0, 2, 2, 3])
    np.add.at(buf, idx, np.sin(x))
    return np.sum(buf**2 * W4)


def scatter_add_read_around(x):
    buf = x[:4] * 1.0
    before = np.sum(buf * x[:4])  # the backward reads buf as it was here
    np.add.at(buf, np.array([1, 1, 3]), x[1:4] ** 2)
    return before + np.sum(np.cos(buf))


def scatter_add_slices(m, v):
    buf = np.zeros((3, 4))
    np.add.at(buf, np.s_[1:, np.array([0, 2, 2])], v)
    np.add.at(buf, (0, 1), m[0, 0] * 3.0)
    return np.sum(np.sin(buf + m))


def scatter_add_in_loop(x):
    acc = np.zeros(3)
    for i in range(len(x)):
        np.add.at(acc, i % 3, x[i] * acc[i % 3] + x[i])
    return np.sum(acc**2)


# ---- 4: loops walking a range backwards -----------------------------------------------------


def reversed_loop(x, n):
    acc = x
    for i in reversed(range(n)):
        acc = np.sin(acc) * (i + 1.0)
    return np.sum(acc)


def reversed_start_stop_step(x):
    acc = x
    for i in reversed(range(1, 7, 2)):
        acc = acc * np.cos(acc + i)
    return np.sum(acc)


def reversed_over_rows(x):
    h = x[0] * 0.0
    for i in reversed(range(len(x))):
        h = np.tanh(h * 0.9 + x[i])
    return np.sum(h**2)


def reversed_over_array(x):
    h = x[0] * 0.0
    for row in reversed(x):
        h = np.tanh(h * 0.9 + row)
    return np.sum(h**2)


def reversed_with_break(x):
    acc = x
    for i in reversed(range(5)):
        acc = np.sin(acc) + 0.5
        if np.sum(acc) > 2.5:
            break
    return np.sum(acc * acc)


# ---- 5: tapes: lists of tuples pushed in one loop, popped in another ------------------------


def push_then_pop(x, n):
    tape = []
    y = x
    for i in range(n):
        tape.append((y, np.sin(y)))
        y = np.sin(y) * 1.5
    total = 0.0
    for i in range(n):
        a, b = tape.pop()
        total = total + np.sum(a * b)
    return total


def pop_one_element_tuples(x, n):
    tape = []
    for i in range(n):
        tape.append((x * i,))
    total = 0.0
    while len(tape) > 0:
        (a,) = tape.pop()
        total = total + np.sum(a)
    return total


def pop_discarded(x):
    tape = [x, x * 2.0]
    tape.pop()
    return np.sum(np.stack(tape))


# ---- names an `if` binds on one path, read in a later `if` on that path ---------------------


def two_ifs(x):
    s = np.sum(x)
    if s > 0.0:
        y = np.sin(x) * s
    z = x * 2.0
    if s > 0.0:
        out = np.sum(y * z)
    else:
        out = np.sum(z**2)
    return out


def two_ifs_negated(x):
    s = np.sum(x)
    big = s > 0.0
    if big:
        y = np.sin(x) * s
    else:
        w = np.cos(x)
    if not big:
        out = np.sum(w * x)
    else:
        out = np.sum(y * x)
    return out


def nested_paths(x):
    s = np.sum(x)
    if s > 1.0:
        a = np.exp(x)
    elif s > -1.0:
        b = x**3
    else:
        c = -x
    if s > 1.0:
        out = np.sum(a)
    elif s > -1.0:
        out = np.sum(b * x)
    else:
        out = np.sum(c * c)
    return out


def paths_in_loop(x, n):
    acc = 0.0
    for i in range(n):
        even = i % 2 == 0
        if even:
            y = np.sin(x) * (i + 1.0)
        if even:
            acc = acc + np.sum(y * x)
        else:
            acc = acc + np.sum(x) * 0.5
    return acc


def pair_on_one_path(x):
    s = np.sum(x)
    if s > 0.0:
        pair = (np.sin(x), x * 2.0)
    if s > 0.0:
        out = np.sum(pair[0] * pair[1])
    else:
        out = np.sum(x**2)
    return out


# ---- recurrences written in place: their gradients keep views on the tape ------------------


def recurrence_added_input(x):
    h = np.zeros((x.shape[0] + 1, x.shape[1]))
    for t in range(x.shape[0]):
        h[t + 1] = np.tanh(h[t] + x[t])  # the backward reads only h[t]'s shape
    return np.sum(h**2)


def recurrence_scaled_state(x, w):
    h = np.zeros((x.shape[0] + 1, x.shape[1]))
    h[0] = x[0]
    for t in range(x.shape[0]):
        h[t + 1] = np.tanh(h[t] * w + x[t])  # the backward reads h[t]'s values
    return np.sum(h**2)


def fill_rows(x):
    """Rows written in a loop, each from the row before (a view of y the tape keeps)."""
    y = np.ones((3, 4))
    for i in range(3):
        y[i] = np.sin(x[i]) * y[i - 1]
    return np.sum(y * y)
