"""Issue 23, eleventh NumPy-API pass: spellings earlier probes found refused or unclear
(np.piecewise, np.diff's prepend/append, np.maximum.accumulate, itertools.accumulate,
np.clip's min=/max=, reductions' initial=/where=/dtype=, np.around and x.round, a try
around non-array code).  tests/frontend/test_numpy_api11.py runs each through s2s and
compares with JAX on this same source (``jax_twin``: numpy swapped for jax.numpy), or
with central differences / NumPy run as written where JAX differs."""

from __future__ import annotations

import itertools
import operator

import numpy as np

# ---- 1. np.piecewise ------------------------------------------------------------------


def piecewise_two(x):
    """|x| left of 0, x**2 right of it (a kink at 0)."""
    y = np.piecewise(x, [x < 0, x >= 0], [lambda t: -t, lambda t: t ** 2])
    return np.sum(y * np.cos(x))


def piecewise_constant(x):
    """A constant piece (no derivative) and a function piece."""
    return np.sum(np.piecewise(x, [x < 0, x >= 0], [0.5, lambda t: t ** 3]) * x)


def piecewise_default(x):
    """One more function than conditions: the last is used where none holds."""
    y = np.piecewise(x, [x < -1, x > 1], [lambda t: -t, lambda t: t ** 2, np.sin])
    return np.sum(y ** 2)


def piecewise_overlap(x):
    """Overlapping conditions: the last that holds wins (NumPy's and JAX's)."""
    y = np.piecewise(x, [x < 0.5, x < 0.0], [np.exp, lambda t: 2.0 * t])
    return np.sum(y)


# ---- 2. np.diff with prepend / append ------------------------------------------------


def diff_prepend(x):
    return np.sum(np.diff(x, prepend=0.0) ** 2)


def diff_append(x):
    """The last element again: its difference is 0 (x[-1:] carries a derivative)."""
    return np.sum(np.diff(x, append=x[-1:]) ** 2 * np.arange(np.size(x)))


def diff_second_prepend(x):
    return np.sum(np.diff(x, n=2, prepend=0.0, append=1.0) ** 2)


def diff_rows_prepend(x):
    """Along axis 0 of a matrix, a scalar prepend broadcast to a row."""
    m = np.reshape(x, (2, -1))
    return np.sum(np.diff(m, axis=0, prepend=1.0) * m)


def ediff1d_ends(x):
    """np.ediff1d with to_begin/to_end constants (supported before this pass)."""
    return np.sum(np.ediff1d(x, to_begin=1.0, to_end=[2.0, 3.0]) ** 2 * np.cos(x[0]))


# ---- 3. ufunc accumulate -------------------------------------------------------------


def running_max(x):
    """The running maximum (a drawdown): the derivative follows the max so far."""
    peak = np.maximum.accumulate(x)
    return np.sum((peak - x) ** 2)


def running_min(x):
    return np.sum(np.minimum.accumulate(x) * np.arange(1.0, np.size(x) + 1.0))


def running_max_rows(x):
    """Along axis 1 of a matrix (axis=0 is the default)."""
    m = np.reshape(x, (2, -1))
    return np.sum(np.maximum.accumulate(m, axis=1) ** 2)


def add_multiply_accumulate(x):
    return np.sum(np.add.accumulate(x) ** 2) + np.sum(np.multiply.accumulate(x))


# ---- 4. itertools.accumulate ---------------------------------------------------------


def accumulate_sums(x):
    parts = [x[0], x[1] * 2.0, x[2]]
    return sum(v * v for v in itertools.accumulate(parts))


def accumulate_products(x):
    parts = [x[0], x[1], x[2], x[3]]
    return sum(itertools.accumulate(parts, operator.mul))


def accumulate_initial(x):
    total = 0.0
    for v in itertools.accumulate([x[0], x[1], x[2]], initial=1.0):
        total = total + np.sin(v)
    return total


def accumulate_max_lambda(x):
    """A lambda as the function; a list of the running values."""
    runs = list(itertools.accumulate([x[0], x[1], x[2], x[3]], lambda a, b: a * 0.5 + b))
    return runs[-1] ** 2 + runs[1]


# ---- 5. np.clip's keywords -----------------------------------------------------------


def clip_min_max(x):
    return np.sum(np.clip(x, min=0.0, max=1.0) ** 2 + x)


def clip_none_low(x):
    return np.sum(np.clip(x, None, 1.0) ** 2)


def clip_a_keywords(x):
    return np.sum(np.clip(x, a_min=-0.5, a_max=0.5) * x)


def clip_method_max(x):
    return np.sum(x.clip(max=0.5) ** 2)


# ---- 6. reduction keywords -----------------------------------------------------------


def sum_initial(x):
    return np.sum(x ** 2, initial=1.0) * np.sum(x, initial=0.5)


def max_initial(x):
    return np.max(x, initial=-np.inf) + np.min(x * 2.0, initial=0.25)


def sum_where(x):
    return np.sum(x ** 2, where=x > 0)


def mean_where(x):
    return np.mean(np.sin(x), where=x > -0.5)


def max_where_initial(x):
    return np.max(x * 3.0, where=x < 1.0, initial=0.0)


def sum_dtype(x):
    return np.sum(x ** 2, dtype=np.float32) * 1.5


def prod_where(x):
    return np.prod(x + 2.0, where=x > -0.5)


def where_keepdims_rows(x):
    """keepdims with where= and initial= along an axis of a matrix."""
    m = np.reshape(x, (2, -1))
    s = np.sum(m ** 2, axis=1, keepdims=True, where=m > -0.5, initial=1.0)
    a = np.mean(m, axis=0, keepdims=True, where=m < 1.0)
    return np.sum(s * m) + np.sum(a * m)


def method_where_initial(x):
    """The methods (JAX 0.10's x.sum drops initial=: x.prod's here)."""
    return x.sum(where=x > 0.0) * x.max(initial=0.0, where=x < 1.0) + x.prod(initial=0.5)


# ---- 7. rounding ---------------------------------------------------------------------


def rounding(x):
    return np.sum(np.around(x, 2) * x + np.round(x, decimals=1) * x ** 2 + x.round(2))


# ---- 8. try around non-array code ----------------------------------------------------

CONFIG = {"n": "3"}
EMPTY_CONFIG: dict = {}


def try_config_int(x):
    try:
        n = int(CONFIG["n"])
    except KeyError:
        n = 2
    return np.sum(x ** n)


def try_config_default(x):
    try:
        scale = float(EMPTY_CONFIG["scale"])
    except (KeyError, ValueError):
        scale = 0.5
    return np.sum(np.sin(x) * scale)


def try_around_array_code(x):
    try:
        y = np.log(x)
    except FloatingPointError:
        y = x
    return np.sum(y)


def try_with_else(x):
    try:
        n = int(CONFIG["n"])
    except KeyError:
        n = 2
    else:
        n = n + 1
    return np.sum(x ** n)
