"""Three defects (session 16): a race between the specializer's thread and the
caller's own ``import black``; a list times a float computed by jvp; a swap through
a scalar of a 1-D array refused as aliasing."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import s2s
from s2s.api import signatures
from s2s.emit import code as emitcode


def _sin_dot(x):
    return np.sum(np.sin(x) * x)


def test_specializer_thread_is_never_blacks_first_importer(monkeypatch) -> None:
    """black is compiled by mypyc: its module enters sys.modules half-made, and a
    caller's ``import black`` while the specializer thread imports it got that module
    (``module 'black' has no attribute 'Mode'``, one run in two in a script).  The
    thread's starter imports black first; here black counts as not yet imported
    (s2s's cache emptied) when the second call starts the thread."""
    monkeypatch.setattr(signatures, "IN_BACKGROUND", True)
    started: list[bool] = []
    start = threading.Thread.start

    def recording_start(self) -> None:
        if self.name != "s2s-specialize":
            start(self)
        else:  # (not run: its work is no part of this test; the emitted code serves)
            started.append(bool(emitcode._BLACK))

    monkeypatch.setattr(threading.Thread, "start", recording_start)
    g = s2s.grad(_sin_dot)
    x = np.linspace(0.1, 1.0, 4)
    first = g(x)
    monkeypatch.setattr(emitcode, "_BLACK", [])  # (as in a fresh process)
    second = g(x)
    assert started == [True]
    want = np.sin(x) + x * np.cos(x)
    np.testing.assert_allclose(first, want, rtol=1e-13)
    np.testing.assert_allclose(second, want, rtol=1e-13)
    np.testing.assert_allclose(g(x), want, rtol=1e-13)


def _times(a, s):
    return a * s  # the product line


def _list_times_float(x):
    return np.sum(_times([x[1:]], 1.5))


def _list_times_int(x):
    return np.sum(_times([x[1:]], 2)[0])


def _list_arg_times_float(xs, w):
    return np.sum(xs * 1.5) * w


def _list_arg_times_weight(xs, w):
    return np.sum(np.asarray(xs) ** 2 * 0.5 + xs * w)


def test_list_argument_times_a_number_is_refused_at_its_line() -> None:
    """``[x[1:]] * 1.5`` raises TypeError in Python and ``[x[1:]] * 2`` repeats the
    list; jvp computed NumPy's product of both (4.725 where Python raises; 6.3 where
    Python gives 3.15) and grad the product's gradient ([0, 2, 2, 2, 2] for [0, 1, 1,
    1, 1]).  Refused, at the product's line in the callee, by every transform."""
    x = np.linspace(0.1, 1.2, 5)
    line = _times.__code__.co_firstlineno + 1
    for fn in (_list_times_float, _list_times_int):
        for run in (lambda: s2s.grad(fn)(x), lambda: s2s.value_and_grad(fn)(x),
                    lambda: s2s.jvp(fn, (x,), (np.ones_like(x),))):
            with pytest.raises(s2s.TransformError) as info:
                run()
            assert info.value.loc.line == line and info.value.loc.file == __file__


def test_list_argument_times_a_float_constant_says_pythons_error() -> None:
    xs = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    with pytest.raises(TypeError):
        _list_arg_times_float(xs, 1.0)
    with pytest.raises(s2s.TransformError, match="non-int of type 'float'"):
        s2s.grad(_list_arg_times_float, argnums=1)(xs, 1.0)


def test_list_argument_times_a_differentiated_array_is_numpys_product() -> None:
    """(kept: the transform makes ``w`` an array, whose product with a list is NumPy's)"""
    xs = [np.array([1.0, -2.0]), np.array([0.5, 4.0])]
    w = np.array([0.3, -0.7])
    got = s2s.grad(_list_arg_times_weight, argnums=1)(xs, w)
    h, want = 1e-6, np.zeros(2)
    for i in range(2):
        e = np.zeros(2)
        e[i] = h
        want[i] = (_list_arg_times_weight(xs, w + e) - _list_arg_times_weight(xs, w - e)) / (
            2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-7)
    np.testing.assert_allclose(got, xs[0] + xs[1], rtol=1e-13)


def _swap_made(x):
    y = np.zeros(3)
    y[0] = np.sin(x[0])
    y[1] = x[1] * x[2]
    y[2] = np.cos(x[2])
    t = y[0]
    y[0] = y[1]
    y[1] = t
    return np.sum(y * np.arange(1.0, 4.0))


def _swap_in_loop(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] ** 2
    for i in range(2):
        t = y[i]
        y[i] = y[i + 1]
        y[i + 1] = t
    return np.sum(y * np.arange(1.0, 4.0))


def _rows_not_swapped(x):
    y = np.zeros((2, 3))
    y[0] = np.sin(x)
    y[1] = x * x
    t = y[0]  # a row: a view, which `y[0] = y[1]` changes (NumPy: no swap)
    y[0] = y[1]
    y[1] = t
    return np.sum(y * np.arange(1.0, 4.0))


def _central(fn, x, h=1e-6):
    return np.array([(fn(x + h * e) - fn(x - h * e)) / (2 * h) for e in np.eye(len(x))])


def test_swap_through_an_element_of_a_1d_array_made_here() -> None:
    """``t = y[0]`` of a 1-D array is NumPy's scalar, a copy: the swap was refused as
    ``t`` sharing memory with ``y``.  Now made a copy in the IR (jvp spelled ``t``'s
    tangent as ``y_dot[0]`` where it was read, after ``y_dot[0]`` changed: -1.296
    for -0.385, had the check only let it through)."""
    x = np.array([0.3, -0.7, 1.2])
    kept = x.copy()
    want = _central(_swap_made, x)
    for call in range(3):  # (the first, the specialized, the cached)
        np.testing.assert_allclose(s2s.grad(_swap_made)(x), want, rtol=1e-6, atol=1e-8)
    _, tangent = s2s.jvp(_swap_made, (x,), (np.ones(3),))
    np.testing.assert_allclose(tangent, want.sum(), rtol=1e-6)
    np.testing.assert_array_equal(x, kept)


@pytest.mark.slow
@pytest.mark.parametrize("fn", [_swap_made, _swap_in_loop])
def test_swap_through_an_element_in_a_loop_and_batched(fn) -> None:
    x = np.array([0.3, -0.7, 1.2])
    want = _central(fn, x)
    for dtype, rtol in ((np.float64, 1e-6), (np.float32, 1e-4)):
        got = s2s.grad(fn)(x.astype(dtype))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-5 if dtype == np.float32 else 1e-8)
    _, tangent = s2s.jvp(fn, (x,), (np.array([0.5, -1.0, 2.0]),))
    np.testing.assert_allclose(tangent, want @ np.array([0.5, -1.0, 2.0]), rtol=1e-6)
    batch = np.stack([x, 2 * x])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(fn))(batch), np.stack(
        [want, _central(fn, 2 * x)]), rtol=1e-6, atol=1e-8)


def test_a_row_of_a_2d_array_stays_a_view() -> None:
    with pytest.raises(s2s.TransformError, match="shares memory with `y`"):
        s2s.grad(_rows_not_swapped)(np.array([0.3, -0.7, 1.2]))
