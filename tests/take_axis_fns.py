"""``np.take`` along an axis with one position, a list of positions and a 2-D array of
positions (tests/test_take_axis.py: the gradient's scatter puts each position's
cotangent back on the right axis)."""

import numpy as np

W3 = np.arange(9.0).reshape(3, 3) / 9.0 - 0.4


def one_position_square(a):  # a (3, 3, 3): the result (3, 3) of a square, transposable
    return np.sum(np.take(a, 1, axis=1) * W3)


def one_position_last(a):
    return np.sum(np.sin(np.take(a, -1, axis=-1)) * W3)


def positions_middle(a):  # repeated and negative positions
    return np.sum(np.take(a, np.array([2, 0, -1, 2]), axis=1) ** 2)


def grid_last(a):  # a 2-D array of positions on the last axis
    return np.sum(np.take(a, np.array([[2, 0], [2, -1]]), axis=-1) * np.arange(3.0)[:, None, None, None])


def grid_first(a):
    return np.sum(np.cos(np.take(a, np.array([[0, 2], [1, 1]]), axis=0)))
