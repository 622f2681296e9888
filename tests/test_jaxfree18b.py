"""A JAX-backend jit whose loss calls a user's helper function keeps a bare call
(api/jit_calls.guarded_call): the helper's identity (and a guarded number's) is read
in C and compared by ``is`` at every call.  Rebinding the helper (``logistic =
hinge2``), a closure cell's helper or a number at the 3rd and the 10th call must give
the new gradient: each call against the NumPy backend's and ``jax.grad`` of the same
source (its ``np`` jax.numpy, the module's names read when it runs), float64 and
float32; an unchanged call traces nothing new.
"""

from __future__ import annotations

import types

import jaxfree18b_fns as M
import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

HELPERS = ("logistic", "hinge2", "square", "cube")


@pytest.fixture(autouse=True)
def fresh_module(monkeypatch):
    for name in (*HELPERS, "SCALE"):
        monkeypatch.setattr(M, name, getattr(M, name))


def _on_jax(fn, names):
    return types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def _twin(fn):
    """``fn``'s own code with ``np`` as jax.numpy, the module's helpers as they are
    bound now (each on jax.numpy too)."""
    names = dict(vars(M), np=jnp)
    for name in HELPERS:
        names[name] = _on_jax(getattr(M, name), names)
    closure = None
    if fn.__closure__:  # (a cell's helper, on jax.numpy)
        closure = tuple(types.CellType(_on_jax(c.cell_contents, names))
                        for c in fn.__closure__)
    return types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__, closure)


def _tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)


def _twelve_calls(fn, change, dtype, *, twin=_twin):
    """12 calls, ``change(i)`` setting the state before call ``i`` (new data at each
    call): each the NumPy backend's gradient and jax.grad's; every call on the
    guarded lane; the traces made."""
    j = s2s.jit(s2s.grad(fn), backend="jax")
    rng = np.random.default_rng(5)
    w = rng.normal(size=3).astype(dtype)
    for i in range(12):
        change(i)
        x = rng.normal(size=({3: 1, 10: 0}.get(i, 6), 3)).astype(dtype)
        y = rng.choice([-1.0, 1.0], len(x)).astype(dtype)
        for _ in range(2):  # (the second call the same: no new trace)
            got = j(w, x, y)
            assert j._call.__name__ == "_call_guarded", i
            want = s2s.grad(fn)(w, x, y)
            theirs = jax.grad(twin(fn))(jnp.asarray(w), jnp.asarray(x), jnp.asarray(y))
            assert np.asarray(got).dtype == want.dtype == dtype, i
            np.testing.assert_allclose(np.asarray(got), want, **_tol(dtype),
                                       err_msg=f"call {i}")
            np.testing.assert_allclose(np.asarray(got), np.asarray(theirs), **_tol(dtype),
                                       err_msg=f"call {i}")
        x[...] = 7.0  # (the caller writes its arrays in place after the call)
    return j._compilations


def _rebind_logistic(i):
    M.logistic = M.hinge2 if 3 <= i < 10 else _LOGISTIC  # (the first one again at 10)


_LOGISTIC = M.logistic


# traces: (logistic, 6 rows), (hinge2, 1 row) at the 3rd call, (hinge2, 6), and
# (logistic, 0 rows) at the 10th; the 11th (logistic, 6) finds the first one's
TRACES = 4


def _by_hand(w, x, y, hinge):
    """The gradient of mean(logistic(y x.w)) or of mean(hinge2(y x.w)), by hand."""
    z = y * (x @ w)
    dz = -2.0 * np.maximum(1.0 - z, 0.0) if hinge else -1.0 / (1.0 + np.exp(z))
    return x.T @ (dz * y) / len(z)


def test_a_rebound_helper_at_calls_3_and_10_by_hand():
    """Cheap: the same shapes at every call, the gradient written by hand."""
    j = s2s.jit(s2s.grad(M.helper_loss), backend="jax")
    rng = np.random.default_rng(2)
    w = rng.normal(size=3)
    for i in range(12):
        _rebind_logistic(i)
        x, y = rng.normal(size=(5, 3)), rng.choice([-1.0, 1.0], 5)
        got = j(w, x, y)
        assert j._call.__name__ == "_call_guarded", i
        np.testing.assert_allclose(got, _by_hand(w, x, y, 3 <= i < 10), rtol=1e-12,
                                   err_msg=f"call {i}")
    assert j._compilations == 2
    info = j.cache_info()
    assert (info.hits, info.misses, info.currsize) == (10, 2, 2)


@pytest.mark.slow
def test_a_rebound_helper_gives_the_new_gradient_at_calls_3_and_10():
    assert _twelve_calls(M.helper_loss, _rebind_logistic, np.float64) == TRACES


@pytest.mark.slow
def test_a_rebound_helper_float32():
    assert _twelve_calls(M.helper_loss, _rebind_logistic, np.float32) == TRACES


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_two_helpers_and_a_number_of_one_module(dtype):
    square = M.square

    def change(i):
        _rebind_logistic(i)
        M.square = M.cube if i >= 10 else square
        M.SCALE = {3: 2.0, 4: 2, 5: float("2.0")}.get(i, 1.0)  # (2: an int; an equal
        # float that is another object: the same trace again)

    # (logistic 6 rows), (hinge2 1 row SCALE 2.0), (hinge2 6 2), (hinge2 6 2.0),
    # (hinge2 6 1.0), (logistic 0 cube), (logistic 6 cube): SCALE 2.0 at the 5th call
    # (another object of the 3rd's value) takes the 3rd's lane, traced for 6 rows
    assert _twelve_calls(M.two_helpers_loss, change, dtype) == 7


@pytest.mark.slow
def test_a_helper_in_a_closure_cell_rebound():
    fn = M.make_cell_loss(M.logistic)
    cell = fn.__closure__[0]

    def change(i):
        cell.cell_contents = M.hinge2 if 3 <= i < 10 else _LOGISTIC

    assert _twelve_calls(fn, change, np.float64) == TRACES


@pytest.mark.slow
def test_a_helper_rebound_to_an_array_leaves_the_guarded_lane():
    """A name the lane compares comes to hold what is passed (not a function at all:
    the trace's error), then a function again: the free path from then on, right."""
    j = s2s.jit(s2s.grad(M.helper_loss), backend="jax")
    w, x, y = np.ones(3), np.ones((4, 3)), np.ones(4)
    j(w, x, y)
    assert j._call.__name__ == "_call_guarded"
    M.logistic = M.hinge2
    np.testing.assert_allclose(j(w, x, y), s2s.grad(M.helper_loss)(w, x, y), rtol=1e-12)
    del M.logistic
    with pytest.raises(Exception):
        j(w, x, y)
    M.logistic = _LOGISTIC
    np.testing.assert_allclose(j(w, x, y), s2s.grad(M.helper_loss)(w, x, y), rtol=1e-12)
