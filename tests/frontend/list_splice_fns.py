"""Functions for test_list_splices.py: lists grown in loops spliced together (their
JAX twins run the same source through jax_twin)."""

import numpy as np


def grown_plus_grown(x, n):
    a = []
    b = []
    for i in range(n):
        a.append(x * (i + 1.0))
        b.append(np.sin(x) * i)
    return np.sum(np.stack(a + b + [x]) ** 2)


def items_plus_grown(x, n):
    parts = []
    for i in range(n):
        parts.append(np.cos(x) * (i + 0.5))
    return np.sum(np.stack([x, x * x] + parts) ** 2, axis=0)


def extend_by_grown(x, n):
    parts = [x]
    more = []
    for i in range(n):
        more.append(np.sin(x * i))
    parts += more
    parts.extend(more)
    parts = parts + more
    return np.sum(np.stack(parts) * np.cos(x), axis=0)


def splice_in_loop(x, n):
    more = []
    for i in range(n):
        more.append(x * (i + 1.0))
    acc = [np.tanh(x)]
    for j in range(n):
        acc = acc + more
        acc.extend(more)
    return np.sum(np.stack(acc) ** 2)


def prepend_in_loop(x, n):
    acc = [x]
    for i in range(n):
        acc.append(x * i)
    for j in range(2):
        acc = [np.tanh(x) * j] + acc
    return np.sum(np.stack(acc) ** 2)


def nested_splice(x, n):
    acc = [x]
    for i in range(n):
        row = []
        for j in range(2):
            row.append(x * (i + j))
        acc = acc + row
    return np.sum(np.stack(acc) ** 2)


def extend_by_itself(x, n):
    parts = [x]
    for i in range(n):
        parts.append(x * i)
    parts.extend(parts)
    parts += parts
    return np.sum(np.stack(parts) ** 3)


def spliced_then_grown(x, n):
    a = []
    for i in range(n):
        a.append(x * i)
    b = [x] + a
    c = a + b
    for i in range(n):
        c.append(np.sin(x) * c[-1])
    return np.sum(np.stack(c) ** 2) + np.sum(np.stack(a + [x]))


def splice_keeps_operands(x, n):
    a = [x]
    b = []
    for i in range(n):
        a.append(x * i)
        b.append(np.cos(x) + i)
    c = a + b
    d = [x * x] + b
    return np.stack(c), np.stack(a), np.stack(b + d)


def splice_per_iteration(x, n):
    a = [x]
    b = []
    c = [x]
    for i in range(n):
        b.append(np.sin(x) * i)
        c = a + b
    return np.sum(np.stack(c) ** 2)


def rebuilt_per_iteration(x, n):
    acc = [x * (n + 1.0)]
    for j in range(3):  # (a constant count: main unrolled `for item in acc` by the literal)
        joined = [np.tanh(x) * j]
        for item in acc:
            joined.append(item)
        acc = joined
    return np.sum(np.stack(acc) ** 2)


def pairs_spliced(x, n):
    a = []
    b = []
    for i in range(n):
        a.append((x * i, np.sin(x)))
        b.append((np.cos(x), x * x * i))
    c = a + b
    total = np.sum(x)
    for u, v in c:
        total = total + np.sum(u * v)
    for u, v in b + a:  # (the splice inside the expression)
        total = total + np.sum(u * np.cos(v))
    return total


def prepend_then_grown(x, n):
    parts = []
    for i in range(n):
        parts.append(x * (i + 1.0))
    parts = [np.sin(x)] + parts
    parts.append(x**3)
    return np.sum(np.stack(parts) ** 2, axis=0)
