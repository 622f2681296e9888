"""Trying to break ``s2s.jit(..., backend="jax")``'s bare paths (s2s/api/jit_calls.py:
the caller's arguments handed to JAX's C++ dispatch from one frame that looks at
nothing, for a plain function's transform and for a vmapped one, until a dict comes).

Every guard a bare call relies on is one JAX's dispatch checks (tree structure, shapes,
dtypes, weak types) or one the trace checks (a dict among the arguments or in the
results raises before anything is compiled). The oracle is ``jax.jit`` of the same
source on ``jax.numpy``, float64 and float32, at calls 1, 3 and 10 with the values
changing: dtypes alternating at every call, 0-d arrays beside NumPy and Python
scalars, a module constant rebound before the 10th call (the compiled code keeps the
value it was traced with, as ``jax.jit``'s does), the caller writing into its inputs
and into the results between calls, dicts whose keys change from call to call."""

from __future__ import annotations

import os
import sys
import types

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

S2S_DIR = os.path.dirname(os.path.abspath(s2s.__file__))
CALLS = os.path.join(S2S_DIR, "api", "jit_calls.py")
SCALE = 0.5


def loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2) + 0.5 * np.sum(w**2)  # (a literal: bare path)


def scaled(w, x):  # (a module constant: read at every call, api/jit_jax_free.py)
    return np.sum(np.tanh(x @ w) ** 2) + SCALE * np.sum(w**2)


def cubic(x):
    return 0.5 * x**3 + np.sin(x)


def per_example(w, x, y):
    return np.log1p(np.exp(-y * (x @ w))) + 0.5 * np.sum(w**2)


def walk(p, x):
    """A dict walked in its order: the first key's value weighs most."""
    total = 0.0
    scale = 1.0
    for k in p:
        total = total + scale * np.sum(np.tanh(p[k] * x))
        scale = scale * 0.5
    return total


def halves(x):
    return {"second": x[1:] * 2.0, "first": x[:1] * 0.5}


def twin(f, **extra):
    return types.FunctionType(f.__code__, {**f.__globals__, "np": jnp, **extra}, f.__name__)


def close(got, want):
    got_l, want_l = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        tol = 1e-5 if g.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def frames_of_s2s(fn, *args):
    seen = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(S2S_DIR):
            seen.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return seen


def test_dtypes_alternating_at_every_call_on_the_bare_path():
    g = s2s.jit(s2s.grad(loss), backend="jax")
    j = jax.jit(jax.grad(twin(loss)))
    rng = np.random.default_rng(0)
    w, x = rng.normal(size=3), rng.normal(size=(5, 3))
    for call in range(10):
        dtype = np.float32 if call % 2 else np.float64
        args = ((w + call).astype(dtype), (x - call).astype(dtype))
        got = g(*args)
        if call in (0, 1, 2, 9):
            close(got, j(*args))
    assert frames_of_s2s(g, w, x) == ["_call_bare"]
    info = g.cache_info()
    assert (info.compilations, info.hits) == (2, 9), info  # (11 calls)


@pytest.mark.every_case
@pytest.mark.parametrize("kind", ["0-d array", "numpy scalar", "python float"])
def test_zero_d_inputs_and_their_weak_types(kind):
    """A Python float is a weak-typed input to JAX, a 0-d array and a NumPy scalar
    strong ones: each a signature of its own, results as ``jax.jit``'s (dtype too),
    the bare path throughout."""
    make = {"0-d array": np.array, "numpy scalar": np.float64, "python float": float}[kind]
    g = s2s.jit(s2s.grad(cubic), backend="jax")
    j = jax.jit(jax.grad(twin(cubic)))
    for call in range(10):
        x = make(0.3 + call / 7)
        got = g(x)
        if call in (0, 2, 9):
            close(got, j(x))
    x32 = np.float32(0.25)  # a float32 0-d input after them: a new trace, float32 out
    close(g(x32), j(x32))
    close(g(np.array(0.25, np.float32)), j(np.array(0.25, np.float32)))
    assert frames_of_s2s(g, make(0.5)) == ["_call_bare"]
    assert g.cache_info().compilations == 2


def test_a_module_constant_rebound_before_the_tenth_call(monkeypatch):
    """The JAX backend reads a module constant at every call, as the NumPy backend
    does (api/jit_jax_free.py), where ``jax.jit`` alone keeps the one its trace saw:
    the 10th call reads the new value, and the old one again its first trace."""
    g = s2s.jit(s2s.grad(scaled), backend="jax")
    j = jax.jit(jax.grad(twin(scaled)))
    rng = np.random.default_rng(1)
    w, x = rng.normal(size=3), rng.normal(size=(5, 3))
    for call in range(9):
        close(g(w + call, x), j(w + call, x))
    monkeypatch.setitem(scaled.__globals__, "SCALE", 3.0)
    new = jax.jit(jax.grad(twin(scaled, SCALE=3.0)))
    close(g(w + 9, x), new(w + 9, x))  # the 10th call: 3.0, as the NumPy backend's
    close(g(w + 9, x), s2s.grad(scaled)(w + 9, x))
    wide = rng.normal(size=(7, 3))
    close(g(w, wide), new(w, wide))
    monkeypatch.setitem(scaled.__globals__, "SCALE", 0.5)
    close(g(w, x), j(w, x))
    assert g.cache_info().compilations == 3


def test_the_caller_writing_into_inputs_and_results_between_calls():
    g = s2s.jit(s2s.grad(loss), backend="jax")
    j = jax.jit(jax.grad(twin(loss)))
    rng = np.random.default_rng(2)
    w, x = rng.normal(size=3), rng.normal(size=(5, 3))
    for call in range(10):
        got = g(w, x)
        close(got, j(w, x))
        out = np.asarray(got)
        if out.flags.writeable:  # (JAX's arrays are read-only views on CPU)
            out[...] = 99.0
        else:
            with pytest.raises(ValueError):
                out[...] = 99.0
        close(g(w, x), j(w, x))  # unaffected
        w += 0.25  # the caller's input written in place: the next call reads it
        x[0] -= 0.5


def test_dict_arguments_whose_keys_change_between_calls():
    """Keys reordered, added and removed from call to call (after the hand-over to the
    keyed path at the first dict): each order its own trace, walked in the caller's
    order; the arrays' signature seen before the dict keeps giving JAX's values."""
    g = s2s.jit(s2s.grad(walk), backend="jax")
    rng = np.random.default_rng(3)
    x = rng.normal(size=4)
    a, b, c = (rng.normal(size=4) for _ in range(3))
    orders = [{"a": a, "b": b}, {"b": b, "a": a}, {"a": a, "b": b, "c": c},
              {"c": c, "a": a}, {"a": a}, {"b": b, "a": a}]
    oracle = jax.jit(jax.grad(twin(walk)))  # (walks JAX's sorted order)
    for call in range(10):
        p = {k: v + call / 10 for k, v in orders[call % len(orders)].items()}
        got = g(p, x)
        assert list(got) == list(p)  # the caller's order
        want = oracle(p, x)
        ranked = {k: (0.5 ** i) for i, k in enumerate(p)}
        jranked = {k: (0.5 ** i) for i, k in enumerate(sorted(p))}
        for k in p:  # the weights follow the caller's order, not the sorted one
            close(got[k], want[k] * ranked[k] / jranked[k])
    assert frames_of_s2s(g, orders[0], x)[:1] == ["_call_keyed"]


def test_a_vmapped_jit_bare_until_a_dict_then_keyed():
    """The vmapped bare path: new shapes and dtypes while bare (each asks for its
    example, added from that frame; counted once), then a dict argument hands over to
    the keyed path, which keeps the arrays' values and the dict's order."""
    f = s2s.jit(s2s.vmap(s2s.grad(per_example), in_axes=(None, 0, 0)), backend="jax")
    j = jax.jit(jax.vmap(jax.grad(twin(per_example)), in_axes=(None, 0, 0)))
    rng = np.random.default_rng(4)
    shapes = [(np.float64, 4), (np.float32, 4), (np.float64, 6), (np.float64, 4),
              (np.float32, 4), (np.float64, 6), (np.float64, 4), (np.float32, 4),
              (np.float64, 4), (np.float64, 6)]
    for call, (dtype, n) in enumerate(shapes):
        w = rng.normal(size=3).astype(dtype)
        x, y = rng.normal(size=(n, 3)).astype(dtype), rng.choice([-1.0, 1.0], n).astype(dtype)
        got = f(w, x, y)
        if call in (0, 1, 2, 9):
            close(got, j(w, x, y))
    assert frames_of_s2s(f, w, x, y) == ["_call_vmapped_bare"]
    info = f.cache_info()
    assert (info.compilations, info.hits) == (3, 8), info  # (11 calls)

    def dict_example(p, x, y):
        return np.sum(p["v"] * x) * y + 0.5 * np.sum(p["u"] ** 2)

    h = s2s.jit(s2s.vmap(s2s.grad(dict_example), in_axes=(None, 0, 0)), backend="jax")
    jh = jax.jit(jax.vmap(jax.grad(twin(dict_example)), in_axes=(None, 0, 0)))
    x, y = rng.normal(size=(5, 3)), rng.normal(size=5)
    for call in range(10):
        p = {"v": rng.normal(size=3), "u": rng.normal(size=2)}
        got = h(p, x, y)
        if call in (0, 2, 9):
            assert list(got) == ["v", "u"]
            close([got["v"], got["u"]], [jh(p, x, y)[k] for k in ("v", "u")])
    assert h.cache_info()[:3] == (9, 1, 1)
    # (the dict made a Keyed in that frame; the gradient's rebuilt by JAX)
    assert frames_of_s2s(h, p, x, y) == ["_call_vmapped", "_rebuilt"]
    p = {"u": p["u"], "v": p["v"]}  # another order: another trace, in that order
    got = h(p, x, y)
    assert list(got) == ["u", "v"]
    close([got["v"], got["u"]], [jh(p, x, y)[k] for k in ("v", "u")])
    assert h.cache_info().compilations == 2


def test_a_vmapped_function_returning_a_dict_from_arrays():
    """No dict among the arguments, one in the results: the bare trace raises after
    the example was added and the call goes the keyed way, the dict in the function's
    order."""
    f = s2s.jit(s2s.vmap(halves), backend="jax")
    j = jax.jit(jax.vmap(twin(halves)))
    rng = np.random.default_rng(5)
    for call in range(10):
        x = rng.normal(size=(4, 3))
        got = f(x)
        assert list(got) == ["second", "first"]
        if call in (0, 2, 9):
            close([got["second"], got["first"]], [j(x)["second"], j(x)["first"]])
    assert f.cache_info()[:3] == (9, 1, 1)


def nested(p, x, y):
    return np.sum(p["layer"]["v"] * x) * y + 0.5 * np.sum(p["bias"] ** 2)


def scaled_by(p, x, k):
    return np.sum(p["w"] * x) * k + np.sum(p["b"])


def test_a_vmapped_jit_with_nested_dicts_and_a_static_argument():
    """The keyed vmapped path: a dict of dicts (keyed by ``jax_order.keyed``), and a
    dict beside a static argument (the Python method keys it): values against
    ``jax.jit``, the caller's key order at every level, one trace per static value."""
    h = s2s.jit(s2s.vmap(s2s.grad(nested), in_axes=(None, 0, 0)), backend="jax")
    jh = jax.jit(jax.vmap(jax.grad(twin(nested)), in_axes=(None, 0, 0)))
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=(5, 3)), rng.normal(size=5)
    for call in range(10):
        p = {"layer": {"v": rng.normal(size=3)}, "bias": rng.normal(size=2)}
        got = h(p, x, y)
        assert list(got) == ["layer", "bias"] and list(got["layer"]) == ["v"]
        if call in (0, 2, 9):
            want = jh(p, x, y)
            close([got["layer"]["v"], got["bias"]], [want["layer"]["v"], want["bias"]])
    assert h.cache_info()[:3] == (9, 1, 1)

    g = s2s.jit(s2s.vmap(scaled_by, in_axes=(None, 0, None)), backend="jax", static_argnums=2)
    jg = jax.jit(jax.vmap(twin(scaled_by), in_axes=(None, 0, None)), static_argnums=2)
    for call, k in enumerate((2, 3, 2, 3, 2, 2, 3, 2, 2, 3)):
        p = {"w": rng.normal(size=3), "b": rng.normal(size=2)}
        close(g(p, x, k), jg(p, x, k))
    assert g.cache_info()[:3] == (8, 2, 2)
