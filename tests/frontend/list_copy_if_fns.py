"""Loops that copy the list they grow, pop the copy, and read the old list inside an
`if` (or an `if` in it, or a loop in such an `if`) after the pop, for
tests/frontend/test_list_copies_in_ifs.py.  ``n`` is the loop's count, passed by the
call.  JAX runs the same source (``jax_twin``)."""

import numpy as np


def pop_read_in_if(x, n):
    # (the "Not built yet" row's function)
    parts = [x[0], x[1]]
    for i in range(2, n):
        q = list(parts)
        last = q.pop()
        q.append(last * np.cos(x[i]))
        if i % 2:
            v = parts[-2] * np.sin(x[i])
        else:
            v = x[i] * 1.0
        q.append(v)
        parts = q
    return np.stack(parts) * 2.0


def pop_read_in_nested_if(x, n):
    parts = [x[0], x[1]]
    for i in range(2, n):
        q = list(parts)
        last = q.pop()
        q.append(last * np.cos(x[i]))
        if i % 2:
            if x[i] > 0.6:
                v = parts[-2] * np.sin(x[i])
            else:
                v = parts[-1] * parts[0]
        else:
            v = x[i] * parts[-1]
        q.append(v)
        parts = q
    return np.stack(parts) * 2.0


def pop_read_in_loop_in_if(x, n):
    parts = [x[0], x[1]]
    for i in range(2, n):
        q = list(parts)
        last = q.pop()
        q.append(last * np.cos(x[i]))
        v = x[i] * 1.0
        if i % 2:
            for k in range(2):
                v = v + np.sin(parts[-2]) * (k + 1.0)
        q.append(v)
        parts = q
    return np.stack(parts) * 2.0


def pop_read_in_inner_loop(x, n):
    parts = [x[0], x[1]]
    for i in range(2, n):
        q = list(parts)
        last = q.pop()
        q.append(last * np.cos(x[i]))
        v = x[i] * 1.0
        for k in range(2):
            v = v + np.sin(parts[-2]) * (k + 1.0)
        q.append(v)
        parts = q
    return np.stack(parts) * 2.0


def pop_read_in_else(x, n):
    parts = [x[0] * 1.5, x[1]]
    for i in range(2, n):
        q = parts.copy()
        q.pop()
        if x[i] > 0:
            v = x[i] ** 2
        else:
            v = parts[-1] * parts[-2] + parts[0]
        q.append(v)
        q.append(np.tanh(v))
        parts = q
    return np.stack(parts) * x[0]
