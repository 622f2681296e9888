"""Python's arithmetic operators on tuples and lists (issue 23): ``xs / 2.0``, ``1.0 -
xs``, ``xs ** 2``, ``-xs`` raise a TypeError in Python, where NumPy's functions
(``np.divide(xs, 2.0)``) and an array operand (``xs / y``) convert the list.
test_list_operators.py: the refusals located where Python raises, the conversions
against JAX on the ``*_stacked`` twins."""

import numpy as np

# -- Python raises: each refused at the line and column of Python's own TypeError --


def div_arg(xs):
    return np.sum(xs / 2.0)


def rsub_arg(xs):
    return np.sum(1.0 - xs)


def pow_arg(xs):
    return np.sum(xs**2)


def floordiv_arg(xs):
    return np.sum(xs // 2.0)


def mod_arg(xs):
    return np.sum(xs % 2)


def neg_arg(xs):
    return np.sum(np.sin(-xs))


def lists_sub(xs):
    return np.sum(xs - list(xs))


def literal_div(xs):
    ys = [xs[0], 2.0 * xs[1]]
    return np.sum(ys / 2.0)


def grown_sub(xs):
    ys = []
    for v in xs:
        ys.append(np.sin(v))
    return np.sum(ys - 1.0)


def _halved(xs):
    return np.sum(xs / 2.0)


def callee_div(xs):
    return _halved(xs) + 1.0


def in_loop(xs):
    t = 0.0
    for v in xs:
        t = t + v * np.sum(xs - 1.0)
    return t


def augmented(xs):
    xs -= 1.0
    return np.sum(xs)


def maybe_number(xs, s=2.0):
    return np.sum(xs / s)


# -- NumPy converts: computed as NumPy does --


def ufuncs_list(xs, y):
    return np.sum(np.divide(xs, 2.0) + np.subtract(1.0, xs) * y + np.negative(xs)
                  + np.power(xs, 3) + np.remainder(xs, 2.0))


def ufuncs_stacked(xs, y):
    v = np.stack(xs)
    return np.sum(np.divide(v, 2.0) + np.subtract(1.0, v) * y + np.negative(v)
                  + np.power(v, 3) + np.remainder(v, 2.0))


def met_by_array_list(xs, y):
    return np.sum(xs / y + (y - xs) ** 2 - (xs - np.array([1.0, -2.0])) ** 2
                  - np.asarray(xs) / 3.0)


def met_by_array_stacked(xs, y):
    v = np.stack(xs)
    return np.sum(v / y + (y - v) ** 2 - (v - np.array([1.0, -2.0])) ** 2 - v / 3.0)
