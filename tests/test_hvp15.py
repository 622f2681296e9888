"""Functions made again with the same code (a lambda per step, a nested ``def`` made
again) reuse the code s2s generated for the first, and read their own closure values
(s2s/api/families.py; the parse per code object: frontend/source.py; black's output
per text: emit/code.py).  Expected values from JAX (the jnp twin) or NumPy closed forms.
"""

from __future__ import annotations

import functools
import gc
import weakref

import numpy as np
import pytest

import s2s
from s2s.api import pipeline, signatures
from s2s.frontend import source

RNG = np.random.default_rng(15)


def logistic_mean(w, x, y):
    return np.mean(np.log1p(np.exp(-y * (x @ w))))


def hvp_closed(w, v, x, y):
    """The logistic mean's Hessian times v, by hand."""
    s = 1.0 / (1.0 + np.exp(-y * (x @ w)))
    return x.T @ (s * (1.0 - s) * (x @ v)) / x.shape[0]


def grad_closed(w, x, y):
    return x.T @ (-y / (1.0 + np.exp(y * (x @ w)))) / x.shape[0]


G = s2s.grad(logistic_mean)


def _hvp(x, y, w, v):
    return s2s.jvp(lambda w: G(w, x, y), (w,), (v,))[1]  # a new lambda each call


def _data(n=32, d=4, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d)).astype(dtype), rng.choice([-1.0, 1.0], n).astype(dtype))


def _counting(monkeypatch):
    """How many times s2s emits code (``pipeline.transform``)."""
    calls = []
    real = pipeline.transform

    def counted(ir, emit):
        calls.append(1)
        return real(ir, emit)

    monkeypatch.setattr(pipeline, "transform", counted)
    return calls


def _jvp_fresh(x, y, w, v):
    return s2s.jvp(lambda w: np.sum(np.sin(x @ w) * y), (w,), (v,))  # a new lambda


def test_fresh_lambda_jvp_reads_its_own_closure_and_reuses_the_code(monkeypatch):
    """Ten lambdas of one line over different data: each result is its own data's
    (1st, 3rd, 10th...), and code is emitted for two of them at most (the first runs
    as itself, the rest as one canonical copy), not ten.  (Not specialized here: the
    slow tier's tests run the specialized code, HVPs of a gradient included.)"""
    monkeypatch.setattr(signatures, "OPTIMIZE", False)
    emitted = _counting(monkeypatch)
    w, v = RNG.normal(size=4), RNG.normal(size=4)
    for k in range(10):
        x, y = _data(n=5 + k % 3, seed=k)
        out, tangent = _jvp_fresh(x, y, w, v)
        np.testing.assert_allclose(out, np.sum(np.sin(x @ w) * y), rtol=1e-12)
        np.testing.assert_allclose(tangent, np.sum(np.cos(x @ w) * y * (x @ v)), rtol=1e-12)
    assert len(emitted) <= 2, len(emitted)


def test_fresh_lambda_grad_parses_its_code_once(monkeypatch):
    """``s2s.grad(lambda w: loss(w, x, y))(w)`` in a loop: its own data's gradient each
    step, the lambda's file read and parsed once."""
    parses = []
    real = source._parse_function
    monkeypatch.setattr(source, "_parse_function",
                        lambda fn: parses.append(fn) or real(fn))
    w = RNG.normal(size=4)
    for k in range(6):
        x, y = _data(seed=k)
        got = s2s.grad(lambda w: logistic_mean(w, x, y))(w)
        np.testing.assert_allclose(got, grad_closed(w, x, y), rtol=1e-10, atol=1e-13)
    assert len([f for f in parses if f.__name__ == "<lambda>"]) <= 1, parses


# ---- slow: JAX as the oracle ---------------------------------------------------------


def _jax():
    return pytest.importorskip("jax")


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hvp_against_jax_over_changing_data(dtype, monkeypatch):
    jax = _jax()
    jnp = jax.numpy

    def jl(w, x, y):
        return jnp.mean(jnp.log1p(jnp.exp(-y * (x @ w))))

    jg = jax.grad(jl)
    w, v = RNG.normal(size=4).astype(dtype), RNG.normal(size=4).astype(dtype)
    tol = dict(rtol=1e-10, atol=1e-13) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-6)
    emitted = _counting(monkeypatch)
    for k in range(12):
        x, y = _data(n=8 + k, seed=k, dtype=dtype)  # (the rows change too)
        got = _hvp(x, y, w, v)
        want = jax.jvp(lambda w: jg(w, x, y), (w,), (v,))[1]
        assert got.dtype == dtype
        np.testing.assert_allclose(got, np.asarray(want), **tol)
    assert len(emitted) <= 4, len(emitted)  # (not one per lambda)


def _make_act(act):
    return lambda w: np.sum(act(w) * w)


@pytest.mark.slow
def test_a_callee_rebound_between_makes():
    """``lambda w: act(w)`` with act np.tanh, then np.sin, then np.tanh again: each
    lambda's own callee (the callee is inlined: its identity is part of the key)."""
    jax = _jax()
    jnp = jax.numpy
    w, v = RNG.normal(size=5), RNG.normal(size=5)
    for np_act, j_act in [(np.tanh, jnp.tanh), (np.sin, jnp.sin), (np.tanh, jnp.tanh),
                          (np.sin, jnp.sin), (np.exp, jnp.exp)]:
        for _ in range(3):
            got = s2s.jvp(_make_act(np_act), (w,), (v,))
            want = jax.jvp(lambda w: jnp.sum(j_act(w) * w), (w,), (v,))
            np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
            np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
            gw = s2s.grad(_make_act(np_act))(w)
            np.testing.assert_allclose(gw, jax.grad(lambda w: jnp.sum(j_act(w) * w))(w),
                                       rtol=1e-12)


def _make_indexed(c):
    return lambda w: np.sum(np.sin(w) * c[0] + c[1] * w)


@pytest.mark.slow
def test_closure_values_that_change_kind():
    """The closure holds an array, a tuple of floats, a list, a tuple of arrays, a
    2-d array: the same lambda's code, each its own value's result (closed form)."""
    w, v = RNG.normal(size=3), RNG.normal(size=3)
    values = [np.array([2.0, 3.0]), (1.5, -2.0), [0.5, 4.0], (np.arange(3.0), 1.0),
              np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]]), (2.0, np.ones(3)),
              np.array([2.0, 3.0])]
    for c in values * 2:
        a, b = c[0], c[1]
        out, tangent = s2s.jvp(_make_indexed(c), (w,), (v,))
        np.testing.assert_allclose(out, np.sum(np.sin(w) * a + b * w), rtol=1e-12)
        np.testing.assert_allclose(
            tangent, np.sum((np.cos(w) * a + b) * v), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(s2s.grad(_make_indexed(c))(w),
                                   np.cos(w) * a + b + 0 * w, rtol=1e-12)


def _make_scaled(c):
    return lambda w: np.sum(np.sin(w) * c)


@pytest.mark.slow
def test_closure_scalar_array_float_int_and_back():
    w, v = RNG.normal(size=4), RNG.normal(size=4)
    for c in [np.full(4, 2.0), 3.0, 2, np.float64(0.5), np.array(1.5), np.full(4, -1.0),
              7.0, np.arange(4.0)]:
        for _ in range(2):
            _, tangent = s2s.jvp(_make_scaled(c), (w,), (v,))
            np.testing.assert_allclose(tangent, np.sum(np.cos(w) * c * v), rtol=1e-12)


def _outer(a):
    def mid(b):
        def inner(w):
            return np.sum(np.sin(a * w) * b)
        return inner
    return mid


@pytest.mark.slow
def test_nested_closures_made_again():
    w, v = RNG.normal(size=4), RNG.normal(size=4)
    for a, b in [(1.0, 2.0), (2.0, 2.0), (2.0, 0.5), (np.arange(4.0), 1.0), (1.0, 2.0),
                 (3.0, np.full(4, 2.0)), (0.5, -1.0)]:
        f = _outer(a)(b)
        _, tangent = s2s.jvp(f, (w,), (v,))
        np.testing.assert_allclose(tangent, np.sum(a * np.cos(a * w) * b * v), rtol=1e-12)
        np.testing.assert_allclose(s2s.grad(_outer(a)(b))(w), a * np.cos(a * w) * b,
                                   rtol=1e-12)


def _make_default(k):
    return lambda w, s=k: np.sum(np.sin(w) * s)


@pytest.mark.slow
def test_a_default_changed():
    """Defaults are constants of the IR: each lambda's own (1.0, 2.0, the int 2, True,
    -0.0), and one replaced on the function object after it was made."""
    w, v = RNG.normal(size=4), RNG.normal(size=4)
    for k in [1.0, 2.0, 1.0, 2, True, -0.0, 3.5, 3.5]:
        _, tangent = s2s.jvp(_make_default(k), (w,), (v,))
        np.testing.assert_allclose(tangent, np.sum(np.cos(w) * k * v), rtol=1e-12)
    f = _make_default(2.0)
    s2s.jvp(f, (w,), (v,))
    f.__defaults__ = (5.0,)
    _, tangent = s2s.jvp(f, (w,), (v,))
    np.testing.assert_allclose(tangent, np.sum(np.cos(w) * 5.0 * v), rtol=1e-12)


def loss_kw(w, x=None, y=None):
    return np.mean(np.log1p(np.exp(-y * (x @ w))))


@pytest.mark.slow
def test_partials_made_again_with_different_keywords():
    w, v = RNG.normal(size=4), RNG.normal(size=4)
    for k in [0, 1, 0, 2, 3]:
        x, y = _data(seed=k)
        p = functools.partial(loss_kw, x=x, y=y)
        _, tangent = s2s.jvp(s2s.grad(p), (w,), (v,))
        np.testing.assert_allclose(tangent, hvp_closed(w, v, x, y), rtol=1e-10)
        np.testing.assert_allclose(s2s.grad(functools.partial(loss_kw, x=x, y=y))(w),
                                   grad_closed(w, x, y), rtol=1e-10)


@pytest.mark.slow
def test_a_transformed_callee_that_changes_between_makes():
    """The lambda closes over a gradient object: G, then a gradient of another loss."""
    def other(w, x, y):
        return np.mean((x @ w - y) ** 2)

    g2 = s2s.grad(other)
    w, v = RNG.normal(size=4), RNG.normal(size=4)
    x, y = _data(seed=3)
    for g, want in [(G, hvp_closed(w, v, x, y)), (g2, 2 * x.T @ (x @ v) / len(y)),
                    (G, hvp_closed(w, v, x, y)), (g2, 2 * x.T @ (x @ v) / len(y))]:
        for _ in range(2):
            got = s2s.jvp(lambda w: g(w, x, y), (w,), (v,))[1]
            np.testing.assert_allclose(got, want, rtol=1e-10)


@pytest.mark.slow
def test_a_thousand_lambdas_keep_nothing_alive_without_bound():
    w, v = RNG.normal(size=4), RNG.normal(size=4)
    x, y = _data(seed=5)
    middle = None
    for k in range(1000):
        c = float(k % 7) + 1.0
        f = _make_scaled(c)
        if k == 500:
            middle = weakref.ref(f)
        _, tangent = s2s.jvp(f, (w,), (v,))
        if k in (0, 2, 9, 500, 999):
            np.testing.assert_allclose(tangent, np.sum(np.cos(w) * c * v), rtol=1e-12)
    del f
    gc.collect()
    from s2s.api import families

    assert len(families._FAMILIES) <= families._FAMILIES.maxsize
    assert middle() is None  # (the 499 after it pushed it out of every cache)


W23 = np.linspace(0.1, 1.0, 6).reshape(2, 3)
V23 = np.linspace(1.0, -1.0, 6).reshape(2, 3)
DW = np.cos(W23) * V23  # (the tangent of sin(w) along V23)


def _mk_range(n):
    return lambda w: sum(np.sum(np.sin(w) * (i + 1)) for i in range(n))


def _mk_mode(mode):
    return lambda w: np.sum(np.sin(w)) if mode == "sin" else np.sum(w * w)


def _mk_axis(k):
    return lambda w: np.sum(np.sin(w), axis=k)


def _mk_index(k):
    return lambda w: np.sum(np.sin(w[k]))


@pytest.mark.slow
@pytest.mark.parametrize("make, values, want", [
    (_mk_range, [1, 3, 2, 5], lambda n: np.sum(DW) * n * (n + 1) / 2),
    (_mk_mode, ["sin", "sq", "sin", True, ""],
     lambda m: np.sum(DW) if m == "sin" else np.sum(2 * W23 * V23)),
    (_mk_axis, [0, 1, 0, -1, None], lambda k: np.sum(DW, axis=k)),
    (_mk_index, [0, 1, 0, (0, 1), (1, 2), -1], lambda k: np.sum(DW[k])),
], ids=["range", "mode", "axis", "index"])
def test_python_values_in_the_closure_that_steer_the_code(make, values, want):
    """An int a loop runs to, a string an `if` tests, an axis, an index: each
    lambda its own value's result, three calls each (a second call specializes)."""
    for value in [v for v in values for _ in range(3)] * 2:
        tangent = s2s.jvp(make(value), (W23,), (V23,))[1]
        np.testing.assert_allclose(tangent, want(value), rtol=1e-12, atol=1e-15)


@pytest.mark.slow
def test_two_threads_with_lambdas_of_one_code():
    """The canonical function's cells hold one call's values at a time."""
    import threading

    w, v = RNG.normal(size=4), RNG.normal(size=4)
    errors = []

    def work(seed):
        try:
            for k in range(30):
                x, y = _data(n=6, seed=seed * 100 + k)
                _, tangent = _jvp_fresh(x, y, w, v)
                np.testing.assert_allclose(
                    tangent, np.sum(np.cos(x @ w) * y * (x @ v)), rtol=1e-12)
        except Exception as exc:  # (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


SCALE = 2.0
ACT = np.tanh


def _mk_global(c):
    return lambda w: np.sum(ACT(w) * SCALE * c)


@pytest.mark.slow
def test_module_globals_rebound_between_makes():
    """A module constant that changes kind (float, array) and a module function
    rebound (np.tanh, np.sin): the transform's watch on them holds for the lambdas'
    shared code too."""
    global SCALE, ACT
    w, v = np.linspace(0.1, 1.0, 3), np.linspace(1.0, -0.5, 3)
    try:
        for scale, act, dact in [(2.0, np.tanh, lambda w: 1 - np.tanh(w) ** 2),
                                 (np.arange(3.0), np.tanh, lambda w: 1 - np.tanh(w) ** 2),
                                 (3.0, np.sin, np.cos), (np.ones(3), np.sin, np.cos),
                                 (2.0, np.tanh, lambda w: 1 - np.tanh(w) ** 2)]:
            SCALE, ACT = scale, act
            for c in [1.0, 2.0, 1.0, 1.0]:
                tangent = s2s.jvp(_mk_global(c), (w,), (v,))[1]
                np.testing.assert_allclose(tangent, np.sum(dact(w) * scale * c * v),
                                           rtol=1e-12)
    finally:
        SCALE, ACT = 2.0, np.tanh
