"""The generated hot paths (s2s/api/hotcode.py: one function per plan testing the
arguments' layouts, the guards and the result inline) against what they assume:
a module constant rebound between calls (an integer the code slices with, an array
replaced by another or written into in place), a default rebound, the rules'
generation bumped, float32 and float64 calls alternating, a 0-d array argument, a
NumPy scalar, a dict argument, the caller writing into the gradient it got.  Every
gradient is JAX's (``jax.grad`` of the same source on ``jax.numpy``), checked at
every call (the 1st, 3rd and 10th among them), of its primal's dtype and shape,
writeable, sharing memory with no argument; and the hot path is shown to be the one
that ran (``_hotfn``)."""

from __future__ import annotations

import types

import numpy as np
import pytest

import s2s
from s2s.api.hotcode import MISS, no_hot
from s2s.primitives import registry

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

HEAD = 2
TABLE = np.array([0.5, -1.0, 2.0])


def sliced(x, y):
    return np.sum(np.sin(x[:HEAD]) * y[:HEAD]) + np.sum(x**2)


def tabled(x):
    return np.sum(np.tanh(x) * TABLE)


def headed(x):
    return np.sum(np.tanh(x[:HEAD] * TABLE[:HEAD]) ** 2)


def defaulted(x, a=1.5):
    return np.sum(np.sin(a * x) ** 2)


def by_key(p, x):
    return np.sum(np.tanh(p["w"] * x + p["b"]) ** 2) + np.sum(p["w"] ** 2)


def scaled(s, x):
    return np.sum(np.sin(s * x)) * s


@pytest.fixture(autouse=True)
def _quick_specializing(monkeypatch):
    monkeypatch.setenv("S2S_PASSES_OFF", "all")  # (the path, not the rewrites)


_ORACLES: dict = {}


def oracle(f, argnums=0):
    """``jax.jit(jax.grad)`` of ``f``'s source on jax.numpy, with the module constants
    and defaults it reads now (compiled once per such state)."""
    key = (f, argnums, HEAD, TABLE.tobytes(), f.__defaults__)
    if key not in _ORACLES:
        glb = {**f.__globals__, "np": jnp, "HEAD": HEAD, "TABLE": jnp.asarray(TABLE)}
        twin = types.FunctionType(f.__code__, glb, f.__name__, f.__defaults__)
        _ORACLES[key] = jax.jit(jax.grad(twin, argnums))
    return _ORACLES[key]


def check(got, want, primal, args):
    if isinstance(primal, dict):
        assert type(got) is dict and list(got) == list(primal)
        for k in primal:
            check(got[k], want[k], primal[k], args)
        return
    assert type(got) is np.ndarray, type(got)
    assert got.dtype == np.result_type(primal) and got.shape == np.shape(primal)
    assert got.flags.writeable
    for a in jax.tree_util.tree_leaves(args) + [TABLE]:
        assert not (isinstance(a, np.ndarray) and np.may_share_memory(got, a))
    tol = 2e-5 if got.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, np.asarray(want, dtype=np.float64), rtol=tol, atol=tol)


def calls(g, f, make, n=10, hot_from=4):
    """``n`` calls on ``make(v)`` for changing ``v``, each against JAX, the gradient
    then overwritten by the caller; from call ``hot_from`` on, the call ran the
    generated hot path (the latest plan's: made at the 3rd call, taken from the 5th)."""
    for k, v in enumerate(np.linspace(-1.2, 1.3, n), 1):
        args = make(v)
        got = g(*args)
        check(got, oracle(f)(*jax.tree_util.tree_map(jnp.asarray, args)), args[0], args)
        if k >= hot_from:
            assert g._hotfn is not no_hot and g._hotfn(args) is not MISS
        for leaf in jax.tree_util.tree_leaves(got):
            leaf[...] = 1e6  # (no later call and no argument may see it)


def vec(v, n=3, dtype=np.float64):
    return (np.linspace(-1.0, 1.0, n) * v + 0.3).astype(dtype)


def test_module_integer_rebound_between_calls():
    global HEAD
    g = s2s.grad(sliced)
    calls(g, sliced, lambda v: (vec(v), vec(-v)))
    old = g._hotfn
    try:
        HEAD = 1
        assert old((vec(0.1), vec(0.2))) is MISS  # (its guard fails)
        calls(g, sliced, lambda v: (vec(v), vec(-v)))
        assert g._hotfn is not old
    finally:
        HEAD = 2
    calls(g, sliced, lambda v: (vec(v), vec(-v)))


def test_module_array_written_into_and_replaced():
    global TABLE
    g = s2s.grad(tabled)
    calls(g, tabled, lambda v: (vec(v),))
    saved = TABLE
    try:
        TABLE[...] = [1.0, 2.0, -3.0]  # (in place: the same object, read at each call)
        calls(g, tabled, lambda v: (vec(v),), hot_from=1)
        TABLE = np.array([-2.0, 0.25, 4.0])  # (another object: the guard fails)
        calls(g, tabled, lambda v: (vec(v),))
        TABLE = np.array([-2.0, 0.25, 4.0, 1.0])[:3].copy()  # (again, same values)
        calls(g, tabled, lambda v: (vec(v),))
    finally:
        TABLE = saved
        TABLE[...] = [0.5, -1.0, 2.0]


def test_default_rebound_and_rules_bumped():
    g = s2s.grad(defaulted)
    calls(g, defaulted, lambda v: (vec(v),))
    defaulted.__defaults__ = (0.5,)
    try:
        calls(g, defaulted, lambda v: (vec(v),))
    finally:
        defaulted.__defaults__ = (1.5,)
    calls(g, defaulted, lambda v: (vec(v),))
    old = g._hotfn
    registry.bump()  # (as registering a rule does: the generated test fails)
    assert old((vec(0.3),)) is MISS
    calls(g, defaulted, lambda v: (vec(v),))


def test_default_rebound_where_every_parameter_is_passed():
    """A call passing ``a`` reads no default: the generated path checks none (its
    source names no ``__defaults__``) and stays the one that runs after a rebinding;
    a call leaving ``a`` out reads it again (its own plan, guarded)."""
    g = s2s.grad(defaulted)
    calls(g, defaulted, lambda v: (vec(v), 0.7))
    assert "__defaults__" not in g._hotfn.__s2s_source__
    old = g._hotfn
    defaulted.__defaults__ = (0.5,)
    try:
        calls(g, defaulted, lambda v: (vec(v), 0.7), hot_from=1)
        assert g._hotfn is old
        calls(g, defaulted, lambda v: (vec(v),))
        assert "__defaults__" in g._hotfn.__s2s_source__
    finally:
        defaulted.__defaults__ = (1.5,)
    calls(g, defaulted, lambda v: (vec(v),))


def test_module_name_deleted_between_calls():
    """A module constant deleted: the generated path's ``d[k]`` raises KeyError, a
    miss; the checked path then raises the error a first call would."""
    global TABLE
    g = s2s.grad(tabled)
    calls(g, tabled, lambda v: (vec(v),))
    old, saved = g._hotfn, TABLE
    try:
        del TABLE
        assert old((vec(0.3),)) is MISS
        with pytest.raises(s2s.TransformError, match="`TABLE` is not defined"):
            g(vec(0.3))
    finally:
        TABLE = saved
    calls(g, tabled, lambda v: (vec(v),))


def test_another_layout_misses():
    """The generated path's one comparison of the arguments' layouts: another shape,
    dtype, array type or number of arguments is a miss, as is an argument with no
    dtype or one whose ``dtype`` raises (never the error)."""
    g = s2s.grad(sliced)
    calls(g, sliced, lambda v: (vec(v), vec(-v)))
    hot = g._hotfn

    class Sub(np.ndarray):
        pass

    class Odd:
        shape = (3,)

        @property
        def dtype(self):
            raise ZeroDivisionError

    assert hot((vec(0.3), vec(0.2))) is not MISS
    for args in [(vec(0.3, n=4), vec(0.2)), (vec(0.3), vec(0.2, n=2)),
                 (vec(0.3), vec(0.2, dtype=np.float32)), (vec(0.3).view(Sub), vec(0.2)),
                 (list(vec(0.3)), vec(0.2)), (Odd(), vec(0.2)), (vec(0.3),),
                 (vec(0.3), vec(0.2), vec(0.1))]:
        assert hot(args) is MISS, args
    calls(g, sliced, lambda v: (vec(v, n=4), vec(-v, n=4)))


def test_float32_and_float64_alternate_and_0d():
    g = s2s.grad(sliced)
    for k in range(12):
        dtype = np.float32 if k % 2 else np.float64
        v = 0.1 * k - 0.5
        args = (vec(v, dtype=dtype), vec(-v, dtype=dtype))
        got = g(*args)
        check(got, oracle(sliced)(*map(jnp.asarray, args)), args[0], args)
        got[...] = 1e6
    h = s2s.grad(tabled)
    z = s2s.grad(lambda x: np.sin(x) * x)
    for k, v in enumerate(np.linspace(-1, 1, 10)):
        x = np.asarray(v)  # (a 0-d array: a new 0-d array back, never x)
        got = z(x)
        assert type(got) is np.ndarray and got.shape == () and not np.shares_memory(got, x)
        np.testing.assert_allclose(got, np.cos(v) * v + np.sin(v), rtol=1e-12)
        got[...] = 1e6
    assert z._hotfn is not no_hot
    calls(h, tabled, lambda v: (vec(v, dtype=np.float32),))


def test_dict_and_numpy_scalar_arguments():
    g = s2s.grad(by_key)
    calls(g, by_key, lambda v: ({"w": vec(v), "b": vec(-v)}, vec(1.0)))
    calls(g, by_key, lambda v: ({"b": vec(-v), "w": vec(v)}, vec(1.0)))  # (reordered)
    calls(g, by_key, lambda v: ({"w": vec(v), "b": vec(-v)}, vec(1.0)))
    s = s2s.grad(scaled)
    for k, v in enumerate(np.linspace(0.2, 1.4, 10), 1):
        for a in (np.float64(v), np.float32(v)):
            x = vec(v, dtype=a.dtype)
            got = s(a, x)
            assert type(got) is np.ndarray and got.dtype == a.dtype and got.shape == ()
            want = oracle(scaled)(jnp.asarray(a), jnp.asarray(x))
            tol = 2e-5 if a.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
            got[...] = 1e6
    assert s._hotfn is not no_hot


def test_hvp_generated_path_follows_module_state():
    """jvp of grad (a Hessian-vector product) through its generated path: a module
    integer the code slices with rebound, a module array replaced, float32 after
    float64, the caller writing into both results."""
    global TABLE, HEAD
    g = s2s.grad(headed)
    glb = {**headed.__globals__, "np": jnp}

    def want(x, v):
        f = types.FunctionType(headed.__code__, {**glb, "TABLE": jnp.asarray(TABLE),
                                                 "HEAD": HEAD})
        return jax.jvp(jax.grad(f), (jnp.asarray(x),), (jnp.asarray(v),))

    saved = TABLE
    try:
        for k in range(14):
            if k == 6:  # (the latest plan's generated path, taken, now fails its guard)
                from s2s.api.pushforward import _LATEST

                hot = _LATEST[2].last_hot
                assert _LATEST[0] is g and hot is _LATEST[2].last[4][10] is not None
                assert hot((vec(0.1),), (vec(0.5),)) is not MISS
                HEAD = 1
                assert hot((vec(0.1),), (vec(0.5),)) is MISS
            if k == 10:
                TABLE = np.array([-2.0, 0.25, 4.0])
            dtype = np.float32 if k in (8, 9) else np.float64
            x, v = vec(0.2 * k - 1.0, dtype=dtype), vec(0.5, dtype=dtype)
            out, tangent = s2s.jvp(g, (x,), (v,))
            w_out, w_tangent = want(x, v)
            tol = 2e-5 if dtype == np.float32 else 1e-12
            for got, w in ((out, w_out), (tangent, w_tangent)):
                assert got.dtype == dtype and got.flags.writeable
                assert not np.may_share_memory(got, x) and not np.may_share_memory(got, v)
                np.testing.assert_allclose(got, np.asarray(w, np.float64), rtol=tol, atol=tol)
            out[...], tangent[...] = 1e6, 1e6
    finally:
        TABLE, HEAD = saved, 2
