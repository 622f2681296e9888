"""The JAX backend follows what a free name holds into lists, tuples, dicts,
NamedTuples, partials and objects, at every call (api/jit_jax_free.py): an item a
training loop replaces (``LAYERS[0] = new``), an append, a dict value rebound, an
object's number or array attribute set (``cfg.scale = 3.0``, ``cfg.w = new``), a nested
tuple of arrays, a closure cell holding a list.  Each ``s2s.jit(..., backend="jax")``
result against the NumPy backend's gradient and ``jax.grad`` of the same source (its
``np`` jax.numpy, the module's state read when it runs), float64 and float32, over 12
calls whose values change at the 3rd and the 10th (0-row and 1-row batches among them),
and the number of traces: an unchanged call never traces again.
"""

from __future__ import annotations

import functools
import types
from typing import NamedTuple

import jaxfree18_fns as F
import numpy as np
import pytest

import s2s
from s2s.api import jit_jax_free

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


class Batch(NamedTuple):
    x: object
    w: object


def _on_jax(fn, names, closure=None):
    return types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__,
                              closure if closure is not None else fn.__closure__)


def _twin(fn, closure=None):
    """``fn``'s own code with ``np`` as jax.numpy (its module's names read now)."""
    names = dict(vars(F), np=jnp)
    if isinstance(F.LOSS, F.Loss):  # (the callable object's method, on JAX too)
        names["LOSS"] = types.MethodType(_on_jax(F.Loss.__call__, names), F.LOSS)
    names["ACT"] = _on_jax(F.ACT, names)
    names["PREDICT"] = types.MethodType(_on_jax(F.Model.predict, names), F.PREDICT.__self__)
    if isinstance(F.SCALED, functools.partial):
        names["SCALED"] = functools.partial(_on_jax(F.scaled_sum, names), *F.SCALED.args)
    return _on_jax(fn, names, closure)


def _tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)


def _twelve_calls(fn, change, dtype, closure=None):
    """12 calls, ``change(i, rng)`` setting the state before call ``i``: each the
    NumPy backend's and jax.grad's; the number of traces the jit made."""
    j = s2s.jit(s2s.grad(fn), backend="jax")
    rng = np.random.default_rng(7)
    v = rng.normal(size=3).astype(dtype)
    for i in range(12):
        change(i, rng)
        got = j(v)
        want = s2s.grad(fn)(v)
        theirs = jax.grad(_twin(fn, closure))(jnp.asarray(v))
        assert np.asarray(got).dtype == want.dtype == dtype, i
        np.testing.assert_allclose(np.asarray(got), want, **_tol(dtype), err_msg=f"call {i}")
        np.testing.assert_allclose(np.asarray(got), np.asarray(theirs), **_tol(dtype),
                                   err_msg=f"call {i}")
    return j._compilations


def _rows(i):
    return {3: 1, 10: 0}.get(i, 5)  # (a 1-row batch at the 3rd call, 0 rows at the 10th)


@pytest.fixture(autouse=True)
def fresh_module(monkeypatch):
    for name in ("LAYERS", "SHIFTS", "PARAMS", "NEST", "CFG", "BATCH", "SCALED", "LOSS"):
        monkeypatch.setattr(F, name, None)
    monkeypatch.setattr(F, "XB", np.ones(3))
    monkeypatch.setattr(F, "SCALE", 1.0)
    monkeypatch.setattr(F, "ACT", F.relu)
    monkeypatch.setattr(F, "PREDICT", F.Model(np.ones(3)).predict)


# ---- what a free value is split into (cheap: no JAX) ---------------------------------


def test_split_passes_float_arrays_and_guards_the_rest():
    w, idx = np.ones((2, 3)), np.arange(3)
    leaves, guard = jit_jax_free.split([w, {"b": 0.5, "i": idx}, (w, "tanh", None)])
    assert len(leaves) == 2 and all(leaf is w for leaf in leaves)
    same = jit_jax_free.split([np.zeros((2, 3)), {"b": 0.5, "i": np.arange(3)},
                               (w, "tanh", None)])[1]
    assert guard == same and hash(guard) == hash(same)  # (new float values: no retrace)
    for other in ([w, {"b": 0.25, "i": idx}, (w, "tanh", None)],  # a number
                  [w, {"b": 0.5, "i": idx + 1}, (w, "tanh", None)],  # an index's values
                  [w, {"i": idx, "b": 0.5}, (w, "tanh", None)],  # the keys' order
                  [w, {"b": 0.5, "i": idx}, (w, "relu", None)],  # a string
                  [w, {"b": 0.5, "i": idx}, [w, "tanh", None]],  # a list for a tuple
                  [w, {"b": 0.5, "i": idx}, (w, "tanh", None), 1.0]):  # an append
        assert jit_jax_free.split(other)[1] != guard
    assert jit_jax_free.split(-0.0)[1] != jit_jax_free.split(0.0)[1]
    assert jit_jax_free.split(float("nan"))[1] == jit_jax_free.split(float("nan"))[1]
    assert jit_jax_free.split(1)[1] != jit_jax_free.split(True)[1]
    assert jit_jax_free.split(Batch(w, w))[1] != jit_jax_free.split((w, w))[1]
    demoted, guard = jit_jax_free.split([w], arrays=True)  # (bytes: a trace's constant)
    assert not demoted and guard != jit_jax_free.split([w * 2], arrays=True)[1]


def test_split_guards_objects_by_identity_and_partials_by_their_values():
    a, b = F.Config(1.0, np.ones(2)), F.Config(1.0, np.ones(2))
    assert jit_jax_free.split([a])[1] == jit_jax_free.split([a])[1]
    assert jit_jax_free.split([a])[1] != jit_jax_free.split([b])[1]
    p = F.partial_of(np.ones(3))
    leaves, guard = jit_jax_free.split(p)
    assert leaves == [p.args[0]] and guard == jit_jax_free.split(F.partial_of(np.zeros(3)))[1]
    masked = np.ma.masked_array(np.ones(3), [0, 1, 0])
    guard = jit_jax_free.split(masked)[1]
    masked[0] = 2.0  # (a subclass of ndarray: by its bytes and mask)
    assert jit_jax_free.split(masked)[1] != guard


def test_vocabulary_is_not_read_at_every_call():
    assert jit_jax_free.vocabulary(np) and jit_jax_free.vocabulary(np.tanh)
    assert jit_jax_free.vocabulary(np.random.default_rng(0))
    for value in ([np.tanh], F.Config(1.0, 2.0), 1.0, np.float32(1), np.ones(2), "a"):
        assert not jit_jax_free.vocabulary(value)


@pytest.mark.slow
def test_a_list_item_replaced_is_read_at_the_next_call():
    """The list a module name holds, an item replaced: the next call's gradient."""
    F.LAYERS = [np.ones((4, 3)), np.linspace(0.1, 1, 8).reshape(2, 4)]
    j = s2s.jit(s2s.grad(F.list_loss), backend="jax")
    v = np.array([0.5, -1.0, 2.0])
    first = np.asarray(j(v))
    F.LAYERS[0] = np.full((4, 3), 0.25)
    np.testing.assert_allclose(np.asarray(j(v)), s2s.grad(F.list_loss)(v), rtol=1e-12)
    assert not np.allclose(first, np.asarray(j(v)))
    assert j._compilations == 1


# ---- twelve calls, values changing at the 3rd and the 10th ----------------------------


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_list_item_replaced_and_written_in_place(dtype):
    F.LAYERS = [np.ones((4, 3), dtype), np.ones((5, 4), dtype)]

    def change(i, rng):
        F.LAYERS[1] = rng.normal(size=(_rows(i), 4)).astype(dtype)  # (a new batch)
        if i == 3:
            F.LAYERS[0] = rng.normal(size=(4, 3)).astype(dtype)
        if i == 10:
            F.LAYERS[0] *= 2  # (in place)

    assert _twelve_calls(F.list_loss, change, dtype) == 3  # (5, 1 and 0 rows)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_list_appended_to_and_an_item_rebound(dtype):
    F.SHIFTS = [0.1]

    def change(i, rng):
        if i == 3:
            F.SHIFTS.append(0.5)  # (the loop one longer: traced again)
        if i == 10:
            F.SHIFTS[0] = -1.0

    assert _twelve_calls(F.shifts_loss, change, dtype) == 3


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dict_values_rebound(dtype):
    F.PARAMS = {"w": np.ones(3, dtype), "b": 0.5}

    def change(i, rng):
        F.PARAMS["w"] = rng.normal(size=3).astype(dtype)  # (every call: no new trace)
        F.PARAMS["b"] = 1.5 if 3 <= i < 10 else 0.5  # (0.5 again: its first trace)

    assert _twelve_calls(F.dict_loss, change, dtype) == 2


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_object_attributes_set_and_the_object_rebound(dtype):
    F.CFG = F.Config(2.0, np.ones(3, dtype))

    def change(i, rng):
        F.CFG.w = rng.normal(size=3).astype(dtype)  # (an array attribute: passed)
        if i == 3:
            F.CFG.scale = 3.0  # (a number attribute: guarded)
        if i == 10:
            F.CFG.w[:] = 0.5  # (in place)
            F.CFG = F.Config(-1.0, F.CFG.w.copy())  # (another object: traced again)

    assert _twelve_calls(F.object_loss, change, dtype) == 3


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nested_tuple_of_arrays_rebound(dtype):
    F.NEST = (np.ones((5, 4), dtype), (np.ones((4, 3), dtype), 2.0))

    def change(i, rng):
        F.NEST = (rng.normal(size=(_rows(i), 4)).astype(dtype),
                  (rng.normal(size=(4, 3)).astype(dtype), 3.0 if i >= 10 else 2.0))

    assert _twelve_calls(F.nested_loss, change, dtype) == 4  # (5, 1, 0 rows; 5 and 3.0)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_closure_cell_holding_a_list(dtype):
    loss, layers = F.cell_loss()
    layers += [np.ones((4, 3), dtype), np.ones((5, 4), dtype)]

    def change(i, rng):
        layers[1] = rng.normal(size=(_rows(i), 4)).astype(dtype)
        if i in (3, 10):
            layers[0] = rng.normal(size=(4, 3)).astype(dtype)

    assert _twelve_calls(loss, change, dtype) == 3


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_callable_object_weights_and_namedtuple_and_partial(dtype):
    F.LAYERS = [None, np.ones((5, 4), dtype)]
    F.LOSS = F.Loss(np.ones((4, 3), dtype))
    F.SCALED = F.partial_of(np.ones(3, dtype))

    def change(i, rng):
        F.LAYERS[1] = rng.normal(size=(_rows(i), 4)).astype(dtype)
        F.LOSS.w = rng.normal(size=(4, 3)).astype(dtype)
        F.BATCH = Batch(rng.normal(size=(_rows(i), 4)).astype(dtype),
                        rng.normal(size=(4, 3)).astype(dtype))
        if i == 3:
            F.SCALED.args[0][:] = 2.0  # (the partial's array, in place)
        if i == 10:
            F.LOSS = F.Loss(F.LOSS.w + 1)
            F.SCALED = F.partial_of(np.full(3, -1.0, dtype))

    assert _twelve_calls(F.callable_loss, change, dtype) == 4  # (rows; object)
    assert _twelve_calls(F.batch_loss, change, dtype) == 3
    assert _twelve_calls(F.partial_loss, change, dtype) == 1


@pytest.mark.slow
def test_the_fast_lane_falls_back_when_a_name_holds_another_kind_of_value():
    """A name read in C on the fast lane (a float array passed as it is, a float
    guarded by identity) comes to hold a jax.Array, a list, an integer array, an int,
    an equal float that is another object, a float32 array, a 0-d array: each call the
    NumPy backend's gradient; an equal value traces nothing new."""
    j = s2s.jit(s2s.grad(F.fast_loss), backend="jax")
    v = np.array([0.5, -1.0, 2.0])
    rng = np.random.default_rng(3)
    holds = {3: lambda: jnp.asarray(rng.normal(size=3)), 5: lambda: [0.1, 0.2, 0.3],
             6: lambda: np.arange(3), 10: lambda: rng.normal(size=3).astype(np.float32),
             11: lambda: np.array(0.5)}
    traces = []
    for i in range(12):
        F.XB = holds.get(i, lambda: rng.normal(size=3))()
        F.SCALE = {8: 2, 9: float(np.float64(1.0))}.get(i, 1.0)
        for _ in range(2):  # (the second call the same: no new trace)
            got = np.asarray(j(v))
            held = F.XB  # (the NumPy backend given a jax.Array's values as NumPy's:
            F.XB = np.asarray(held) if i == 3 else held  # it fails at a jax.Array)
            want = s2s.grad(F.fast_loss)(v)
            F.XB = held
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-6 if i == 10 else 1e-12,
                                       err_msg=f"call {i}")
            traces.append(j._compilations)
        assert traces[-1] == traces[-2]
    assert traces[-1] <= 7  # (float64, list, int array, SCALE=2, float32, 0-d)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_module_function_rebound_and_a_bound_methods_object(dtype):
    """``ACT = softplus`` after ``ACT = relu`` (the transform inlined ACT: the emitted
    code does not read it; the NumPy backend normalizes again, the jit traces again);
    a bound method a module name holds, its object's weights set at every call."""
    model = F.Model(np.ones(3, dtype))
    F.PREDICT = model.predict

    def change(i, rng):
        F.ACT = F.softplus if 3 <= i < 10 else F.relu  # (relu again: its first trace)
        model.w = rng.normal(size=3).astype(dtype)

    assert _twelve_calls(F.act_loss, change, dtype) == 2
    assert _twelve_calls(F.method_loss, change, dtype) == 1
