"""Loops that copy the list they grow (``q = list(parts)``, ``q.append(v)``,
``parts = q``), for tests/frontend/test_list_copies_jacrev.py.  ``n`` is the loop's
count (``range(1, n)``: ``n = 1`` runs no iteration, ``n = 2`` one), passed by the
call, so the loop is not unrolled.  JAX runs the same source (tests/support.py's
``jax_twin``), Python lists as Python does."""

import numpy as np


def issue(x):
    # (the function of the "Not built yet" row, as the issue quotes it)
    parts = [x[0]]
    for i in range(1, 4):
        q = list(parts)
        q.append(np.sin(x[i]) * parts[-1])
        parts = q
    return np.stack(parts) * 2.0


def copy_list(x, n):
    parts = [x[0] * 1.5]
    for i in range(1, n):
        q = list(parts)
        q.append(np.sin(x[i]) * parts[-1] + q[0])
        parts = q
    return np.stack(parts) * 2.0


def copy_method(x, n):
    parts = [x[0]]
    for i in range(1, n):
        q = parts.copy()
        q.append(np.tanh(x[i] * parts[0]) * parts[-1])
        parts = q
    return np.stack(parts) * x[-1]


def copy_slice(x, n):
    parts = [x[0]]
    for i in range(1, n):
        q = parts[:]
        q.append(np.sin(x[i]) * q[-1])
        parts = q
    return np.stack(parts) * 2.0


def copy_starred(x, n):
    parts = [x[0], np.cos(x[1])]
    for i in range(2, n):
        q = [*parts]
        q.append(parts[-1] * parts[-2] + x[i])
        parts = q
    return np.stack(parts) ** 2


def copy_pairs(x, n):
    parts = [(x[0], np.cos(x[0]))]
    for i in range(1, n):
        q = list(parts)
        a, b = parts[-1]
        q.append((np.sin(x[i]) * a, b * x[i]))
        parts = q
    return np.stack([a * b for a, b in parts]) * 2.0


def read_in_if(x, n):
    parts = [x[0]]
    for i in range(1, n):
        q = list(parts)
        if i % 2:
            v = parts[-1] * np.sin(x[i])
        else:
            v = x[i] * parts[0]
        q.append(v)
        parts = q
    return np.stack(parts) * 2.0


def read_in_inner_loop(x, n):
    parts = [x[0]]
    for i in range(1, n):
        q = list(parts)
        v = x[i] * 1.0
        for k in range(2):
            v = v + np.sin(parts[-1]) * (k + 1.0)
        q.append(v)
        parts = q
    return np.stack(parts) * 2.0


def pop_then_read(x, n):
    parts = [x[0], x[1]]
    for i in range(2, n):
        q = list(parts)
        last = q.pop()
        q.append(last * np.cos(x[i]))
        q.append(np.sin(x[i]) * parts[-2])
        parts = q
    return np.stack(parts) * 2.0


def stack_in_loop(x, n):
    parts = [x[0]]
    total = x[0] * 0.0
    for i in range(1, n):
        q = parts.copy()
        total = total + np.sum(np.stack(parts) ** 2)
        q.append(np.tanh(x[i] * parts[0]) * parts[-1])
        parts = q
    return np.stack(parts) * total


def copy_after_loop(x, n):
    parts = [x[0] * 1.0]
    for i in range(1, n):
        parts.append(x[i] ** 2)
    q = list(parts)
    q.append(np.sum(x))
    return np.stack(q) + np.sum(np.stack(parts))


def pop_then_guarded_read(x, n):
    # (the read's cotangent is bound on one path of the `if` only: added there)
    parts = [x[0], x[1]]
    for i in range(2, n):
        q = list(parts)
        last = q.pop()
        q.append(last * np.cos(x[i]))
        m = parts[-2]
        if i % 2:
            v = m * np.sin(x[i])
        else:
            v = x[i] * 1.0
        q.append(v)
        parts = q
    return np.stack(parts) * 2.0
