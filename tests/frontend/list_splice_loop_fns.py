"""Functions for test_list_splices_in_loops.py: new lists spliced inside loop bodies
from lists grown in loops (their JAX twins run the same source through jax_twin)."""

import numpy as np


def issue_example(x):
    acc = [x[0]]
    for i in range(1, 4):
        t = np.sin(x[i]) * acc[-1]
        acc = [t] + acc
    return sum(v * v for v in acc)


def prepend(x, n):
    acc = [x]
    for i in range(n):
        t = np.sin(x + i) * acc[-1]
        acc = [t] + acc
    return np.sum(np.stack(acc) ** 2, axis=0)


def append_pair(x, n):
    acc = [np.cos(x)]
    for i in range(n):
        t = np.sin(x * i) * acc[-1]
        acc = acc + [t, 2 * t]
    return sum(v * v for v in acc)


def splice_per_iteration(x, n):
    a = [x]
    b = []
    c = [x]
    for i in range(n):
        b.append(np.sin(x) * i)
        a.append(x * c[-1])
        c = a + b
    return np.sum(np.stack(c) ** 2, axis=0)


def copy_by_hand(x, n):
    a = [x]
    b = []
    c = [x]
    for i in range(n):
        b.append(np.sin(x) * c[0])
        a.append(x * i)
        c = []
        for v in a:
            c.append(v)
        for v in b:
            c.append(v)
    return np.sum(np.stack(c) ** 2, axis=0)


def copy_literal_loop(x, n):
    pair = [x, x * x]
    b = []
    c = [x]
    for i in range(n):
        b.append(np.sin(x) * i + c[-1])
        c = list(pair)
        for v in b:
            c.append(v)
    return np.sum(np.stack(c) ** 3, axis=0)


def copy_plus_items(x, n):
    a = [x]
    c = [x]
    for i in range(n):
        a.append(np.tanh(x) * c[-1])
        c = a + [x * i, np.cos(x)]
    return np.sum(np.stack(c) ** 2, axis=0) + np.stack(a)[-1]


def inner_appended(x, n):
    acc = [x]
    for i in range(n):
        row = []
        for j in range(2):
            row.append(x * (i + j) * acc[-1])
        acc = acc + row
    return np.sum(np.stack(acc) ** 2, axis=0)


def inner_prepended(x, n):
    acc = [x]
    for i in range(n):
        row = []
        for j in range(i + 1):
            row.append(np.cos(x) * acc[j])
        acc = row + acc
    return np.sum(np.stack(acc) ** 2, axis=0)


def pairs_per_iteration(x, n):
    a = [(x, np.sin(x))]
    c = []
    for i in range(n):
        a.append((x * i, np.cos(x)))
        c = [(x * x, x)] + a
    total = np.sum(x)
    for u, v in c:
        total = total + np.sum(u * v)
    return total


def spliced_then_grown(x, n):
    acc = [x]
    for i in range(n):
        acc = [np.sin(x) * i] + acc
        acc.append(acc[0] * acc[-1])
    return np.sum(np.stack(acc) ** 2, axis=0)


def tape_of_lists(x, n):
    acc = [x]
    saved = []
    for j in range(n):
        saved.append((acc, x * j))
        acc = [np.sin(x) * j] + acc
    total = np.sum(x)
    for j in range(n):
        a, s = saved.pop()
        total = total + np.sum(np.stack(a) * s)
    return total * np.cos(x)


def rows_of_rows(x, n):
    rows = []
    for i in range(n):
        row = [x]
        for j in range(i):
            row.append(np.cos(x) * j)
        rows.append(row)
    total = np.sum(x)
    for k in range(len(rows)):
        total = total + np.sum(np.stack(rows[k]) ** 2)
    return total
