"""Functions for test_list_fronts.py: lists changed at their front or in their middle
(``insert``, ``[g] + out``, ``del parts[0]``, ``del parts[1:3]``, ``pop(0)``), a
comprehension over a list a loop filled, and ``zip(*pts)``.  Their JAX twins run the
same source through jax_twin."""

import numpy as np

# ---- built front-first in a loop ---------------------------------------------------


def insert_front(x, n):
    out = []
    for i in range(n):
        g = np.sin(x) * (i + 1.0)
        out.insert(0, g)
    return np.sum(np.stack(out + [x]) ** 2 * np.cos(x))


def plus_front(x, n):
    out = []
    for i in range(n):
        g = np.sin(x) * (i + 1.0) + x
        out = [g] + out
    total = np.sum(x)
    for k, v in enumerate(out):
        total = total + np.sum(v * v) * (k + 1)
    return total


def insert_front_reads(x, n):
    out = [x]
    for i in range(n):
        out.insert(0, np.sin(out[0]) * (i + 2.0))
    return np.sum(np.cumsum(np.stack(out), axis=0) ** 2)


def insert_front_unrolled(x):
    out = []
    for i in range(3):
        out.insert(0, np.tanh(x) * (i + 1.0))
    return np.sum(np.stack(out) * x)


def insert_middle(x, n):
    out = [x, 2.0 * x]
    for i in range(n):
        out.append(np.cos(x) * i)
    out.insert(1, x**3)
    out.insert(-1, np.sin(x))
    return np.sum(np.cumsum(np.stack(out), axis=0) ** 2)


def insert_literal(x):
    parts = [x, x**2]
    parts.insert(1, np.sin(x))
    parts.insert(-1, 3.0 * x)
    parts.insert(10, np.cos(x))
    parts.insert(-10, x * x * x)
    return np.sum(np.cumsum(np.stack(parts), axis=0) ** 2)


# ---- del and pop at any position ---------------------------------------------------


def del_first(x):
    parts = [x, x * 2.0, x**2]
    del parts[0]
    return np.sum(parts[0] * parts[1])


def del_static_i(x):
    parts = [x, x * 2.0, x**2, np.sin(x)]
    i = 2
    del parts[i]
    del parts[-2]
    return np.sum(np.stack(parts) ** 2 * x)


def del_slice(x):
    parts = [x, x * 2.0, x**2, np.sin(x), np.cos(x)]
    del parts[1:3]
    del parts[::2]
    return np.sum(np.stack(parts) ** 2) + np.sum(parts[0] * x)


def pop_first(x):
    parts = [x, x * 2.0, x**2]
    first = parts.pop(0)
    second = parts.pop(1)
    return np.sum(first * parts[0] + second)


def pop_value(x):
    parts = [x, np.sin(x), x**2]
    last = parts.pop()
    return np.sum(last * parts[-1] * parts.pop(-1))


def del_grown_first(x, n):
    parts = [x]
    for i in range(n):
        parts.append(np.sin(x) * (i + 1.0))
    del parts[0]
    return np.sum(np.stack(parts + [x]) ** 2)


def del_grown_slice(x, n):
    parts = [np.cos(x)]
    for i in range(n):
        parts.append(x * (i + 1.0))
    del parts[1:3]
    return np.sum(np.cumsum(np.stack(parts), axis=0) ** 2)


def pop_grown_first(x, n):
    parts = [x]
    for i in range(n):
        parts.append(np.sin(x) * (i + 1.0))
    head = parts.pop(0)
    total = np.sum(head * x)
    for v in parts:
        total = total + np.sum(v * head)
    return total


def del_then_grow(x, n):
    parts = [x, np.cos(x)]
    for i in range(n):
        parts.append(np.sin(x) * i)
    del parts[1]
    parts.append(x**2)
    return np.sum(np.cumsum(np.stack(parts), axis=0) ** 2)


def pop_front_queue(x, n):
    todo = [x]
    for i in range(n):
        todo.append(np.sin(x) * (i + 1.0))
    total = np.sum(x)
    for i in range((len(todo) + 1) // 2):
        v = todo.pop(0)
        total = total + np.sum(v * v) * (i + 1)
    for v in todo:
        total = total + np.sum(v * x)
    return total


def insert_then_append(x, n):
    out = []
    for i in range(n):
        out.insert(0, x * (i + 1.0))
        out.append(np.cos(x) * i)
    return np.sum(np.cumsum(np.stack(out + [x]), axis=0) ** 2)


# ---- comprehensions over lists a loop filled ---------------------------------------


def squares_unrolled(x):
    out = []
    for i in range(3):
        out.append(np.sin(x) * (i + 1.0))
    return np.sum(np.stack([o**2 for o in out]))


def squares_grown(x, n):
    out = []
    for i in range(n):
        out.append(np.sin(x) * (i + 1.0) + x)
    return np.sum(np.stack([o**2 for o in out] + [x]) * x)


# ---- refused, located ---------------------------------------------------------------


def del_shared(x):
    parts = [x, x * 2.0]
    other = parts
    del parts[0]
    return np.sum(other[0])


def del_stored(x):
    parts = [x, x * 2.0]
    saved = (parts, x)
    del parts[0]
    return np.sum(saved[0][0])


def del_at_argument(x, k):
    parts = [x, x * 2.0]
    del parts[k]
    return np.sum(parts[0])


def del_grown_step(x, n):
    parts = [x]
    for i in range(n):
        parts.append(x * i)
    del parts[::2]
    return np.sum(np.stack(parts))


def pop_out_of_range(x):
    parts = [x, x * 2.0]
    v = parts.pop(2)
    return np.sum(v)


def del_grown_out_of_range(x, n):
    parts = []
    for i in range(n):
        parts.append(x * i)
    del parts[0]
    return np.sum(x) + len(parts)


def zip_star_argument(pts):
    xs, ys = zip(*pts)
    return np.sum(np.stack(xs) * np.stack(ys))


def zip_star_grown(x, n):
    pts = [(np.cos(x), x * x)]
    for i in range(n):
        pts.append((x * i, np.sin(x)))
    xs, ys = zip(*pts)
    return np.sum(np.stack(xs) * np.stack(ys))


def sliding_window(x, n):
    parts = [x, np.cos(x)]
    for i in range(n):
        parts.append(np.sin(parts[-1]) * (i + 1.0))
        del parts[0]
    return np.sum(np.stack(parts) ** 2)


def zip_star_empty(x, n):
    pts = []
    for i in range(n):
        pts.append((x * i, np.sin(x)))
    xs, ys = zip(*pts)
    return np.sum(np.stack(xs) * np.stack(ys))


def zip_wrong_width(x, n):
    pts = [(x, x, x)]
    for i in range(n):
        pts.append((x * i, np.sin(x), x))
    xs, ys = zip(*pts)
    return np.sum(np.stack(xs) * np.stack(ys))
