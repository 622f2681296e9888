"""A callee's ``y += v`` into its parameter's array (frontend/param_writes.py).

NumPy's ``+=`` changes the caller's array in place; s2s's IR computes a new array.
Before: ``calls_helper_arg`` below gave [1.6, -0.4, 3.4] under vmap, jvp and
jit(jax) where NumPy gives [2.6, 0.6, 4.4]; grad of ``on_a_temporary``'s loss on
NumPy was wrong (the emitted forward calls the callee as written, which changed the
array the backward reads), and grad of ``passes_its_argument`` changed the caller's
own array.  Now a call passing an array to such a parameter is refused at the
callee's ``+=`` line; a Python number, or a callee that rebinds first (``y = y *
2.0``), runs with NumPy's values.  Every expected value comes from the plain NumPy
function run on a copy (JAX's immutable ``+=`` is no oracle here): values directly,
derivatives by central differences of it.
"""

from __future__ import annotations

import argwrite15_fns as F
import numpy as np
import pytest

import s2s
from s2s.errors import TransformError

X = np.array([0.3, -0.7, 1.2])


def helper_arg(y):
    y += 1.0
    return y


def scale_shift(y):
    y += 1.0
    y *= 2.0
    return y


def passes_on(y):
    return helper_arg(y)


def in_a_loop(y):
    for _ in range(2):
        y += 1.0
    return y


def on_one_path(y, c):
    if c:
        y = y * 2.0
    y += 1.0
    return y


def fresh_first(y):
    y = y * 2.0
    for _ in range(2):
        y += 1.0
    return y


# ---- refused: the caller reads the written array after the call ---------------------


def calls_helper_arg(x):
    a = x * 1.0
    b = helper_arg(a)
    return a + b


def calls_passes_on(x):
    a = x * 1.0
    b = passes_on(a)
    return a + b


def calls_in_a_loop(x):
    a = x * 1.0
    b = in_a_loop(a)
    return a * b


def calls_twice(x):
    a = x * 1.0
    b = helper_arg(a)
    c = helper_arg(a)
    return b + c


def calls_on_a_view(x):
    a = x * 2.0
    b = helper_arg(a[:2])
    return np.sum(a) + np.sum(b)


def reads_in_the_same_statement(x):
    a = x * 2.0
    a = helper_arg(a) + a
    return a


def calls_on_one_path(x):
    a = x * 1.0
    b = on_one_path(a, False)
    return a + b


def calls_scale_shift(x):
    a = np.sin(x)
    b = scale_shift(a)
    return a * b


def on_a_temporary(x):
    b = scale_shift(np.sin(x))
    return b * x


def rebinds_the_name(x):
    a = x * 2.0
    a = helper_arg(a)
    return a * np.sin(x)


def rebinds_in_a_loop(x):
    a = x * 1.0
    for _ in range(3):
        a = helper_arg(a)
    return a * x


def square_after(y):
    y += 1.0
    return y * y


def passes_its_argument(x):
    return square_after(x)


def through_passes_on(x):
    b = passes_on(x * x)
    return b * np.sin(x)


def prints_the_call(x):
    a = x * 1.0
    print(np.sum(helper_arg(a)))
    return a * x


# ---- accepted: a Python number, or a callee that makes a new array first --------------


def on_a_number(x):
    s = 2.0
    t = helper_arg(s)
    return x * s + t * x * x


def fresh_in_the_callee(x):
    a = x * 1.0
    b = fresh_first(a)
    return a * b


REFUSED = [
    (calls_helper_arg, "helper_arg", "    y += 1.0", "y = y + 1.0"),
    (calls_passes_on, "helper_arg", "    y += 1.0", "y = y + 1.0"),
    (calls_in_a_loop, "in_a_loop", "        y += 1.0", "y = y + 1.0"),
    (calls_twice, "helper_arg", "    y += 1.0", "y = y + 1.0"),
    (calls_on_a_view, "helper_arg", "    y += 1.0", "y = y + 1.0"),
    (reads_in_the_same_statement, "helper_arg", "    y += 1.0", "y = y + 1.0"),
    (calls_on_one_path, "on_one_path", "    y += 1.0", "y = y + 1.0"),
    (calls_scale_shift, "scale_shift", "    y += 1.0", "y = y + 1.0"),
    (rebinds_in_a_loop, "helper_arg", "    y += 1.0", "y = y + 1.0"),
    (passes_its_argument, "square_after", "    y += 1.0", "y = y + 1.0"),
    # kept as written (before: x * x where NumPy gives (x + 1) * x)
    (prints_the_call, "helper_arg", "    y += 1.0", "y = y + 1.0"),
    (F.asserts_on_the_call, "bump", "    y += 1.0", "y = y + 1.0"),
]
# (a new array nothing else reads: refused until test_argwrite16.py, NumPy's values now)
ACCEPTED = [on_a_number, fresh_in_the_callee, on_a_temporary, rebinds_the_name,
            through_passes_on]


def _loss(f):
    return lambda x: np.sum(f(x) * x)


def _numpy_grad(f, x, h=1e-6):
    """Central differences of the plain NumPy ``f`` (on copies), in float64."""
    x = np.asarray(x, np.float64)
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def _numpy_jvp(f, x, v, h=1e-6):
    x = np.asarray(x, np.float64)
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


def _numpy_hessian(f, x, h=1e-4):
    return np.stack([_numpy_grad(lambda z: _numpy_grad(f, z, h)[i], x, h)
                     for i in range(x.size)])


def _refusal(err, callee, text, instead):
    assert err.loc is not None and err.loc.file in (__file__, F.__file__), str(err)
    assert err.loc.text == text and err.loc.col == len(text) - len(text.lstrip()) + 1
    assert f"`{callee}`" in str(err) and instead in (err.hint or "")


def test_the_reported_wrong_number_is_refused_at_the_callees_line():
    # before: vmap gave [1.6, -0.4, 3.4], NumPy [2.6, 0.6, 4.4]
    assert np.allclose(calls_helper_arg(X.copy()), [2.6, 0.6, 4.4])
    with pytest.raises(TransformError) as info:
        s2s.vmap(calls_helper_arg)(X)
    _refusal(info.value, "helper_arg", "    y += 1.0", "y = y + 1.0")


def test_the_callers_own_array_is_not_changed_by_grad():
    # before: s2s.grad changed x to x + 1 (the emitted forward called the callee as
    # written on the caller's array) and gave 2 * (x + 2)
    x = X.copy()
    with pytest.raises(TransformError) as info:
        s2s.grad(lambda z: np.sum(square_after(z)))(x)  # (a lambda's call too)
    _refusal(info.value, "square_after", "    y += 1.0", "y = y + 1.0")
    np.testing.assert_array_equal(x, X)


@pytest.mark.slow
@pytest.mark.parametrize("f, callee, text, instead", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_refused_under_every_transform(f, callee, text, instead):
    v = np.ones(3)
    for run in (lambda: s2s.vmap(f)(X), lambda: s2s.jvp(f, (X,), (v,)),
                lambda: s2s.grad(_loss(f))(X), lambda: s2s.value_and_grad(_loss(f))(X),
                lambda: s2s.hessian(_loss(f))(X),
                lambda: s2s.jit(s2s.grad(_loss(f)), backend="jax")(X),
                lambda: s2s.jit(s2s.grad(_loss(f)), backend="numpy")(X),
                lambda: s2s.jit(f, backend="jax")(X)):
        with pytest.raises(TransformError) as info:
            run()
        _refusal(info.value, callee, text, instead)


@pytest.mark.slow
@pytest.mark.parametrize("f", [r[0] for r in REFUSED], ids=[r[0].__name__ for r in REFUSED])
def test_numpy_jit_of_the_function_itself_runs_it_as_numpy_does(f):
    """``s2s.jit(f, backend="numpy")`` of the plain function runs the user's code as
    NumPy runs it, so the callee's in-place ``+=`` means what it means there: the
    result is NumPy's (the oracle: ``f`` on a copy) and the caller's array is kept."""
    for x in [X, X * 1.5 - 0.2, -X]:
        x_in = x.copy()
        got = s2s.jit(f, backend="numpy")(x_in)
        np.testing.assert_allclose(got, f(x.copy()), rtol=1e-12, atol=0)
        np.testing.assert_array_equal(x_in, x)


@pytest.mark.slow
@pytest.mark.parametrize("f", ACCEPTED, ids=[f.__name__ for f in ACCEPTED])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_accepted_against_numpy(f, dtype):
    tol = dict(rtol=1e-6, atol=1e-9) if dtype == np.float64 else dict(rtol=2e-4, atol=1e-5)
    loss = _loss(f)
    for call, x in enumerate([X, X * 1.5 - 0.2, -X, X + 0.1] * 3):  # calls 1 to 12
        xd = np.asarray(x, dtype)
        x64 = xd.astype(np.float64)
        want, want_g = f(x64.copy()), _numpy_grad(loss, x64)
        np.testing.assert_allclose(s2s.vmap(f)(xd), want, **tol)
        np.testing.assert_allclose(s2s.grad(loss)(xd), want_g, **tol)
        value, g = s2s.value_and_grad(loss)(xd)
        assert value == pytest.approx(loss(x64.copy()), rel=tol["rtol"], abs=tol["atol"])
        np.testing.assert_allclose(g, want_g, **tol)
        v = np.asarray([1.0, -0.5, 2.0], dtype)
        out, tangent = s2s.jvp(f, (xd,), (v,))
        np.testing.assert_allclose(out, want, **tol)
        np.testing.assert_allclose(tangent, _numpy_jvp(f, x64, v.astype(np.float64)), **tol)
        np.testing.assert_allclose(xd, np.asarray(x, dtype))  # the caller's array unchanged
        if call < 2:
            np.testing.assert_allclose(s2s.hessian(loss)(xd), _numpy_hessian(loss, x64),
                                       rtol=1e-4 if dtype == np.float64 else 5e-3, atol=1e-4)
            for backend in ("numpy", "jax"):
                np.testing.assert_allclose(
                    np.asarray(s2s.jit(s2s.grad(loss), backend=backend)(xd)), want_g, **tol)
                np.testing.assert_allclose(
                    np.asarray(s2s.jit(f, backend=backend)(xd)), want, **tol)
