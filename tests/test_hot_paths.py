"""The steady-state call paths of ``s2s.vmap(s2s.grad(f))`` (``Vmapped._run_hot``),
``s2s.jit(..., backend="numpy")`` of it, and ``s2s.jvp(s2s.grad(f), ...)`` (the
latest function's transform looked up by identity, ``FastEntry``'s checks inline):
against JAX at every call of a schedule where the values change at each call and the
call's signature changes under them (another shape, float32, a 0-d array, a NumPy
scalar, a list of primals, an integer primal, another function between two calls), a
module constant or a default is rebound, and the caller writes into the results and
into its own inputs afterwards (no result is an input, a view of one, or a buffer a
later call returns again)."""

from __future__ import annotations

import types

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

OFFSET = 0.25
SCALE = 1.5


def per_example(w, b, x, y):
    return np.log1p(np.exp(-y * (x @ w + b))) + OFFSET * np.sum(squash(w) ** 2)


def squash(x):
    return np.tanh(x)


def softer(x):
    return x / (1.0 + np.abs(x))


def tanh_sq(x):
    return SCALE * np.sum(squash(x) ** 2)


def cubic(x):
    return np.sum(x**3 * OFFSET)


def powered(x, k):
    return np.sum(np.tanh(x) ** k)


def with_defaults(x, a=1.0, b=2.0):
    return np.sum(np.sin(a * x) * b)


def twin(f, **extra):
    namespace = {**f.__globals__, "np": jnp, **extra}
    helper = f.__globals__["squash"]  # (the helper bound now, on jax.numpy too)
    namespace["squash"] = types.FunctionType(helper.__code__, namespace, helper.__name__)
    return types.FunctionType(f.__code__, namespace, f.__name__, f.__defaults__)


def close(got, want, dtype):
    tol = 2e-5 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(got, np.asarray(want), rtol=tol, atol=tol)


def owns(result, inputs):
    """A writeable array of its own: writing into the caller's inputs leaves it as
    it is (no input, nor a view of one, is returned)."""
    assert type(result) is np.ndarray and result.flags.writeable
    before = result.copy()
    for a in inputs:
        if isinstance(a, np.ndarray) and a.size:
            assert not np.may_share_memory(result, a)
            a[...] = 7.0
    np.testing.assert_array_equal(result, before)


# ---- vmap(grad) and s2s.jit(numpy) of it ------------------------------------------


def vmap_args(rng, call, n, dtype):
    w = rng.normal(size=3).astype(dtype)
    b = np.array(rng.normal(), dtype)
    if call == 7:  # a NumPy scalar where the hot entry was keyed by a 0-d array
        b = dtype(rng.normal())
    x = rng.normal(size=(n, 3)).astype(dtype)
    y = rng.choice([-1.0, 1.0], n).astype(dtype)
    return w, b, x, y


@pytest.mark.slow
@pytest.mark.parametrize("jitted", [False, True], ids=["vmap", "jit(numpy)"])
def test_vmapped_gradients_follow_every_change_between_calls(jitted, monkeypatch):
    make = s2s.vmap(s2s.grad(per_example), in_axes=(None, None, 0, 0))
    g = s2s.jit(make, backend="numpy") if jitted else make
    rng = np.random.default_rng(0)
    previous = None
    for call in range(12):
        n = 5 if call == 4 else 6  # another batch size at call 5
        dtype = np.float32 if call in (5, 6) else np.float64
        if call == 8:  # a module constant rebound (the code reads it)
            monkeypatch.setitem(per_example.__globals__, "OFFSET", -1.0)
        if call == 10:  # a helper rebound (the code inlined it)
            monkeypatch.setitem(per_example.__globals__, "squash", softer)
        args = vmap_args(rng, call, n, dtype)
        if call in (0, 8, 10):  # (JAX's, compiled once per module state)
            theirs = jax.jit(jax.vmap(jax.grad(twin(per_example, OFFSET=per_example.__globals__[
                "OFFSET"])), in_axes=(None, None, 0, 0)))
        want = theirs(*map(jnp.asarray, args))
        got = g(*args)
        assert got.dtype == dtype and got.shape == (n, 3)
        close(got, want, dtype)
        assert previous is None or not np.may_share_memory(got, previous)
        owns(got, args)
        got[...] = 99.0  # the caller writes into a result: the next call's is its own
        previous = got
    assert make._hot, "the hot path was never taken"
    if jitted:
        info = g.cache_info()
        # signatures: float64 batch 6, batch 5, float32, float32 with a scalar b, and
        # the scalar b in float64 (call 8), the helper rebound (call 11: the cache
        # key is the signature: a hit); the rest hits
        assert (info.compilations, info.hits) == (4, 8), info


def test_the_jits_hot_calls_count_as_hits_and_leave_another_jit_alone():
    v = s2s.vmap(s2s.grad(per_example), in_axes=(None, None, 0, 0))
    one, two = s2s.jit(v, backend="numpy"), s2s.jit(v, backend="numpy")
    rng = np.random.default_rng(1)
    for _ in range(5):
        args = vmap_args(rng, 0, 6, np.float64)
        close(one(*args), v(*args), np.float64)
    assert (one.cache_info().compilations, one.cache_info().hits) == (1, 4)
    args = vmap_args(rng, 0, 6, np.float64)
    two(*args)  # the vmap's hot entry is marked by `one` only: `two` counts its own
    assert (two.cache_info().compilations, two.cache_info().hits) == (1, 0)


def test_a_replaced_default_reaches_the_vmaps_hot_path(monkeypatch):
    g = s2s.vmap(s2s.grad(with_defaults))
    x = np.linspace(-1, 1, 12).reshape(4, 3)
    wants = {}  # JAX's answer once per defaults (each is an eager trace)
    for defaults in [(1.0, 2.0)] * 3 + [(1.0, -3.0)] * 3 + [(0.5, -3.0)] * 3:
        monkeypatch.setattr(with_defaults, "__defaults__", defaults)
        if defaults not in wants:
            wants[defaults] = jax.vmap(jax.grad(twin(with_defaults)))(x)
        close(g(x), wants[defaults], np.float64)


# ---- jvp of grad --------------------------------------------------------------------


def hvp_args(rng, call):
    dtype = np.float32 if call in (5, 6) else np.float64
    shape = (4,) if call == 4 else () if call == 7 else (6,)
    x = np.asarray(rng.normal(size=shape)).astype(dtype)
    v = np.asarray(rng.normal(size=shape)).astype(dtype)
    return x, v, dtype


def jax_hvp(f):
    grad = jax.grad(f)
    return jax.jit(lambda x, v: jax.jvp(grad, (x,), (v,)))


@pytest.mark.slow
def test_hvps_follow_every_change_between_calls(monkeypatch):
    g, other = s2s.grad(tanh_sq), s2s.grad(cubic)
    rng = np.random.default_rng(2)
    previous = None
    for call in range(14):
        x, v, dtype = hvp_args(rng, call)
        if call == 8:
            monkeypatch.setitem(tanh_sq.__globals__, "SCALE", -0.5)
        if call == 12:  # a helper rebound (the code inlined it)
            monkeypatch.setitem(tanh_sq.__globals__, "squash", softer)
        if call == 10:  # another function's jvp between two calls of this one
            o, o_dot = s2s.jvp(other, (x,), (v,))
            w, w_dot = jax.jvp(jax.grad(twin(cubic)), (x,), (v,))
            close(o, w, dtype)
            close(o_dot, w_dot, dtype)
        primals, tangents = ((x,), (v,)) if call != 9 else ([x], [v])  # lists at call 10
        out, out_dot = s2s.jvp(g, primals, tangents)
        if call in (0, 8, 12):  # (JAX's, compiled once per module state)
            oracle = jax_hvp(twin(tanh_sq, SCALE=tanh_sq.__globals__["SCALE"]))
        want, want_dot = oracle(jnp.asarray(x), jnp.asarray(v))
        for got, theirs in ((out, want), (out_dot, want_dot)):
            assert got.dtype == dtype and got.shape == x.shape
            close(got, theirs, dtype)
        assert previous is None or not np.may_share_memory(out_dot, previous)
        assert not np.may_share_memory(out, out_dot)
        owns(out_dot, (x, v))
        if x.ndim:  # (a 0-d gradient comes back a NumPy scalar, as before the hot path)
            owns(out, (x, v))
            out[...] = 99.0
        out_dot[...] = -99.0
        previous = out_dot
    t = s2s.api.transformed.JVPS.get(g)[False]
    assert any(e.text is not None for e in t._by_signature.values()), "never specialized"
    assert s2s.api.pushforward._LATEST[0] is g  # (its calls took the hot path)


def test_an_integer_primal_never_takes_the_float_signatures_path():
    g = s2s.grad(powered)
    rng = np.random.default_rng(3)
    float0 = jax.dtypes.float0
    for call in range(10):
        x, v = rng.normal(size=5), rng.normal(size=5)
        k = 2 if call < 5 else 3
        out, out_dot = s2s.jvp(g, (x, k), (v, np.zeros((), float0)))
        want, want_dot = jax.jvp(lambda x: jax.grad(twin(powered))(x, k), (x,), (v,))
        close(out, want, np.float64)
        close(out_dot, want_dot, np.float64)


def model(x):
    return np.tanh(x) * SCALE, np.sum(x**2)


def test_a_function_with_and_without_aux_alternating():
    rng = np.random.default_rng(4)
    theirs = twin(model)
    for call in range(8):
        x, v = rng.normal(size=3), rng.normal(size=3)
        if call % 2:
            out, out_dot, aux = s2s.jvp(model, (x,), (v,), has_aux=True)
            want, want_dot, want_aux = jax.jvp(theirs, (x,), (v,), has_aux=True)
            close(aux, want_aux, np.float64)
        else:
            out, out_dot = s2s.jvp(model, (x,), (v,))
            want, want_dot = jax.jvp(theirs, (x,), (v,))
        for got, w in zip(jax.tree_util.tree_leaves((out, out_dot)),
                          jax.tree_util.tree_leaves((want, want_dot))):
            close(got, w, np.float64)


# ---- the free names' check (signatures.FreeSnapshot) ------------------------------

ARR = np.ones(3)


def closing(scale):
    def reads_all(x, a=1.0, *, b=2.0):
        return np.sum(x * ARR * a * b * OFFSET * scale)

    return reads_all


def test_the_compiled_free_names_check_agrees_with_the_loops(monkeypatch):
    """``FreeSnapshot.same`` compiles its checks into one expression at its first
    call: it says what the loops say for each change a cached code must notice (and
    for the one it need not: a new defaults tuple of the same objects)."""
    from s2s.api.signatures import FreeSnapshot

    fn = closing(3.0)
    snap = FreeSnapshot.take(s2s.grad(fn).ir)
    assert snap.same() and snap.same() and snap._same()  # (the second: compiled)
    assert "same" in vars(snap)
    module = fn.__globals__
    cell = fn.__closure__[0]
    changes = [
        # (another plain array of its layout passes: the code reads the name at each
        # call and keeps no fact of its values: tests/test_closure17.py)
        ("a module array rebound to one of its layout",
         lambda mp: mp.setitem(module, "ARR", np.ones(ARR.shape, ARR.dtype)), True),
        ("a module array rebound to another shape",
         lambda mp: mp.setitem(module, "ARR", np.ones((1, 3), ARR.dtype)), False),
        ("a module array rebound to another dtype",
         lambda mp: mp.setitem(module, "ARR", np.ones(ARR.shape, np.float32)), False),
        ("a module array rebound to a subclass", lambda mp: mp.setitem(
            module, "ARR", np.ma.masked_array(np.ones(ARR.shape, ARR.dtype))), False),
        ("a module array reshaped in place", lambda mp: setattr(ARR, "shape", (3, 1)), False),
        ("a module float rebound to an equal one",
         lambda mp: mp.setitem(module, "OFFSET", float("0.25")), False),
        ("a module name deleted", lambda mp: mp.delitem(module, "OFFSET"), False),
        ("the same defaults in a new tuple",
         lambda mp: mp.setattr(fn, "__defaults__", tuple(fn.__defaults__)), True),
        ("another default", lambda mp: mp.setattr(fn, "__defaults__", (3.0,)), False),
        ("another keyword default",
         lambda mp: mp.setattr(fn, "__kwdefaults__", {"b": 5.0}), False),
        ("a closure cell rebound", lambda mp: setattr(cell, "cell_contents", 4.0), False),
        ("a closure cell emptied", lambda mp: delattr(cell, "cell_contents"), False),
    ]
    for what, change, same in changes:
        saved = (ARR.shape, cell.cell_contents)
        with monkeypatch.context() as mp:  # (each change undone before the next)
            change(mp)
            try:
                assert snap.same() is snap._same() is same, what
            finally:
                ARR.shape, cell.cell_contents = saved
    assert snap.same()


def test_past_the_compiled_checks_limit_the_loops_check(monkeypatch):
    from s2s.api import signatures

    monkeypatch.setattr(signatures, "MAX_COMPILED_CHECKS", 0)
    snap = signatures.FreeSnapshot.take(s2s.grad(closing(3.0)).ir)
    assert snap.same() and snap.same()
    assert snap.same == snap._same  # (kept: not compiled again at every call)
    with monkeypatch.context() as mp:
        mp.setitem(per_example.__globals__, "OFFSET", float("0.5"))
        assert not snap.same()


# ---- grad (api/hotcalls.py: the plan of a specialized signature) --------------------

WEIGHTS = np.linspace(0.5, 1.5, 4)


def weighted(x):
    return np.sum(x * WEIGHTS)  # (its gradient is WEIGHTS itself: a module array)


def energy(w, x):
    return np.sum(squash(x * w) ** 2) + OFFSET * np.sum(w**2)


@pytest.mark.parametrize("jitted", [False, pytest.param(True, marks=pytest.mark.slow)],
                         ids=["grad", "jit(numpy)"])  # (the jit's grad: test_jit_fast_path too)
def test_gradients_follow_every_change_between_calls(jitted, monkeypatch):
    plain = s2s.grad(energy)
    g = s2s.jit(plain, backend="numpy") if jitted else plain
    rng = np.random.default_rng(5)
    previous = None
    for call in range(14):
        dtype = np.float32 if call in (5, 6) else np.float64
        shape = (5, 2) if call == 4 else (5, 3)
        if call == 8:
            monkeypatch.setitem(energy.__globals__, "OFFSET", -1.0)
        if call == 10:
            monkeypatch.setitem(energy.__globals__, "squash", softer)
        w = rng.normal(size=shape[1]).astype(dtype)
        x = rng.normal(size=shape).astype(dtype)
        if call == 7:  # a 0-d weight (broadcast over x)
            w = np.asarray(rng.normal(), dtype)
        if call in (0, 8, 10):  # (JAX's, compiled once per module state)
            theirs = jax.jit(jax.grad(twin(energy, OFFSET=energy.__globals__["OFFSET"])))
        want = theirs(w, x)
        got = g(w, x)
        assert type(got) is np.ndarray and got.dtype == dtype and got.shape == w.shape
        close(got, want, dtype)
        assert previous is None or not np.may_share_memory(got, previous)
        owns(got, (w, x))
        got[...] = 99.0
        previous = got
    assert plain._plans, "the planned path was never taken"


def test_a_gradient_that_is_a_module_array_comes_back_a_copy():
    g = s2s.grad(weighted)
    x = np.ones(4)
    for _ in range(5):
        got = g(x)
        np.testing.assert_array_equal(got, np.linspace(0.5, 1.5, 4))
        assert not np.may_share_memory(got, WEIGHTS)
        got[...] = -1.0  # the module's array is untouched
    np.testing.assert_array_equal(WEIGHTS, np.linspace(0.5, 1.5, 4))


# ---- s2s.jit(numpy) of a user's function (Jitted._call_function) ------------------


def writes_into_its_argument(x, v):
    x *= 2.0  # (jit's inputs are values: the caller's array must not change)
    return s2s.jvp(s2s.grad(tanh_sq), (x,), (v,))[1]


@pytest.mark.slow
def test_a_jitted_function_runs_on_copies_and_counts_its_signatures():
    j = s2s.jit(writes_into_its_argument, backend="numpy")
    rng = np.random.default_rng(6)
    for call in range(10):
        n = 4 if call == 4 else 6
        dtype = np.float32 if call == 5 else np.float64
        x, v = rng.normal(size=n).astype(dtype), rng.normal(size=n).astype(dtype)
        x0 = x.copy()
        got = j(x, v)
        np.testing.assert_array_equal(x, x0)  # untouched, at every call
        _, want = jax.jvp(jax.grad(twin(tanh_sq)), (jnp.asarray(2 * x0),), (jnp.asarray(v),))
        close(got, want, dtype)
    info = j.cache_info()
    assert (info.compilations, info.hits) == (3, 7), info


# ---- vmap's specialized code: (n_batch, *shape) displays (signature_facts) ---------


def mlp_example(w1, w2, x, y):
    h = np.tanh(x @ w1)
    return 0.5 * np.sum((h @ w2 - y) ** 2)


def test_per_example_mlp_gradients_specialize_their_batch_fixups():
    """vmap spells a batched broadcast's shape ``(n_batch, *shape)``: the display's
    level is its items' least, so the fix-ups of a per-example gradient are known to
    do nothing and go; values against JAX while the batch size and dtype change."""
    g = s2s.vmap(s2s.grad(mlp_example, argnums=(0, 1)), in_axes=(None, None, 0, 0))
    theirs = jax.jit(jax.vmap(jax.grad(twin(mlp_example), argnums=(0, 1)),
                              in_axes=(None, None, 0, 0)))
    rng = np.random.default_rng(7)
    for call in range(8):
        n = 3 if call == 4 else 5
        dtype = np.float32 if call == 5 else np.float64
        args = (rng.normal(size=(4, 6)).astype(dtype), rng.normal(size=(6, 2)).astype(dtype),
                rng.normal(size=(n, 4)).astype(dtype), rng.normal(size=(n, 2)).astype(dtype))
        got, want = g(*args), theirs(*args)
        for a, b in zip(got, want):
            assert a.dtype == dtype and a.shape == b.shape
            close(a, b, dtype)
    body = g.specialized_source.split("def ", 1)[1]
    assert "unbroadcast(" not in body and "broadcast_to(" not in body, body


VALUE_SHAPED = """
import numpy as np


def f(x, n):
    head = x[:n]
    z = np.broadcast_to(np.sum(head), (*np.shape(head), 2))
    return np.sum(z * x[:1])
"""


@pytest.mark.parametrize("n", [np.array(2), 2], ids=["0-d array", "int"])
def test_a_display_with_a_value_decided_item_is_not_known(n):
    """``(*np.shape(head), 2)`` where ``head = x[:n]``: with ``n`` a 0-d array its
    value is not in the signature, so neither is the display (the broadcast's shape
    stays as written); with ``n`` an int it is, and the shape folds."""
    from s2s.optimize.specialize import specialize

    x = np.linspace(-1.0, 1.0, 5)
    result, text = specialize(VALUE_SHAPED, {"np": np}, "f", (x, n))
    np.testing.assert_allclose(result, 2 * np.sum(x[:2]) * 2 * x[0])
    body = text.split("def ", 1)[1]
    if isinstance(n, int):
        assert "np.shape(" not in body, body
    else:
        assert "np.shape(head)" in body, body
