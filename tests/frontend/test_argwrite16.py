"""A callee's ``y += v`` given a new array no other name sees (frontend/param_writes.py).

Before, every call passing an array to a parameter its callee writes into in place
was refused, ``h(x * 1.0)`` too; a NumPy scalar (``np.float64(2.0)``) and a Python
number passed on through another callee (``def g(k, x): return h(k, x)``) were
refused as arrays, and a list's ``ys += [v]`` was called an array.  Now an argument
the caller made itself and reads nowhere else runs (``+=`` on it is ``y = y + v``),
reverse mode's forward calling the callee on ``own_copy(a)`` (before, accepting it
gave 2(x+2) for 2(x+1): the callee's write reached the array the backward reads).
Every expected value comes from the plain NumPy function run on a copy: values
directly, a batch as a loop over its rows, derivatives by central differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s.errors import TransformError

X = np.array([0.3, -0.7, 1.2])
G = np.array([1.0, 2.0, 3.0])


def bump(y):
    y += 1.0
    return y


def sq(y):
    y += 1.0
    return y * y


def scale_shift(y):
    y += 1.0
    y *= 2.0
    return y


def passes_on(y):
    return bump(y)


def times_k(k, x):
    k += 1
    return k * x


def number_through(k, x):
    return times_k(k, x)


def read_again(k, x):
    b = times_k(k, x)
    return b + k * x


def in_a_loop(k, x):
    for _ in range(3):
        x = times_k(k, x)
    return x


def _same(t):
    return t


def held_by_a_call(y):
    z = _same(y)  # (z is y's array: NumPy's += changes it too)
    y += 1.0
    return z + y


def written_after_a_call(x):
    a = x * 1.0
    z = _same(a)  # (z is a's array: NumPy's += changes it too)
    a += 1.0
    return z + a


def grow(ys, v):
    ys += [v]
    return ys


# ---- accepted: an argument the caller made and reads nowhere else ---------------------


def on_a_product(x):
    return sq(x * 1.0) * x


def on_a_sum(x):
    return bump(np.zeros(3) + x) * x


def on_a_copy(x):
    return bump(np.copy(x)) * x


def rebinding(x):
    a = x * 2.0
    a = bump(a)
    return a * np.sin(x)


def on_a_numpy_scalar(x):
    return bump(np.float64(2.0)) * x


def a_number_passed_on(x):
    return number_through(2.0, x)


def a_number_read_again(x):
    return read_again(2.0, x) + in_a_loop(0.5, x)


def an_array_passed_on(x):
    b = passes_on(x * x)
    return b * np.sin(x)


def twice_in_place(x):
    b = scale_shift(np.sin(x))
    return b * x


def made_in_each_iteration(x):
    acc = x * 0.0
    for i in range(3):
        t = x * float(i + 1)
        acc = acc + bump(t)
    return acc


def on_one_path(x):
    if np.sum(x) > 0.0:
        b = bump(x * 2.0)
    else:
        b = x * 3.0
    return b * x


ACCEPTED = [on_a_product, on_a_sum, on_a_copy, rebinding, on_a_numpy_scalar,
            a_number_passed_on, a_number_read_again, an_array_passed_on, twice_in_place,
            made_in_each_iteration, on_one_path]


# ---- refused: the write is visible --------------------------------------------------


def read_after(x):
    a = x * 1.0
    b = bump(a)
    return a + b


def passed_twice(x):
    a = x * 1.0
    return bump(a) + bump(a)


def made_before_the_loop(x):
    t = x * 1.0
    acc = x * 0.0
    for _ in range(3):
        acc = acc + bump(t)
    return acc


def on_a_view(x):
    a = x * 1.0
    return np.sum(bump(a[1:])) * x


def on_a_transpose(x):
    a = np.outer(x, x)
    return np.sum(bump(a.T), axis=0) * x


def on_a_module_array(x):
    return bump(G) * x


def _factory(a):
    def on_a_cell(x):
        return bump(a) * x
    return on_a_cell


on_a_closure_cell = _factory(np.array([1.0, 2.0, 3.0]))


def on_a_dict_item(x):
    d = {"k": x * 1.0}
    return bump(d["k"]) * x


def on_a_list_item(x):
    ys = [x * 1.0]
    return bump(ys[0]) * x


def on_the_argument(x):
    return bump(x) * 2.0


def on_the_argument_passed_on(x):
    return passes_on(x) * 2.0


def an_array_read_again(x):
    return read_again(x * 1.0, x)


def an_array_held_by_a_call(x):
    return held_by_a_call(x * 1.0) * x


def a_list_grown(x):
    ys = [x]
    zs = grow(ys, x * 2.0)
    return ys[1] * zs[0]


_BUMP = ("bump", "    y += 1.0", "y = y + 1.0")
REFUSED = [
    (read_after, *_BUMP), (passed_twice, *_BUMP), (made_before_the_loop, *_BUMP),
    (on_a_view, *_BUMP), (on_a_transpose, *_BUMP), (on_a_module_array, *_BUMP),
    (on_a_closure_cell, *_BUMP), (on_a_dict_item, *_BUMP), (on_a_list_item, *_BUMP),
    (on_the_argument, *_BUMP), (on_the_argument_passed_on, *_BUMP),
    (an_array_read_again, "times_k", "    k += 1", "k = k + 1"),
    (an_array_held_by_a_call, "held_by_a_call", "    y += 1.0", "y = y + "),
    (a_list_grown, "grow", "    ys += [v]", "ys = ys + [v]"),
]


def _refusal(err, callee, text, instead):
    assert err.loc is not None and err.loc.file == __file__, str(err)
    assert err.loc.text == text and err.loc.col == len(text) - len(text.lstrip()) + 1
    assert f"`{callee}`" in str(err) and instead in (err.hint or "")
    assert getattr(err, "shared_write", False)  # (jit(f, backend="numpy") runs NumPy's)


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
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


def _numpy_hessian(f, x, h=1e-4):
    return np.stack([_numpy_grad(lambda z: _numpy_grad(f, z, h)[i], x, h)
                     for i in range(x.size)])


def test_a_fresh_argument_gives_numpys_gradient():
    # before: refused; accepting it naively gave 2 (x + 2) for 2 (x + 1)
    x = X.copy()
    got = s2s.grad(lambda z: np.sum(sq(z * 1.0)))(x)
    want = _numpy_grad(lambda z: np.sum(sq(z * 1.0)), X)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got, 2 * (X + 1.0), rtol=1e-6)
    np.testing.assert_array_equal(x, X)


def test_refusals_stay_located_and_a_list_is_called_a_list():
    for f, callee, text, instead in [REFUSED[0], REFUSED[5], REFUSED[10], REFUSED[-1]]:
        with pytest.raises(TransformError) as info:
            s2s.vmap(f)(X)
        _refusal(info.value, callee, text, instead)
    err = info.value
    assert "the list the caller passes as `ys`" in str(err) and "array" not in str(err)


def test_an_array_a_call_may_return_is_not_written_after():
    # before: vmap gave 2x + 1 ([1.6, -0.4, 3.4]) where NumPy gives 2(x + 1)
    np.testing.assert_allclose(written_after_a_call(X.copy()), 2 * (X + 1.0))
    with pytest.raises(TransformError) as info:
        s2s.vmap(written_after_a_call)(X)
    assert info.value.loc.file == __file__ and info.value.loc.text == "    a += 1.0"
    assert "a = a + " in info.value.hint


@pytest.mark.slow
@pytest.mark.parametrize("f, callee, text, instead", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_refused_under_every_transform(f, callee, text, instead):
    v = np.ones(3)
    x = X.copy()
    for run in (lambda: s2s.vmap(f)(x), lambda: s2s.jvp(f, (x,), (v,)),
                lambda: s2s.grad(_loss(f))(x), lambda: s2s.value_and_grad(_loss(f))(x),
                lambda: s2s.hessian(_loss(f))(x),
                lambda: s2s.jit(s2s.grad(_loss(f)), backend="jax")(x),
                lambda: s2s.jit(s2s.grad(_loss(f)), backend="numpy")(x),
                lambda: s2s.jit(f, backend="jax")(x)):
        with pytest.raises(TransformError) as info:
            run()
        _refusal(info.value, callee, text, instead)
    np.testing.assert_array_equal(x, X)


def _check_accepted(f, dtype, transforms_too):
    tol = dict(rtol=1e-6, atol=1e-9) if dtype == np.float64 else dict(rtol=2e-4, atol=1e-5)
    loss = _loss(f)
    for call, x in enumerate([X, X * 1.5 - 0.2, -X, X + 0.1] * 3):  # calls 1 to 12
        xd = np.asarray(x, dtype)
        kept = xd.copy()
        x64 = xd.astype(np.float64)
        want, want_g = f(x64.copy()), _numpy_grad(loss, x64)
        numpy_out = f(xd.copy())
        batch = np.stack([xd, xd * 0.5 + 0.25])
        got = s2s.vmap(f)(batch)
        assert got.dtype == numpy_out.dtype
        np.testing.assert_allclose(got, np.stack([f(row.copy()) for row in batch]), **tol)
        np.testing.assert_allclose(s2s.grad(loss)(xd), want_g, **tol)
        value, g = s2s.value_and_grad(loss)(xd)
        assert value == pytest.approx(loss(x64.copy()), rel=tol["rtol"], abs=tol["atol"])
        np.testing.assert_allclose(g, want_g, **tol)
        v = np.asarray([1.0, -0.5, 2.0], dtype)
        out, tangent = s2s.jvp(f, (xd,), (v,))
        assert out.dtype == numpy_out.dtype
        np.testing.assert_allclose(out, want, **tol)
        np.testing.assert_allclose(tangent, _numpy_jvp(f, x64, v.astype(np.float64)), **tol)
        if call < 2 and transforms_too:
            np.testing.assert_allclose(s2s.hessian(loss)(xd), _numpy_hessian(loss, x64),
                                       rtol=1e-4 if dtype == np.float64 else 5e-3, atol=1e-4)
            for backend in ("numpy", "jax"):
                np.testing.assert_allclose(
                    np.asarray(s2s.jit(s2s.grad(loss), backend=backend)(xd)), want_g, **tol)
                np.testing.assert_allclose(
                    np.asarray(s2s.jit(f, backend=backend)(xd)), want, **tol)
        np.testing.assert_array_equal(xd, kept)  # the caller's array unchanged
        np.testing.assert_array_equal(batch[0], xd)


@pytest.mark.slow
@pytest.mark.parametrize("f", ACCEPTED, ids=[f.__name__ for f in ACCEPTED])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_accepted_against_numpy(f, dtype):
    _check_accepted(f, dtype, transforms_too=True)
