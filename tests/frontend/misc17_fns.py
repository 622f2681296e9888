"""Functions of test_misc17.py: a ``try`` around array code whose ``except`` can never
run, ``math`` functions of a float parameter, a position per example mixed with slices
under vmap, and a list built in an ``if`` whose gradient is transformed again."""

from __future__ import annotations

import math

import numpy as np

# ---- a `try` around array code -------------------------------------------------------

def try_else_finally(x):
    try:
        y = np.log1p(x ** 2)
    except (ValueError, ZeroDivisionError):
        y = x
    else:
        y = y + 0.5 * x
    finally:
        z = np.cos(x)
    return np.sum(y * z)


def try_several_statements(x, s=1.5):
    try:
        y = np.sin(x) * s
        y += 2.0
        w: float = np.tanh(y) ** 3
    except np.linalg.LinAlgError:
        w = x
    except KeyError as err:
        w = err
    return np.sum(w * x)


def try_subscripts(x):
    try:
        y = x[1:] * 2.0 + x[0]
    except ZeroDivisionError:
        y = x
    return np.sum(y ** 2)


def try_catches_fpe(x):
    try:
        y = np.log(x)
    except FloatingPointError:
        y = x
    return np.sum(y)


def try_bare_except(x):
    try:
        y = np.exp(x)
    except:  # noqa: E722 - (the construct tested)
        y = x
    return np.sum(y)


def try_broadcast_fallback(x, w):
    try:
        y = x * w
    except ValueError:
        y = x
    return np.sum(y)


def try_divides(x):
    try:
        y = 1.0 / x
    except ZeroDivisionError:
        y = x
    return np.sum(y)


def try_power_of_a_value(x, p):
    try:
        y = x ** p
    except ValueError:
        y = x
    return np.sum(y)


def try_calls_a_function(x):
    try:
        y = np.linalg.norm(x) * x
    except ValueError:
        y = x
    return np.sum(y)


def try_returns(x):
    try:
        return np.sum(x ** 2)
    except ValueError:
        return 0.0


def try_index_error(x):
    try:
        y = x[5]
    except IndexError:
        y = x[0]
    return y * 2.0


# ---- math functions of a float parameter ----------------------------------------------

def math_of_a_float(x, t=0.3):
    a = math.erf(t) + math.copysign(1.0, -t) + math.isclose(t, 0.3)
    b = math.gamma(t + 2.0) + math.log(t + 1.0, 2) + math.hypot(t, 4.0)
    return a * np.sum(x ** 2) + b * np.sum(np.sin(x))


# ---- a position per example mixed with slices (vmap) ---------------------------------

def argmax_row_column(m):
    i, j = np.unravel_index(np.argmax(m), m.shape)
    row, col = m[i], m[:, j]
    return np.sum(row ** 2) + np.sum(col) * m[i, j] + np.sum(np.sin(m[1:, j]))


def argmax_3d(t):
    i = np.argmax(t[:, 0, 0])
    j = np.argmin(t[0, 0, :])
    return np.sum(t[i, :, j] ** 3) + np.sum(t[:, i, 1] * t[:, 0, j]) + np.sum(np.cos(t[i, 1:, :]))


def column_of_a_matrix(m, j):
    return np.sum(m[1:, j] ** 2) + m[0, j]


def slice_from(m, k):
    return np.sum(m[k:, 0])


def column_of_any(m):
    b = np.any(m > 0.5)
    return np.sum(m[:, b])


# ---- a list built in an `if` (its gradient transformed again) ------------------------

def ndim_branch_concat(x):
    if x.ndim == 1:
        x = x[None, :]
    if x.shape[0] == 1:
        x = np.concatenate([x, 2.0 * x], axis=0)
    return np.sum(np.tanh(x) * x[::-1]) + np.sum(x.mean(axis=0) ** 2)


def stacked_in_a_branch(x):
    if x.shape[0] > 2:
        y = np.vstack([x, np.sin(x), x ** 2])
    else:
        y = x[None, :] * 3.0
    return np.sum(y * np.cos(y))
