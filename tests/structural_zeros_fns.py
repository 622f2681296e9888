"""Functions where a value's derivative is infinite or undefined where it is computed,
but only a branch not taken (or a path the output never reaches) reads it: JAX gives a
finite gradient there, since no cotangent reaches it (a symbolic zero), where
``0 * inf`` would be nan.  Checked by tests/test_structural_zeros.py against JAX."""

import numpy as np


def sqrt_untaken(x, y):  # issue 21, item 3
    r = np.sqrt(y)
    if x > 0.0:
        return x * y
    return r


def std_untaken(x, y):
    s = np.std(y)
    if np.sum(x) > 0.0:
        return np.sum(x * y)
    return s


def log_untaken(x, y):
    l = np.log(y)
    if x > 0.0:
        out = x * y
    else:
        out = l * 2.0
    return out


def arcsin_untaken(x, y):
    a = np.arcsin(y)
    if x > 0.0:
        out = x + y
    else:
        out = a
    return out


def reciprocal_untaken(x, y):
    r = 1.0 / (y + 0.0)
    if x > 0.0:
        return x * y
    return r


def sqrt_in_both(x, y):  # read on both paths: a real zero times inf (JAX: nan)
    r = np.sqrt(y)
    if x > 0.0:
        out = x * r
    else:
        out = r * 2.0
    return out


def sqrt_after_if(x, y):  # read after the if on every path (JAX: nan)
    r = np.sqrt(y)
    if x > 0.0:
        z = x * y
    else:
        z = y
    return z + r


def sqrt_nested(x, y):
    r = np.sqrt(y)
    if x > 0.0:
        if x > 1.0:
            out = r
        else:
            out = x * y
    else:
        out = x + y
    return out


def sqrt_elif(x, y):
    r = np.sqrt(y)
    if x > 1.0:
        out = x * y
    elif x > 0.0:
        out = r * x
    else:
        out = y * 3.0
    return out


def sqrt_two_ifs(x, y):  # read on paths of two different tests
    r = np.sqrt(y)
    if x > 0.0:
        a = x * y
    else:
        a = r
    if x < -1.0:
        b = r * 2.0
    else:
        b = x * y
    return a + b


def sqrt_same_test_twice(x, y):
    r = np.sqrt(y)
    t = x * 2.0
    if x > 0.0:
        a = t * y
    else:
        a = r
    if x > 0.0:
        b = a * 3.0
    else:
        b = a + r
    return b


def chain_untaken(x, y):
    r = np.sqrt(y)
    q = np.log(r + 1.0) * r
    if x > 0.0:
        return x * y
    return q


def vector_untaken(x, y):
    r = np.sqrt(y)
    if np.sum(x) > 0.0:
        out = np.sum(x * y)
    else:
        out = np.sum(r)
    return out


def std_rows_untaken(x, y):
    s = np.std(y, axis=0)
    if np.sum(x) > 0.0:
        return np.sum(x * y)
    return np.sum(s)


def two_outputs_one_path(x, y):  # a tuple whose leaves are reached on different paths
    r = np.sqrt(y)
    pair = (x * y, r)
    if x > 0.0:
        return pair[0]
    return pair[1]


def loop_body_untaken(x, y):  # the branch inside a loop, per iteration
    s = x
    for i in range(3):
        r = np.sqrt(y * i)
        if s > 0.5:
            s = s * 1.5
        else:
            s = s + r
    return s


def loop_in_untaken_branch(x, y):
    r = np.sqrt(y)
    s = x
    if x > 0.0:
        for i in range(3):
            s = s * 1.5
    else:
        for i in range(3):
            s = s + r
    return s


def loop_break_untaken(x, y):  # the iterations that read r never run
    r = np.sqrt(y)
    s = x
    for i in range(3):
        if s > 2.0:
            break
        s = s * 2.0 + r
    return s


def loop_branch_untaken(x, y):  # no iteration takes the branch that reads r
    r = np.sqrt(y)
    s = x
    for i in range(3):
        if s > 100.0:
            s = s + r
        else:
            s = s * 1.5
    return s


def while_untaken(x, y):
    r = np.sqrt(y)
    s = x
    while s < 3.0:
        if s > 100.0:
            s = s + r
        else:
            s = s * 0.5 + 2.0
    return s


def join_of_a_constant(x, c):  # forward mode: on one path the join carries no tangent
    if c > 0.0:
        j = x * 1.0
    else:
        j = np.zeros_like(x)
    return np.sqrt(j) * 2.0


def join_of_a_constant_then_branch(x, c):
    if c > 0.0:
        j = x * 1.0
    else:
        j = np.zeros_like(x)
    k = np.sqrt(j)
    if c > 1.0:
        out = k * x
    else:
        out = k + np.log(j + 1.0)
    return out


def std_alone(x, y):  # a real zero cotangent times nan: nan, in JAX too
    return np.std(y) * np.sum(x)
