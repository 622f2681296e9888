"""A string constant sliced or indexed by a rank, for ``np.einsum`` subscripts
(tests/test_string_slices.py); a twin with ``jax.numpy`` is JAX's oracle."""

import numpy as np

LETTERS = "abcdef"


def sum_of_squares(a):
    s = "ijk"[:a.ndim]
    return np.einsum(s + "->", a**2)


def inner_by_module_letters(a, b):
    s = LETTERS[: np.ndim(a)]
    return np.einsum(s + "," + s + "->", np.sin(a), b)


def last_axis_sum(a):
    s = "ijk"[: a.ndim]
    out = np.einsum(s + "->" + "ijk"[a.ndim - 1], a * a)
    return np.sum(np.tanh(0.1 * out))


def letters_by_count(a, n):
    s = LETTERS[:n]
    return np.sum(np.einsum(s + "->" + s[::-1], a) ** 2)
