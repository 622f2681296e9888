"""A JAX-backend jit whose code calls a user's helper function keeps a guarded lane
(api/jit_calls.guarded_call) on every path a call can take: a dict argument (the keyed
path), a static argument, ``jit(vmap(grad))`` and ``jit(vmap(grad))`` of a dict; the
helper's identity (and a guarded number's) is compared at every call, no free path's
frame.  Rebinding the helper at the 3rd call and back at the 10th, a module number
changed at the 5th, new data at every call and the caller's arrays written in place
after it must give the new gradient each time: against the gradient by hand (default
tier) and ``jax.grad`` of the same source (its ``np`` jax.numpy, the module's names
read when it runs; float64 and float32, slow); an unchanged call traces nothing new.
"""

from __future__ import annotations

import collections
import types

import jaxlanes19_fns as M
import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

_LOGISTIC = M.logistic
KINDS = ("dict", "static", "vmap", "vmap_dict")
PATHS = {"dict": "_call_guarded_keyed", "static": "_call_guarded",
         "vmap": "_call_guarded_vmapped", "vmap_dict": "_call_guarded_vmapped_keyed"}


@pytest.fixture(autouse=True)
def fresh_module(monkeypatch):
    for name in ("logistic", "hinge2", "SCALE"):
        monkeypatch.setattr(M, name, getattr(M, name))


def _jit(kind):
    if kind == "dict":
        return s2s.jit(s2s.grad(M.dict_loss), backend="jax")
    if kind == "static":
        return s2s.jit(s2s.grad(M.static_loss), backend="jax", static_argnums=3)
    fn = M.dict_loss if kind == "vmap_dict" else M.plain_loss
    return s2s.jit(s2s.vmap(s2s.grad(fn), in_axes=(None, 0, 0)), backend="jax")


def _arguments(kind, rng, rows, dtype):
    w = rng.normal(size=3).astype(dtype)
    x = rng.normal(size=(rows, 3)).astype(dtype)
    y = rng.choice([-1.0, 1.0], rows).astype(dtype)
    if kind in ("dict", "vmap_dict"):
        return ({"w": w, "b": np.asarray(rng.normal(), dtype)}, x, y), x
    if kind == "static":
        return (w, x, y, 2.5), x
    return (w, x, y), x


def _dz(z, hinge):
    return -2.0 * np.maximum(1.0 - z, 0.0) if hinge else -1.0 / (1.0 + np.exp(z))


def _by_hand(kind, args, hinge):
    """The gradient, by hand, in float64."""
    a = [({k: np.float64(v) if v.ndim == 0 else v.astype(np.float64) for k, v in t.items()}
          if type(t) is dict else np.asarray(t, np.float64)) for t in args]
    p, x, y = a[:3]
    w, b = (p["w"], p["b"]) if type(p) is dict else (p, 0.0)
    z = y * (x @ w + b)
    g = _dz(z, hinge) * y
    if kind == "static":
        return 2.5 * x.T @ g / len(z)
    if kind == "dict":
        return {"w": x.T @ g / len(z), "b": np.sum(g) / len(z) + 2 * M.SCALE * b}
    if kind == "vmap":
        return x * g[:, None]
    return {"w": x * g[:, None], "b": g + 2 * M.SCALE * b}


def _twin(fn):
    """``fn``'s own code with ``np`` as jax.numpy, the module's helper as it is bound
    now (on jax.numpy too)."""
    names = dict(vars(M), np=jnp)
    helper = M.logistic
    names["logistic"] = types.FunctionType(helper.__code__, names, helper.__name__)
    return types.FunctionType(fn.__code__, names, fn.__name__)


def _jax_gradient(kind, args):
    if kind == "dict":
        return jax.grad(_twin(M.dict_loss))(*args)
    if kind == "static":
        return jax.grad(_twin(M.static_loss))(*args)
    fn = M.dict_loss if kind == "vmap_dict" else M.plain_loss
    return jax.vmap(jax.grad(_twin(fn)), in_axes=(None, 0, 0))(*args)


def _leaves(tree):
    return [np.asarray(t) for _, t in sorted(tree.items())] if type(tree) is dict \
        else [np.asarray(tree)]


def _tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)


def _change(i):
    M.logistic = M.hinge2 if 3 <= i < 10 else _LOGISTIC  # (the first one again at 10)
    M.SCALE = 2.0 if i == 5 else 1.0  # (an equal float, another object, at 6: no trace)


def _twelve_calls(kind, dtype, rows, oracle):
    j = _jit(kind)
    rng = np.random.default_rng(7)
    for i in range(12):
        _change(i)
        args, x = _arguments(kind, rng, rows.get(i, 6), dtype)
        for _ in range(2):  # (the second call the same: no new trace)
            got = j(*args)
            assert j._call.__name__ == PATHS[kind], (kind, i)  # (one frame: the path's)
            if type(got) is dict:
                assert list(got) == list(args[0]), i  # (the caller's key order)
            want = oracle(kind, args, 3 <= i < 10)
            for a, b in zip(_leaves(got), _leaves(want), strict=True):
                assert a.dtype == dtype, (kind, i)
                np.testing.assert_allclose(a, b, **_tol(dtype), err_msg=f"{kind} call {i}")
        x[...] = 7.0  # (the caller writes its arrays in place after the call)
    made = j._compilations
    for _ in range(5):  # (no trace again: the same lane, nothing new)
        j(*args)
    assert j._compilations == made
    info = j.cache_info()
    assert info.misses == made and info.hits == 24 + 5 - made, info
    return made


@pytest.mark.parametrize("kind", KINDS)
def test_a_rebound_helper_on_each_path_by_hand(kind):
    """Cheap: the same shapes at every call: traces for (logistic), (hinge2),
    (hinge2, SCALE 2.0) where SCALE is read, (logistic) again found at the 10th."""
    made = _twelve_calls(kind, np.float64, {}, lambda k, a, h: _by_hand(k, a, h))
    assert made == (3 if kind in ("dict", "vmap_dict") else 2)


# traces: (logistic, 6 rows), (hinge2, 1 row) at the 3rd call, (hinge2, 6), (hinge2,
# 6, SCALE 2.0) where read, and (logistic, 2 rows) at the 10th; the 11th finds the first
ROWS = {3: 1, 10: 2}


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", KINDS)
def test_a_rebound_helper_against_jax(kind, dtype):
    made = _twelve_calls(kind, dtype, ROWS, lambda k, a, h: _jax_gradient(k, a))
    assert made == (5 if kind in ("dict", "vmap_dict") else 4)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_dict_walked_in_its_key_order_through_a_lane(dtype):
    """The loss walks its dict (``p.values()``): the caller's key order decides the
    value. Two orders alternate: two traces, each given its own order (JAX's oracle
    on an OrderedDict, which jax.jit flattens in its order)."""
    j = s2s.jit(s2s.grad(M.ordered_loss), backend="jax")
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 3)).astype(dtype)
    y = rng.choice([-1.0, 1.0], 5).astype(dtype)
    for i in range(10):
        M.logistic = M.hinge2 if i >= 6 else _LOGISTIC
        w, c = rng.normal(size=3).astype(dtype), rng.normal(size=2).astype(dtype)
        p = {"w": w, "c": c} if i % 2 else {"c": c, "w": w}
        got = j(p, x, y)
        assert j._call.__name__.startswith("_call_guarded"), i
        assert list(got) == list(p)
        want = jax.grad(_twin(M.ordered_loss))(collections.OrderedDict(p), x, y)
        for k in p:
            assert got[k].dtype == dtype
            np.testing.assert_allclose(got[k], want[k], **_tol(dtype), err_msg=f"{i} {k}")
    assert j._compilations == 4  # (two orders, two helpers)


@pytest.mark.slow
def test_a_keyed_lane_rebound_to_an_array_goes_the_free_path():
    """The helper's name comes to hold a float array (a value to pass, not a
    function: the trace fails as the NumPy backend's call does), then a function
    again: right each time, and no lane is left holding the old function."""
    j = s2s.jit(s2s.grad(M.dict_loss), backend="jax")
    p, x, y = {"w": np.ones(3), "b": np.asarray(0.5)}, np.ones((4, 3)), -np.ones(4)
    np.testing.assert_allclose(j(p, x, y)["w"], _by_hand("dict", (p, x, y), False)["w"])
    assert j._call.__name__.startswith("_call_guarded")
    M.logistic = M.hinge2
    np.testing.assert_allclose(j(p, x, y)["w"], _by_hand("dict", (p, x, y), True)["w"])
    M.logistic = np.ones(4)
    with pytest.raises(Exception):
        j(p, x, y)
    M.logistic = _LOGISTIC
    np.testing.assert_allclose(j(p, x, y)["b"], _by_hand("dict", (p, x, y), False)["b"])


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_vmapped_jit_on_the_free_path_sees_its_helper_rebound(dtype, monkeypatch):
    """A module array passed at every call sends the vmapped jit the free path's way
    (``_call_free``); its helper rebound at the 3rd call must still change the
    gradient: the vmapped code of a signature was made once, from the first call's
    example, and kept the old helper's (a wrong number on main)."""
    monkeypatch.setattr(M, "WEIGHT", M.WEIGHT)
    j = s2s.jit(s2s.vmap(s2s.grad(M.weighted_loss), in_axes=(None, 0, 0)), backend="jax")
    rng = np.random.default_rng(11)
    for i in range(6):
        M.logistic = M.hinge2 if i >= 3 else _LOGISTIC
        M.WEIGHT = rng.normal(size=3).astype(dtype)
        w, x = rng.normal(size=3).astype(dtype), rng.normal(size=(5, 3)).astype(dtype)
        y = rng.choice([-1.0, 1.0], 5).astype(dtype)
        got = np.asarray(j(w, x, y))
        assert j._call.__name__ == "_call_free", i
        z = y * (x @ (w * M.WEIGHT)).astype(np.float64)
        want = (x * M.WEIGHT) * (_dz(z, i >= 3) * y)[:, None]
        theirs = jax.vmap(jax.grad(_twin(M.weighted_loss)), in_axes=(None, 0, 0))(w, x, y)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, **_tol(dtype), err_msg=f"call {i}")
        np.testing.assert_allclose(got, np.asarray(theirs), **_tol(dtype), err_msg=f"call {i}")


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["static_dict_loss", "nested_loss"])
def test_a_dict_beside_a_static_argument_or_in_a_dict(name, dtype):
    """The keyed lane's other ways: a dict beside a static argument (its Keyed made
    by ``keyed_args``, in a second frame), a dict in the dict (the shallow Keyed
    refused by the trace, then looked into); the helper rebound at the 2nd call and
    back at the 4th, the static value changed at the 5th; keywords at odd calls."""
    fn = getattr(M, name)
    static = name == "static_dict_loss"
    j = s2s.jit(s2s.grad(fn), backend="jax", **(dict(static_argnums=3) if static else {}))
    rng = np.random.default_rng(13)
    for i in range(6):
        M.logistic = M.hinge2 if 2 <= i < 4 else _LOGISTIC
        w = rng.normal(size=3).astype(dtype)
        p = ({"w": w, "b": np.asarray(0.3, dtype)} if static else
             {"inner": {"w": w}, "c": rng.normal(size=2).astype(dtype)})
        x, y = rng.normal(size=(5, 3)).astype(dtype), rng.choice([-1.0, 1.0], 5).astype(dtype)
        extra = (1.5 + (i == 5),) if static else ()
        got = j(p, x, y, *extra) if i % 2 == 0 or static else j(p, x=x, y=y)
        assert j._call.__name__ == "_call_guarded_keyed", i
        want = jax.grad(_twin(fn))(p, x, y, *extra)
        assert list(got) == list(p)
        for a, b in zip(jax.tree_util.tree_leaves(dict(got)),
                        jax.tree_util.tree_leaves(dict(want)), strict=True):
            assert np.asarray(a).dtype == dtype
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), **_tol(dtype),
                                       err_msg=f"{name} call {i}")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_module_mask_written_in_place_between_calls(dtype, monkeypatch):
    """A module boolean array the loss reads is guarded by its bytes: its fast check
    (``same_bytes``: the same object, dtype, shape and bytes) keeps the guarded lane
    where the free path's general reading hashed its bytes at every call; the mask
    written in place at the 3rd call, a new equal array at the 5th (no trace), the
    first values again at the 7th (the first trace found): against jax.grad."""
    monkeypatch.setattr(M, "MASK", M.MASK.copy())
    first = M.MASK.copy()
    j = s2s.jit(s2s.grad(M.masked_loss), backend="jax")
    rng = np.random.default_rng(17)
    for i in range(9):
        if i == 3:
            M.MASK[:2] = ~M.MASK[:2]  # (in place: the same object)
        elif i == 5:
            M.MASK = M.MASK.copy()  # (another object, equal bytes: no new trace)
        elif i == 7:
            M.MASK[...] = first  # (the first values again)
        w = rng.normal(size=3).astype(dtype)
        x, y = rng.normal(size=(6, 3)).astype(dtype), rng.choice([-1.0, 1.0], 6).astype(dtype)
        got = np.asarray(j(w, x, y))
        assert j._call.__name__ == "_call_guarded", i
        want = jax.grad(_twin(M.masked_loss))(w, x, y)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, np.asarray(want), **_tol(dtype), err_msg=f"call {i}")
    assert j._compilations == 2
