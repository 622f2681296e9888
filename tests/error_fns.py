"""Functions s2s must refuse, one unsupported construct each, and a few well-formed
ones whose misuse (wrong outputs, wrong arguments, wrong cotangents) JAX reports.

``tests/test_errors.py`` transforms every ``uses_*`` function here and checks that the
error points at the line carrying the ``# ERR`` marker.  ``# ERR: text`` also says where the
caret belongs: under the first occurrence of ``text`` on that line (without it, under
the line's first non-blank character).  Keep these functions valid Python: they must
import, so that s2s can read their source.
"""

# ruff: noqa
# fmt: off

import contextlib

import numpy as np


# A callable object whose call is not Python s2s can read (a library's object;
# objects of your own classes are read through their ``__call__``)
OPAQUE = np.vectorize(abs)


def uses_try(x):  # (a `try` whose `except` can never run is its no-raise path)
    try:
        y = np.log(x)
    except FloatingPointError:  # ERR
        y = x
    return np.sum(y)


def uses_unpack_scalar(x):
    a, b = np.sum(x)  # ERR: a, b
    return a * b


def uses_unpack_width(x):
    pts = []
    for i in range(3):
        pts.append((x[i], x[i] * 2, x[i] + 1))
    total = 0.0
    for a, b in pts:  # ERR: a, b
        total = total + a * b
    return total


def uses_with(x):
    with contextlib.suppress(ValueError):  # ERR: contextlib
        y = np.log(x)
    return np.sum(y)


def uses_return_in_loop(x):
    total = 0.0
    for v in x:
        for w in x:
            total = total + v * w
            if total > 1.0:
                return  # ERR
    return total


def uses_loop_value_after_loop(x):
    for v in x:
        last = v * 2.0
    return np.sum(last)  # ERR: last


def uses_nested_def(x):
    def inner(t):  # ERR
        return t * 2.0

    return np.sum(inner(x))


def uses_class(x):
    class Box:  # ERR
        pass

    return np.sum(x)


COUNTER = 0.0


def uses_global(x):
    global COUNTER  # ERR
    COUNTER = 1  # (a `global` that only reads is kept: tests/frontend/test_newcomer_probe3.py)
    return np.sum(x)


def make_uses_nonlocal():
    scale = 2.0

    def uses_nonlocal(x):
        nonlocal scale  # ERR
        return np.sum(x * scale)

    return uses_nonlocal


uses_nonlocal = make_uses_nonlocal()


def uses_del(x):
    y = x * 2.0
    del y
    return np.sum(y)  # ERR: y)


def uses_raise(x):
    if np.sum(x) > 100.0:
        x = x / 100.0
        raise ValueError("too big")  # ERR
    return np.sum(x)


def uses_import(x):
    import math  # ERR
    return np.sum(x) * math.pi


def uses_import_from(x):
    from math import pi  # ERR
    return np.sum(x) * pi


def uses_yield(x):
    y = yield x  # ERR: yield
    return np.sum(y)


async def uses_async(x):  # ERR
    return np.sum(x)


def uses_lambda(x):
    square = lambda t: t * t  # ERR: lambda
    return np.sum(square(x))


def uses_list_comprehension(x):
    ys = [v * 2.0 for v in x if np.sum(v) > 0]  # ERR: np.sum(v) > 0
    return np.sum(np.array(ys))


def uses_set(x):
    s = {np.sum(x), 2.0}  # ERR: np.sum(x)
    return np.sum(x)


def uses_fstring(x):
    label = f"x is {x * 2}"  # ERR: x * 2}
    return np.sum(x)


def uses_walrus(x):
    y = x if np.sum(x) > 0 else (z := x * 2.0)  # ERR: z :=
    return np.sum(y * z)


def uses_star_args(x, *rest):  # ERR: *rest
    return np.sum(x)


def uses_star_kwargs(x, **options):  # ERR: **options
    return np.sum(x)


def uses_chained_assignment(x):
    y = x * 2.0
    # (`a = b = ...` to names is accepted: `a = ...; b = a`)
    y[0] = b = np.sum(x)  # ERR
    return np.sum(y * b)


def uses_subscript_assignment(x):
    x[0] = 5.0  # ERR
    return np.sum(x)


def writes_into_a_viewed_array(x):
    y = x * 1.0
    tail = y[1:]
    y[1] = 5.0
    return np.sum(tail)  # ERR: np.sum


def reads_a_view_in_a_later_iteration(x):
    y = x * 1.0
    head = y[:2]
    total = 0.0
    for i in range(3):
        total = total + np.sum(head)  # ERR: np.sum
        y[i] = 0.0
    return total


def writes_where_a_loop_may_rebind_to_an_argument(x):
    y = x * 1.0
    for i in range(2):
        y[0] = 1.0  # ERR
        y = x
    return np.sum(y)


def adds_into_an_argument(x):
    np.add.at(x, np.array([0, 0]), 1.0)  # ERR
    return np.sum(x)


def reverses_an_enumeration(x):
    for i, v in reversed(enumerate(x)):  # ERR: reversed
        x = x * v
    return np.sum(x)


def uses_bare_expression(x):
    np.sin(x)  # ERR
    return np.sum(x)


def uses_unknown_numpy(m):
    return np.polynomial.hermite.hermval(m, [1.0, 2.0])  # ERR: np.polynomial.hermite.hermval


def uses_opaque_call(x):
    return np.sum(OPAQUE(x))  # ERR: OPAQUE


def uses_builtin_max(x):
    return np.sum(max(x, 0.0, key=abs))  # ERR: max


def uses_undefined_name(x):
    return np.sum(x * undefined_scale_factor)  # ERR: undefined_scale_factor


def uses_maybe_unassigned(x):
    if np.sum(x) > 0.0:
        y = x * 2.0
    return np.sum(y)  # ERR: y)


def falls_off_end(x):
    if np.sum(x) > 0.0:  # ERR
        return np.sum(x)


def never_returns(x):
    y = np.sin(x) * 2.0  # ERR


# ---- an error inside a called helper --------------------------------------------


def broken_helper(t):
    out = t
    with contextlib.suppress(FloatingPointError):  # ERR: contextlib
        out = out * t
    return out


def calls_broken_helper(x):
    return np.sum(broken_helper(x))


# ---- well-formed functions: JAX-compatible misuse, vjp outputs, constants -------


def vector_out(x):
    return np.sin(x)


def tuple_out(x):
    return np.sum(x), np.sum(x**2)


def scalar_out(x):
    return np.sum(x**2)


def two_args(x, y):
    return np.sum(x * y)


def dict_out(x):
    return {"a": np.sin(x), "b": np.sum(x)}


def shape_mismatch(x, y):
    return np.sum(x * y)


def shape_one_out(x):
    return x[0:1] * 2.0


def int_out(x):
    return 3


def list_aux(x):
    return [np.sum(x**2), np.mean(x)]


def three_tuple(x):
    return np.sum(x), x, x


def none_out(x):
    return None


CONSTANT = 2.5


def literal_out(x):
    return 2.5


def global_constant_out(x):
    return CONSTANT


def tree_in(t):
    return np.sum(t["a"] * t["b"])


SLICE_OPS = [np.sin, np.cos]


def uses_float_slice_bound(x, k):
    for op in SLICE_OPS[:k]:  # ERR: k
        x = op(x)
    return np.sum(x)


def reads_a_missing_key(p):
    return np.sum(p["a"] * p["b"])  # ERR: p["b"]


def divides_a_list(xs):
    return np.sum(xs / 2.0)  # ERR: xs / 2.0


def counts_float_labels(x, labels):
    return np.sum(np.bincount(labels, weights=x) ** 2)  # ERR: np.bincount
