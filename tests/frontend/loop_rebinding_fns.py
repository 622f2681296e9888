"""Source functions for tests/frontend/test_loop_rebinding.py (loaded by jax_twin too):
a function name bound more than once in a loop body, or in a branch of it, or in a
body with `break`/`continue`, read before its binding or after the loop (issue 23)."""

import numpy as np


def twice_after(x, n):
    """two bindings at the body's top level; the last one's function after the loop."""
    y = x
    for k in range(n):
        f = np.sin
        y = f(y) + 0.1 * x
        f = np.cos
    return np.sum(f(y) * x)


def branch_after(x, n):
    """a binding per branch of an `if` on the loop index; tanh if the loop never ran."""
    f = np.tanh
    y = x
    for k in range(n):
        if k % 2 == 0:
            f = np.sin
        else:
            f = np.cos
        y = f(y) * x
    return np.sum(f(y))


def value_branch(x, n):
    """a branch on a value binds a lambda reading the body's value `w` (as the last
    iteration left it, after the loop), the other a module function; called before
    the binding (the previous iteration's) and after the loop."""
    f = np.sin
    y = x
    w = x
    for k in range(n):
        y = f(y) + 0.5 * x
        w = np.cos(y) * (1.0 + k)
        if np.sum(y) > 1.0:
            f = lambda v: np.tanh(v * w)  # noqa: E731
        else:
            f = np.exp
        y = 0.5 * f(y)
    return np.sum(f(x) * y)


def two_defs(x, n):
    """two nested defs of one name, each reading loop values; read before each."""

    def g(v):
        return v * 1.5

    y = x
    for k in range(n):
        y = g(y)
        s = np.sum(y)

        def g(v):
            return np.sin(v) * s

        y = y + g(x)

        def g(v):
            return np.cos(v + k)

    return np.sum(g(y) * x)


def with_break(x, n):
    """the body leaves by `break` after rebinding."""
    f = np.sin
    y = x
    for k in range(n):
        y = f(y) + x
        f = np.cos
        if k == 2:
            break
        f = np.tanh
    return np.sum(f(y) * x)


def with_continue(x, n):
    """`continue` skips the second binding on odd iterations."""
    f = np.sin
    y = x
    for k in range(n):
        y = f(y) * 0.9 + x
        f = np.cos
        if k % 2 == 1:
            continue
        f = np.tanh
    return np.sum(f(y))


def in_while(x, n):
    """a `while` binding in a branch on a value."""
    f = np.sin
    y = x
    i = 0
    while i < n:
        if np.sum(y) > 0.5:
            f = np.tanh
        else:
            f = np.cos
        y = f(y) + 0.2 * x
        i = i + 1
    return np.sum(f(y))


def nothing_before(x, n):
    """no function before the loop: after a loop that ran none of the bindings, the
    read is Python's UnboundLocalError (s2s.UnboundFunctionError) at the user's line."""
    y = x
    for k in range(n):
        if k % 2 == 0:
            f = np.sin
        else:
            f = np.cos
        y = f(y) + x
    return np.sum(f(y))


def caller(x, n):
    return twice_after(x, n) + value_branch(x, n) + with_break(x, n)


# refused


def bound_in_a_nested_loop(x, n):
    f = np.sin
    y = x
    for k in range(n):
        y = f(y)
        for j in range(2):
            f = np.cos
    return np.sum(f(y))
