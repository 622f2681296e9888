"""Source functions for tests/frontend/test_unpack_widths.py (loaded by jax_twin too):
unpacking into names items whose width s2s knows when it transforms the call (tuples
appended to a list in a loop, a list literal, a tuple argument, zip's and enumerate's
items). The first group unpacks the wrong number of items, which Python refuses with a
ValueError; the line doing it carries the comment `# unpacks`. The second group is the
same code with the right widths."""

from typing import NamedTuple

import numpy as np


class Scales(NamedTuple):
    w: float
    b: float
    c: float


def grown_triples(x):
    """3-tuples appended in a loop, unpacked into two names (the reported bug)."""
    pts = []
    for i in range(3):
        pts.append((x[i], x[i] * 2, x[i] + 1))
    total = 0.0
    for a, b in pts:  # unpacks
        total = total + a * b
    return total


def grown_singles(x):
    """1-tuples appended in a loop, unpacked into two names: too few."""
    pts = []
    for i in range(3):
        pts.append((x[i],))
    total = 0.0
    for a, b in pts:  # unpacks
        total = total + a * b
    return total


def grown_item(x):
    """one 3-tuple item of a grown list, unpacked into two names."""
    pts = []
    for i in range(3):
        pts.append((x[i], np.sin(x[i]), x[i] + 1))
    a, b = pts[0]  # unpacks
    return a * b


def _product(t):
    a, b = t  # unpacks
    return a * b


def passes_triple(x):
    """a 3-tuple passed to a function that unpacks its argument into two names."""
    return _product((x[0], x[1], x[2]))


def tuple_argument(x, t):
    """a tuple argument (a Python value) of another length than the names."""
    a, b = t  # unpacks
    return np.sum(x * a * b)


def rows_argument(x, rows):
    """a list argument of 3-tuples (Python numbers), looped over with two names."""
    total = 0.0
    for a, b in rows:  # unpacks
        total = total + np.sum(x * a * b)
    return total


def named_tuple_argument(x, p):
    """a NamedTuple argument of three fields unpacked into two names."""
    a, b = p  # unpacks
    return np.sum(x * a * b)


def literal_list_loop(x):
    """a list literal of 3-tuples, looped over with two names."""
    pts = [(x[0], x[1], x[2]), (x[1], x[2], x[0])]
    total = 0.0
    for a, b in pts:  # unpacks
        total = total + a * b
    return total


def literal_in_loop_header(x):
    """the literal written in the loop's header."""
    total = 0.0
    for a, b in [(x[0], x[1], x[2])]:  # unpacks
        total = total + a * b
    return total


def list_literal_assigned(x):
    """a list literal of three items assigned to two names."""
    a, b = [x[0], x[1], x[2]]  # unpacks
    return a * b


def tuple_literal_too_short(x):
    """a tuple literal of one item assigned to two names."""
    a, b = (x[0],)  # unpacks
    return a * b


def starred_too_short(x):
    """one item for two names and a starred one."""
    a, b, *rest = (x[0],)  # unpacks
    return a * b


def zipped_three(x):
    """zip of three sequences unpacked into two names."""
    total = 0.0
    for a, b in zip(x, x * 2, x + 1):  # unpacks
        total = total + a * b
    return total


def enumerated_three_names(x):
    """enumerate's pairs unpacked into three names."""
    total = 0.0
    for i, a, b in enumerate(x):  # unpacks
        total = total + a * b
    return total


def enumerated_zip(x):
    """enumerate(zip(...)) of three sequences, its items unpacked into two names."""
    total = 0.0
    for i, (a, b) in enumerate(zip(x, x * 2, x + 1)):  # unpacks
        total = total + a * b
    return total


def nested_pair(x):
    """pairs whose second item (a pair) is unpacked into three names."""
    pts = []
    for i in range(3):
        pts.append((x[i], (x[i] * 2, x[i] + 1)))
    total = 0.0
    for a, (b, c, d) in pts:  # unpacks
        total = total + a * b
    return total


# the same code with the right widths


def grown_pairs(x):
    pts = []
    for i in range(3):
        pts.append((x[i], x[i] * 2 + np.sin(x[i + 1])))
    total = 0.0
    for a, b in pts:
        total = total + a * b
    return total


def grown_pair_item(x):
    pts = []
    for i in range(3):
        pts.append((x[i], np.sin(x[i + 1])))
    a, b = pts[1]
    return a * b


def passes_pair(x):
    return _product((x[0], np.cos(x[3])))


def pair_argument(x, t=(0.5, -2.0)):
    a, b = t
    return np.sum(x * a * b)


def literal_pairs_loop(x):
    pts = [(x[0], x[1]), (x[2], x[3] * x[0])]
    total = 0.0
    for a, b in pts:
        total = total + a * b
    return total


def zipped_two(x):
    total = 0.0
    for a, b in zip(x, np.tanh(x)):
        total = total + a * b
    return total


def enumerated_zip_two(x):
    total = 0.0
    for i, (a, b) in enumerate(zip(x, np.sin(x))):
        total = total + (i + 1.0) * a * b
    return total


def nested_pairs(x):
    pts = []
    for i in range(3):
        pts.append((x[i], (x[i] * 2, x[i + 1] + 1)))
    total = 0.0
    for a, (b, c) in pts:
        total = total + a * b * c
    return total


def starred_rest(x):
    a, b, *rest = (x[0], x[1], x[2], x[3])
    return a * b + rest[0] * rest[1]
