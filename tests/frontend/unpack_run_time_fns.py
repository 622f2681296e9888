"""Unpacking of values whose length is known only when the function runs
(tests/frontend/test_unpack_run_time.py): an array's slice, a list grown in a loop
unpacked whole, a tuple passed by keyword, an array's rows in a loop, a starred name.
The lines that unpack carry `# unpacks`.  Each runs in JAX on the same source."""

import numpy as np


def slice_of_three(x, n=3):
    a, b = x[:n]  # unpacks
    return a * np.sin(b)


def grown_list_whole(x, n=2):
    pts = []
    for i in range(n):
        pts.append(x[i] * x[i + 1])
    a, b = pts  # unpacks
    return a + 2.0 * b


def pair_by_keyword(x, pair=(0.5, 2.0)):
    p, q = pair  # unpacks
    return np.sum(x * p + q * x**2)


def rows_in_a_loop(x, width=2):
    rows = x[: 2 * width].reshape(2, width)
    total = 0.0
    for a, b in rows:  # unpacks
        total = total + a * np.cos(b)
    return total


def starred_of_a_slice(x, n=3):
    a, *mid, b = x[:n]  # unpacks
    return a * b + np.sum(np.stack(mid + [a]) ** 2)


def whole_array(x):
    a, b, c, d = x  # unpacks
    return a * b - c * np.exp(d)
