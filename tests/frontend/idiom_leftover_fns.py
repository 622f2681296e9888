"""Functions of tests/frontend/test_idiom_leftovers.py (issue 23's leftovers): a partial
of a decorator's ``*args`` wrapper binding run-time values, transformed in the body;
list concatenation and extension of lists grown in loops; a user module's functions
called by attribute; transforms in the body whose gradients meet a float64 module
array. ``s2s_grad`` and friends are bound by the test (JAX's in the twin)."""

import functools

import idiom_leftover_lib as lib
import numpy as np

W = np.array([0.5, -1.0, 2.0])
# s2s's transforms, or JAX's in the twin (bound by the test)
s2s_grad = s2s_value_and_grad = s2s_hessian = s2s_jacrev = s2s_jacfwd = None


# ---- 1. a partial of a *args wrapper binding run-time values, in the body -------------


def deco(fn):
    def wrapper(*args, **kw):
        return fn(*args, **kw)

    return wrapper


def doubling(fn):
    def wrapper(*args, **kw):
        return 2.0 * fn(*args, **kw) + len(args)

    return wrapper


@deco
def loss(x, scale=1.0):
    return np.sum(np.sin(x) * scale) + np.sum(x**2) * scale


@deco
def loss_w(w, x, *, scale=1.0):
    return np.sum(np.cos(x * w) * scale)


@doubling
def loss_doubled(x, scale=1.0, shift=0.0):
    return np.sum(np.tanh(x) * scale + shift * x)


def partial_scale_of_values(x):
    return np.sum(s2s_grad(functools.partial(loss, scale=np.sum(x)))(x) * W)


def partial_module_array(x):
    # a bound positional goes before the call's arguments, as functools.partial does
    return np.sum(s2s_grad(functools.partial(loss_w, W, scale=np.cos(x[0])))(x))


def partial_made_first(x):
    p = functools.partial(loss_doubled, shift=x[1] * 2.0, scale=np.sum(x**2))
    return np.sum(s2s_grad(p)(x) * x)


def partial_second_order(x):
    p = functools.partial(loss, scale=np.sum(x))
    return np.sum(s2s_jacfwd(s2s_grad(p))(x * 0.5) @ W * x)


def partial_value_and_grad(x):
    v, g = s2s_value_and_grad(functools.partial(loss, scale=x[0]))(x * 2.0)
    return v * np.sum(g)


# ---- 2. list concatenation and extension -------------------------------------------


def grown_plus_items(x, n):
    parts = []
    for i in range(n):
        parts.append(np.sin(x) * (i + 1))
    parts = parts + [x, x**2]
    return np.sum(np.stack(parts) * W, axis=0)


def concat_in_loop(x, n):
    parts = []
    for i in range(n):
        parts = parts + [x * (i + 1.0)]
    return np.sum(np.stack(parts + [np.cos(x)]) ** 2)


def extend_in_loop(x, n):
    parts = [x]
    for i in range(n):
        parts += [np.sin(x) * i, x * i]
    parts.extend([np.cos(x)])
    return np.sum(np.stack(parts), axis=0) * W


def literal_plus_equals(x, n=0):
    out = [x, x * n]
    out += [x * 2.0, np.exp(-x)]
    out += (np.tanh(x),)
    return np.sum(np.stack(out) ** 2)


def concat_while(x, n):
    parts = []
    k = 0
    while k < n:
        parts = parts + [x * np.cos(x) * k]
        k += 1
    return sum(parts, np.zeros(3)) + np.sum(np.stack(parts + [x]), axis=0)


def copy_in_loop(x, n):
    # (main: `q = list(parts)` was the pre-loop literal [] at every iteration)
    parts = []
    for i in range(n):
        q = list(parts)
        q.append(x * (i + 1.0))
        parts = q
    return np.sum(np.stack(parts) ** 2)


def sum_before_append(x, n):
    # (main: `sum(parts)` was the pre-loop literal's sum, 0, at every iteration)
    parts = []
    total = np.zeros(3)
    for i in range(n):
        total = total + sum(parts, np.zeros(3)) * 0.5
        parts.append(np.sin(x) * i)
    return np.sum(total)


def grown_plus_grown(x, n):
    a = []
    b = []
    for i in range(n):
        a.append(x * i)
        b.append(np.sin(x) * i)
    return np.sum(np.stack(a + b))


def items_plus_grown(x, n):
    a = []
    for i in range(n):
        a.append(x * i)
    return np.sum(np.stack([x] + a))


def tuple_grown_in_loop(x, n):
    t = ()
    for i in range(n):
        t = t + (x * i,)
    return np.sum(np.stack(t))


def extend_by_rows(x, n):
    parts = [x]
    parts += np.outer(x, x)
    return np.sum(np.stack(parts))


def repeated_by_count(x, n):
    # (main: NumPy's product in the rules, Python's repetition when it ran: the value
    # of `out += [2 x]` and the gradient were wrong, silently)
    out = [x] * (n + 1)
    out += [x * 2.0]
    return np.sum(np.stack(out) ** 2)


def alias_of_grown(x, n):
    parts = []
    snaps = []
    for i in range(n):
        parts = parts + [x * i]
        snaps.append(parts)
    return np.sum(np.stack(snaps[0]))


# ---- 3. a user module's functions, called by attribute ------------------------------


def module_calls(x):
    return np.sum(lib.helper(x)) + lib.loss(x) * lib.SCALE[0]


def module_grad_in_body(x):
    return np.sum(s2s_grad(lib.loss)(x) * x)


# ---- 4. gradients in the body meeting a float64 module array ------------------------


def inner(y, w=1.0):
    return np.sum(np.sin(y) ** 2 * w)


def grad_of_partial_module_array(x):
    return s2s_grad(functools.partial(inner, w=W))(x) * 2.0


def grad_meeting_module_array(x):
    return s2s_grad(lambda y: np.sum(np.sin(y) * W))(x) + x


def value_and_grad_module_array(x):
    v, g = s2s_value_and_grad(lambda y: np.sum(np.cos(y) * W))(x)
    return g * v


def hessian_module_array(x):
    return s2s_hessian(lambda y: np.sum(np.sin(y) ** 2 * W))(x) @ x


def jacrev_module_array(x):
    return s2s_jacrev(lambda y: np.sin(y) * W)(x) @ x


# ---- 5. scalars ----------------------------------------------------------------------


def scalar_fn(y):
    return np.sin(y) * y


def scalar_body_grad(x):
    return s2s_grad(scalar_fn)(x) * x
