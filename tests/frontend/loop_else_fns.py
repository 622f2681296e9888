"""Source functions for tests/frontend/test_loop_else.py (loaded by jax_twin too)."""

import numpy as np


def search(x, limit=1.0):
    """`for ... else` left by `break` on a value: the `else` runs when no row passed."""
    s = 0.0
    for row in x:
        if row > limit:
            s = s + 3.0 * row
            break
        s = s + np.sin(row)
    else:
        s = s * 2.0 + np.sum(x * x)
    return s


def no_break(x):
    """`for ... else` with no `break`: the `else` always runs."""
    s = np.sum(x)
    for i in range(3):
        s = s * np.cos(x[i % x.shape[0]])
    else:
        s = s + 1.0
    return s


def countdown(x, n):
    """`while ... else` left by `break` when the value grows past a bound."""
    s = np.sum(x)
    i = 0
    while i < n:
        s = s * 1.5 + np.tanh(s)
        i += 1
        if s > 4.0:
            break
    else:
        s = -s
    return s


def nested(x):
    """an inner `for ... else` in an outer loop; the inner `break` is the inner loop's."""
    total = 0.0
    for i in range(x.shape[0]):
        acc = x[i]
        for j in range(i):
            if x[j] > x[i]:
                break
            acc = acc * x[j]
        else:
            acc = acc + 1.0
        total = total + acc
    else:
        total = total * 2.0
    return total


def returns_in_both(x):
    """`return` in the loop and in its `else`."""
    for row in x:
        if row < 0.0:
            return np.sum(x) * row
    else:
        return np.sum(np.exp(x))


def caller(x):
    """the functions above as callees of another transformed function."""
    return search(x) + 0.5 * countdown(x, 5)


def static_break(x, k):
    """a `break` decided by a static argument (a Python int): JAX's jit runs it too."""
    s = np.sum(x)
    for i in range(4):
        if i == k:
            break
        s = s * np.cos(s)
    else:
        s = s + 10.0
    return s
