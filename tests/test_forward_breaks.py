"""Forward mode through loops that leave early: a ``break`` (or ``continue``) in a
branch after an inner loop, ``while`` loops, nesting two deep, and tangents a loop
swaps.  s2s.jvp and s2s.jacfwd are compared with jax.jvp and jax.jacfwd of the same
code (the function's code object, run with ``np`` bound to jax.numpy), on inputs that
break in the first rows and inputs that run every iteration.

The bug these pin: the outer loop carries ``s`` only through the inner loop (the pair
``(s, s)``), so a ``break`` there had no copy of the inner loop's tangent (``s_dot_2``)
into the outer loop's (``s_dot``): jvp returned the tangent of the iteration before.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


# ---- the functions -------------------------------------------------------------------


def nb(m):
    s = 0.0
    done = False
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
            if s > 2.0:
                done = True
                break
        if done:
            break
    return s


def nb2(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
        if s > 2.0:
            break
    return s


def nb3(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
    return s


def nb2_else(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
        if s <= 2.0:
            s = s * 1.0
        else:
            break
    return s


def nb2_two(m):
    s = 0.0
    t = 1.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
            t = t * np.cos(m[i, j])
        if s > 2.0:
            break
    return s + t


def nb2_mixed(m):
    s = 0.0
    p = 0.0
    for i in range(m.shape[0]):
        p = p + np.sin(m[i, 0])
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
        if s > 2.0:
            break
        p = p * 2.0
    return s * p


def nb2_continue(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
        if s < 1.0:
            continue
        s = s * 0.5
    return s


def nb2_continue_break(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
        if s < 1.0:
            continue
        if s > 3.0:
            break
        s = s * 0.9
    return s


def nb2_while(m):
    s = 0.0
    i = 0
    while i < m.shape[0]:
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
        if s > 2.0:
            break
        i = i + 1
    return s


def nb2_inner_while(m):
    s = 0.0
    for i in range(m.shape[0]):
        j = 0
        while j < m.shape[1]:
            s = s + m[i, j] ** 2
            j = j + 1
        if s > 2.0:
            break
    return s


def nb2_deep(m):  # the break is in the middle loop, after the innermost
    s = 0.0
    for k in range(2):
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                s = s + np.sin(m[i, j]) * (k + 1)
            if s > 1.5:
                break
    return s


def nb2_deep_outer(m):  # the break is in the outer loop, two loops below it
    s = 0.0
    for k in range(3):
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                s = s + m[i, j] ** 2
        if s > 4.0:
            break
    return s


def nb2_vec(m):
    v = np.zeros(m.shape[1])
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            v = v + m[i] * m[i, j]
        if np.sum(v) > 1.0:
            break
    return v


def nb_flag_deep(m):
    s = 0.0
    done = False
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
            if s > 2.0:
                done = True
                break
        if done:
            break
        s = s + 0.1 * m[i, 0]
    return s


def ret_after_inner(m):  # a return is a break with a flag
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
        if s > 2.0:
            return s * 2.0
    return s


def while_while(m):
    s = 0.0
    i = 0
    while i < m.shape[0]:
        j = 0
        while j < m.shape[1]:
            s = s + np.sin(m[i, j])
            j = j + 1
        if s > 1.0:
            break
        i = i + 1
    return s


def append_inner(m):
    ys = []
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
            ys.append(s)
        if s > 2.0:
            break
    t = 0.0
    for y in ys:
        t = t + y * y
    return t


def break_inner_and_outer(m):
    s = 0.0
    t = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] ** 2
            if s > 1.0:
                break
            t = t + s
        if t > 0.1:
            break
    return s * t


def setitem_inner(m):  # (JAX arrays are immutable: checked with central differences)
    y = np.zeros(m.shape[1])
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            y[j] = y[j] + m[i, j] ** 2
        if np.sum(y) > 2.0:
            break
    return np.sum(y * y)


def swap_loop(x):
    a = x[0]
    b = x[1]
    for i in range(3):
        a, b = b, a
    return a * 2.0 + b


def swap_break(x):
    a = x[0]
    b = x[1]
    for i in range(5):
        a, b = b * 1.5, a
        if a > 2.0:
            break
    return a * 2.0 + b


def swap_inner(x):
    a = x[0]
    b = x[1]
    for i in range(4):
        for j in range(2):
            a, b = b, a * 1.1
        if a * b > 3.0:
            break
    return a * 2.0 + b


def swap_if(x):
    a = x[0]
    b = x[1]
    for i in range(3):
        if a > b:
            a, b = b, a
        else:
            a, b = b * 2.0, a
    return a * 2.0 + b


MATRIX_FNS = [nb, nb2, nb3, nb2_else, nb2_two, nb2_mixed, nb2_continue, nb2_continue_break,
              nb2_while, nb2_inner_while, nb2_deep, nb2_deep_outer, nb2_vec, nb_flag_deep,
              ret_after_inner, while_while, append_inner, break_inner_and_outer]
VECTOR_FNS = [swap_loop, swap_break, swap_inner, swap_if]

M = np.random.default_rng(3).standard_normal((3, 3))
# 3 * M breaks in the first row; 0.05 * M never reaches a threshold and runs to the end
SCALES = [0.05, 0.3, 1.0, 3.0]


def twin(fn: Any) -> Any:
    """The same code with ``np`` bound to jax.numpy."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp})


def inputs(fn: Any, scale: float) -> tuple[np.ndarray, np.ndarray]:
    x = scale * M if fn in MATRIX_FNS else scale * np.array([0.9, -1.3, 0.4])
    direction = np.cos(np.arange(x.size) + 1.0).reshape(x.shape)
    return x, direction


def close(actual: Any, expected: Any) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, (a.shape, e.shape)
    np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


ALL = MATRIX_FNS + VECTOR_FNS
IDS = [f.__name__ for f in ALL]


def test_inputs_cover_early_and_full_runs() -> None:
    small, large = 0.05 * M, 3.0 * M
    assert nb2(small) == nb3(small)  # no break: every row summed
    assert nb2(large) < nb3(large)  # broke before the last row
    assert nb(large) < nb2(large)  # broke inside the first row


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("fn", ALL, ids=IDS)
def test_jvp_matches_jax(fn, scale) -> None:
    x, v = inputs(fn, scale)
    value, tangent = s2s.jvp(fn, (x,), (v,))
    want_value, want_tangent = jax.jvp(twin(fn), (x,), (v,))
    close(value, want_value)
    close(tangent, want_tangent)


@pytest.mark.parametrize("scale", [0.05, 3.0])
@pytest.mark.parametrize("fn", ALL, ids=IDS)
def test_jacfwd_matches_jax(fn, scale) -> None:
    x, _ = inputs(fn, scale)
    close(s2s.jacfwd(fn)(x), jax.jacfwd(twin(fn))(x))


@pytest.mark.slow
@pytest.mark.parametrize("scale", [0.05, 3.0])
@pytest.mark.parametrize("fn", [nb, nb2, nb3, swap_break], ids=lambda f: f.__name__)
def test_hessian_matches_jax(fn, scale) -> None:
    x, _ = inputs(fn, scale)
    close(s2s.hessian(fn)(x), jax.hessian(twin(fn))(x))


@pytest.mark.parametrize("fn", [nb, nb2, nb3, nb2_deep_outer], ids=lambda f: f.__name__)
def test_vmap_of_jvp_matches_jax(fn) -> None:
    xs = np.stack([0.05 * M, 3.0 * M])  # one example runs to the end, one breaks
    vs = np.stack([M, -2.0 * M])
    got = s2s.vmap(lambda x, v: s2s.jvp(fn, (x,), (v,)))(xs, vs)
    want = [jax.jvp(twin(fn), (xs[k],), (vs[k],)) for k in range(2)]
    close(got[0], np.stack([w[0] for w in want]))
    close(got[1], np.stack([w[1] for w in want]))


@pytest.mark.parametrize("scale", SCALES)
def test_jvp_of_writes_after_inner_loop_matches_differences(scale) -> None:
    x, v = scale * M, np.cos(np.arange(9.0)).reshape(3, 3)
    h = 1e-6
    want = (setitem_inner(x + h * v) - setitem_inner(x - h * v)) / (2 * h)
    value, tangent = s2s.jvp(setitem_inner, (x,), (v,))
    assert value == setitem_inner(x)
    np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-8)


def test_swapped_tangents_are_copied_at_once() -> None:
    jvp = s2s.jvp(swap_loop, (np.array([1.0, 2.0, 0.0]),), (np.array([1.0, 0.0, 0.0]),))
    assert jvp[1] == 1.0  # three swaps: a is x[1], b is x[0]; d(2a + b)/dx[0] = 1
    assert "_prev = " in s2s.source(swap_loop, "jvp")


# ---- found here, in other transforms (pinned for their owners) -------------------------


def test_grad_swap_in_loop() -> None:
    x = np.array([0.9, -1.3, 0.4])
    close(s2s.grad(swap_loop)(x), jax.grad(twin(swap_loop))(x))


def test_vmap_break_after_inner_loop() -> None:
    xs = np.stack([0.3 * M, 0.6 * M])
    close(s2s.vmap(nb2_else)(xs), np.stack([nb2_else(x) for x in xs]))


def test_vmap_of_jvp_while_with_break() -> None:
    xs = np.stack([0.05 * M, 3.0 * M])
    vs = np.stack([M, -2.0 * M])
    got = s2s.vmap(lambda x, v: s2s.jvp(nb2_while, (x,), (v,)))(xs, vs)
    want = [jax.jvp(twin(nb2_while), (xs[k],), (vs[k],)) for k in range(2)]
    close(got[1], np.stack([w[1] for w in want]))


@pytest.mark.parametrize("fn", ALL, ids=IDS)
def test_vmap_matches_a_loop(fn) -> None:
    # one example per scale: some run to the end, some break early; a masked loop keeps
    # a done example's value from the start of the iteration, also where a nested
    # loop rebinds it (the oracle is a Python loop)
    xs = np.stack([inputs(fn, scale)[0] for scale in SCALES])
    if fn is append_inner:  # a list pushed under batched control flow: refused
        with pytest.raises(s2s.TransformError, match="cannot pair each pop"):
            s2s.vmap(fn)(xs)
        return
    close(s2s.vmap(fn)(xs), np.stack([fn(x) for x in xs]))


@pytest.mark.parametrize("fn", VECTOR_FNS, ids=[f.__name__ for f in VECTOR_FNS])
@pytest.mark.parametrize("scale", [0.3, 3.0])
def test_grad_and_vmap_grad_of_swaps_match_jax(fn, scale) -> None:
    # the backward loop hands its cotangents on all at once, as `a, b = b, a` binds
    x = inputs(fn, scale)[0]
    close(s2s.grad(fn)(x), jax.grad(twin(fn))(x))
    xs = np.stack([x, 0.5 * x, -x])
    close(s2s.vmap(s2s.grad(fn))(xs), np.stack([jax.grad(twin(fn))(v) for v in xs]))
