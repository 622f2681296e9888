"""``s2s.jit``'s call paths (s2s/api/jit.py): on the JAX backend a call goes straight to
JAX's jitted function (its C++ dispatch checks the arguments' structure, shapes,
dtypes and weak types), so the only Python of s2s around it is one frame that checks
the arguments are arrays and numbers (and a call holding a dict passes its dicts in
their key order, s2s/backends/jax_order.py: nothing of the transform runs); on the NumPy
backend a
call with a signature the jit has seen runs the transform's code with no more Python
frames than the transform's own call. Values against JAX (``jax.jit(jax.grad)`` of the
same source on jax.numpy), float64 and float32, at calls 1, 3 and 10 with the values
changing; the signature changing under the direct path (shape, dtype, weak type, tree
structure) re-traces where ``jax.jit`` would, and ``cache_info`` counts every call."""

from __future__ import annotations

import os
import sys
import types
from typing import NamedTuple

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

S2S_DIR = os.path.dirname(os.path.abspath(s2s.__file__))
SCALE = 0.5


def loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2) + 0.5 * np.sum(w**2)  # (a literal: bare path)


def scaled(w, x):  # (a module constant: read at every call, api/jit_jax_free.py)
    return np.sum(np.tanh(x @ w) ** 2) + SCALE * np.sum(w**2)


def mlp(params, x):
    h = np.maximum(x @ params["w"] + params["b"], 0.0)
    return np.mean(h**2)


def wave(x):
    return np.sum(np.sin(x) * x)


def per_example(w, x, y):
    return np.log1p(np.exp(-y * (x @ w)))


class Stats(NamedTuple):
    total: object
    peak: object


def with_stats(x):
    return np.sum(x**2), Stats(np.sum(x), np.max(x))


def twin(f, **extra):
    return types.FunctionType(f.__code__, {**f.__globals__, "np": jnp, **extra}, f.__name__,
                              f.__defaults__)


def python_frames(fn, *args):
    """The Python functions (file, name) entered while ``fn(*args)`` runs."""
    seen = []

    def profile(frame, event, arg):
        if event == "call":
            seen.append((frame.f_code.co_filename, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return seen


def of_s2s(frames):
    return [f for f in frames if f[0].startswith((S2S_DIR, "<s2s:"))]


def close(got, want, dtype=np.float64):
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


# ---- the JAX backend: straight to JAX's dispatch ------------------------------------


@pytest.mark.every_case
@pytest.mark.parametrize("case", ["grad", "value_and_grad", "dict", "plain"])
def test_a_jax_call_runs_no_python_of_s2s(case):
    rng = np.random.default_rng(0)
    if case == "dict":
        ours = s2s.grad(mlp)
        theirs = jax.grad(twin(mlp))
        args = ({"w": rng.normal(size=(3, 4)), "b": rng.normal(size=4)},
                rng.normal(size=(5, 3)))
    elif case == "plain":
        ours, theirs = wave, twin(wave)
        args = (rng.normal(size=6),)
    else:
        make = s2s.grad if case == "grad" else s2s.value_and_grad
        ours = make(loss)
        theirs = (jax.grad if case == "grad" else jax.value_and_grad)(twin(loss))
        args = (rng.normal(size=3), rng.normal(size=(5, 3)))
    g, j = s2s.jit(ours, backend="jax"), jax.jit(theirs)
    for _ in range(3):
        close(g(*args), j(*args))
    ours_frames, theirs_frames = python_frames(g, *args), python_frames(j, *args)
    calls = os.path.join(S2S_DIR, "api", "jit_calls.py")
    # (the bare path; after a dict, the keyed one: api/jit_calls.py)
    guard = [(calls, "_call_keyed" if case == "dict" else "_call_bare")]
    if case == "dict":  # (the dict made a jax_order.Keyed in the guard's frame; the
        # gradient's rebuilt by JAX, the one frame of jax_order, made a dict in the guard)
        order = os.path.join(S2S_DIR, "backends", "jax_order.py")
        assert of_s2s(ours_frames) == [*guard, (order, "_rebuilt")]
    else:
        assert of_s2s(ours_frames) == guard
        assert len(ours_frames) <= len(theirs_frames) + 1
    assert g.cache_info().hits == 3 and g.cache_info().compilations == 1
    if case == "dict":
        assert list(g(*args)) == list(args[0])  # (the caller's key order)


def scaled_parts(w, x):
    return {"z": np.sum(np.tanh(x @ w) ** 2), "a": w * 2.0}


def test_the_bare_path_hands_over_to_the_keyed_one_at_the_first_dict():
    """A jit starts on the bare path (arguments to JAX as given: one frame, no look
    at them); the first trace that meets a dict, among the arguments or in the
    results, raises inside JAX and the call is made on the keyed path, which takes
    every later call. The trace that raised is neither compiled nor counted, and
    no signature with a dict ever runs bare (key order, values, counts)."""
    calls = os.path.join(S2S_DIR, "api", "jit_calls.py")
    g = s2s.jit(s2s.grad(mlp), backend="jax")
    j = jax.jit(jax.grad(twin(mlp)))
    rng = np.random.default_rng(6)
    x = rng.normal(size=(5, 3))
    params = {"w": rng.normal(size=(3, 4)), "b": rng.normal(size=4)}
    for call in range(10):  # (a dict at the first call: keyed from the start)
        p = {k: v + call for k, v in params.items()}
        got = g(p, x)
        if call in (0, 2, 9):
            close(got, j(p, x))
            assert list(got) == ["w", "b"]
    assert g.cache_info()[:3] == (9, 1, 1)
    assert of_s2s(python_frames(g, params, x))[:1] == [(calls, "_call_keyed")]
    assert g._jitted_bare._cache_size() == 0

    # arrays in, a dict out (in the order the function builds it, not sorted)
    h = s2s.jit(scaled_parts, backend="jax")
    jh = jax.jit(twin(scaled_parts))
    w = rng.normal(size=3)
    for call in range(10):
        got = h(w + call, x)
        if call in (0, 2, 9):
            assert list(got) == ["z", "a"]
            close([got["z"], got["a"]], [jh(w + call, x)[k] for k in ("z", "a")])
    assert h.cache_info()[:3] == (9, 1, 1)
    assert of_s2s(python_frames(h, w, x))[:1] == [(calls, "_call_keyed")]

    # arrays only: bare, until a dict comes (then keyed, the arrays' entry too)
    k = s2s.jit(s2s.grad(loss), backend="jax")
    jk = jax.jit(jax.grad(twin(loss)))
    for call in range(3):
        close(k(w + call, x), jk(w + call, x))
    assert of_s2s(python_frames(k, w, x)) == [(calls, "_call_bare")]
    with pytest.raises(Exception):  # (a dict where loss takes an array: JAX's error)
        k({"w": w}, x)
    for call in range(3):  # (the arrays' signature traced again, for the keyed path)
        close(k(w - call, x), jk(w - call, x))
    assert of_s2s(python_frames(k, w, x)) == [(calls, "_call_keyed")]
    info = k.cache_info()
    assert info.compilations == 2 and info.hits == 9 - 2, info


def test_the_direct_path_re_traces_where_jax_jit_does():
    g = s2s.jit(s2s.grad(loss), backend="jax")
    j = jax.jit(jax.grad(twin(loss)))
    rng = np.random.default_rng(1)
    w, x = rng.normal(size=3), rng.normal(size=(5, 3))
    calls = [
        (w, x), (w * 2, x + 1), (w, rng.normal(size=(7, 3))),  # values; a new shape
        (w.astype(np.float32), x.astype(np.float32)),  # a new dtype
        (w, x), (w - 1, x),
    ]
    for args in calls:
        close(g(*args), j(*args), args[0].dtype)
    info = g.cache_info()
    assert (info.compilations, info.hits, info.currsize) == (3, 3, 3)
    for _ in range(10):  # (calls 1, 3, 10 with the values changing)
        w = w + 0.1
        close(g(w, x), j(w, x))
    assert g.cache_info().compilations == 3


def test_weak_types_and_tree_structures_under_the_direct_path():
    def scaled(x, s):
        return np.sum(np.sin(x) * s)

    g = s2s.jit(s2s.grad(scaled, argnums=(0, 1)), backend="jax")
    j = jax.jit(jax.grad(twin(scaled), argnums=(0, 1)))
    x = np.linspace(-1, 1, 4)
    for s in (2.0, np.float64(2.0), np.array(2.0), 3.0, np.float32(2.0)):
        got, want = g(x, s), j(x, s)
        close(got, want)
        assert [np.asarray(a).dtype for a in got] == [np.asarray(a).dtype for a in want]
    m = s2s.jit(s2s.grad(mlp), backend="jax")
    jm = jax.jit(jax.grad(twin(mlp)))
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 3))
    params = {"w": rng.normal(size=(3, 4)), "b": rng.normal(size=4)}
    close(m(params, x), jm(params, x))
    wide = {"w": rng.normal(size=(3, 6)), "b": rng.normal(size=6)}
    close(m(wide, x), jm(wide, x))
    extra = {**params, "unused": np.ones(2)}  # another tree: another trace
    got = m(extra, x)
    close(got, jm(extra, x))
    assert sorted(got) == ["b", "unused", "w"]
    assert m.cache_info().compilations == 3


def test_a_rebound_module_constant_is_read_at_the_next_call(monkeypatch):
    """The JAX backend reads a module constant at every call, as the NumPy backend
    does (api/jit_jax_free.py: a number is guarded, its value part of the trace's
    key), where ``jax.jit`` alone keeps the value its trace saw."""
    g = s2s.jit(s2s.grad(scaled), backend="jax")
    w, x = np.ones(3), np.eye(3)
    close(g(w, x), jax.jit(jax.grad(twin(scaled)))(w, x))
    monkeypatch.setitem(scaled.__globals__, "SCALE", 4.0)
    close(g(w, x), jax.grad(twin(scaled, SCALE=4.0))(w, x))
    close(g(w, x), s2s.grad(scaled)(w, x))
    monkeypatch.setitem(scaled.__globals__, "SCALE", 0.5)
    close(g(w, x), jax.grad(twin(scaled))(w, x))
    assert g.cache_info().compilations == 2  # (0.5 again: its trace)


def test_an_aux_namedtuple_is_still_rebuilt():
    g = s2s.jit(s2s.grad(with_stats, has_aux=True), backend="jax")
    x = np.linspace(0.5, 2.0, 5)
    for _ in range(3):
        grad, aux = g(x)
        assert type(aux) is Stats
        np.testing.assert_allclose(np.asarray(grad), 2 * x, rtol=1e-12)
        np.testing.assert_allclose(float(aux.peak), 2.0)


def test_a_vmapped_function_still_gets_its_examples():
    f = s2s.jit(s2s.vmap(s2s.grad(per_example), in_axes=(None, 0, 0)), backend="jax")
    j = jax.jit(jax.vmap(jax.grad(twin(per_example)), in_axes=(None, 0, 0)))
    rng = np.random.default_rng(3)
    for n in (6, 6, 9, 6):
        w, x, y = rng.normal(size=3), rng.normal(size=(n, 3)), rng.choice([-1.0, 1.0], n)
        close(f(w, x, y), j(w, x, y))
    assert f.cache_info().compilations == 2
    assert f.cache_info().hits == 2
    # a signature seen: one frame of s2s (the example check), no outputs to rebuild
    assert [name for _, name in of_s2s(python_frames(f, w, x, y))] == ["_call_vmapped_bare"]


def test_a_vmapped_function_retraces_on_dtypes_and_counts_its_calls():
    """The vmap's one frame: a dtype seen later is a new trace (with its result cast
    to the float32 input's dtype, as JAX's), keywords and new shapes take the slow
    path, and every call is counted once."""
    f = s2s.jit(s2s.vmap(s2s.grad(per_example), in_axes=(None, 0, 0)), backend="jax")
    j = jax.jit(jax.vmap(jax.grad(twin(per_example)), in_axes=(None, 0, 0)))
    rng = np.random.default_rng(5)
    calls = [(np.float64, 4), (np.float32, 4), (np.float64, 4), (np.float32, 7),
             (np.float32, 4), (np.float64, 4)]
    for dtype, n in calls:
        w, x = rng.normal(size=3).astype(dtype), rng.normal(size=(n, 3)).astype(dtype)
        y = rng.choice([-1.0, 1.0], n).astype(dtype)
        close(f(w, x, y), j(w, x, y), dtype)
    info = f.cache_info()
    assert info.compilations == 3 and info.hits == len(calls) - 3, info
    with pytest.raises(TypeError, match="positionally"):
        f(w, x, y=y)


# ---- the NumPy backend: no more Python than the transform's own call -----------------


@pytest.mark.every_case
@pytest.mark.parametrize("kind", ["grad", "value_and_grad", "vmap", "0-d"])
def test_a_numpy_jit_call_runs_no_more_python_than_the_transform(kind):
    rng = np.random.default_rng(4)
    if kind == "vmap":
        def make():
            return s2s.vmap(s2s.grad(per_example), in_axes=(None, 0, 0))
        args = (rng.normal(size=3), rng.normal(size=(6, 3)), rng.choice([-1.0, 1.0], 6))
    elif kind == "0-d":
        def make():
            return s2s.grad(wave)
        args = (np.array(0.7),)
    else:
        def make():
            return (s2s.grad if kind == "grad" else s2s.value_and_grad)(loss)
        args = (rng.normal(size=3), rng.normal(size=(5, 3)))
    plain, jitted = make(), s2s.jit(make(), backend="numpy")
    for _ in range(3):
        close(jitted(*args), plain(*args))
    for t in (plain, jitted.fun):
        t.wait_specialized()
    for _ in range(2):  # (a specialized entry is marked at its first call)
        close(jitted(*args), plain(*args))
    ours, theirs = python_frames(jitted, *args), python_frames(plain, *args)
    # (a vmap too: the jit runs the vmap's hot entry for the shapes, keyed once)
    assert len(of_s2s(ours)) <= len(of_s2s(theirs)), (ours, theirs)


def test_a_numpy_jit_follows_values_and_module_state(monkeypatch):
    j = s2s.jit(s2s.grad(loss), backend="numpy")
    jg = jax.grad(twin(loss))
    rng = np.random.default_rng(5)
    x = rng.normal(size=(5, 3))
    for call in range(10):
        w = rng.normal(size=3)
        got = j(w, x)
        if call in (0, 2, 9):
            close(got, jg(w, x))
        got[...] = 99.0  # the caller writes into a result: later ones are unaffected
    monkeypatch.setitem(loss.__globals__, "SCALE", 3.0)  # (loss reads none: as before)
    jg = jax.grad(twin(loss))
    for _ in range(3):
        close(j(w, x), jg(w, x))
    w32, x32 = w.astype(np.float32), x.astype(np.float32)
    for _ in range(3):
        close(j(w32, x32), jg(w32, x32), np.float32)
    assert j.cache_info().compilations == 2


def test_a_numpy_jit_of_a_transform_called_before_counts_its_own_signatures():
    g = s2s.grad(loss)
    w, x = np.linspace(-1, 1, 3), np.eye(3)
    for _ in range(3):
        g(w, x)
    g.wait_specialized()
    j = s2s.jit(g, backend="numpy")
    for _ in range(3):
        close(j(w, x), jax.grad(twin(loss))(w, x))
    info = j.cache_info()
    assert (info.compilations, info.hits) == (1, 2)
    assert "def loss" in s2s.source(j)
