"""Source functions for tests/frontend/test_grown_lists.py (loaded by jax_twin too)."""

import numpy as np


def reads_grown(x, n=3):
    """each item made from the last; another item read after the loop."""
    parts = [x]
    for i in range(n):
        parts.append(np.tanh(parts[-1]) * 2.0 + x)
    return np.sum(parts[-1] * parts[1])


def reads_in_while(x):
    """a `while` loop whose body reads the list it grows."""
    hs = [x]
    k = 0
    while k < 4:
        hs.append(np.sin(hs[-1]) + 0.5 * hs[0])
        k = k + 1
    return np.sum(hs[-1]) + np.sum(hs[2])


def reads_length(x):
    """the body reads the list's length (as the list is grown so far)."""
    parts = [x]
    for i in range(3):
        parts.append(parts[-1] * len(parts))
    return np.sum(parts[-1])


def reads_grown_traced_count(x, n):
    """the loop's count is an argument JAX traces under s2s.jit(backend="jax")."""
    parts = [x]
    for i in range(n):
        parts.append(np.tanh(parts[-1]) * 2.0 + x)
    return np.sum(parts[-1])
