"""Hessian-vector products (``s2s.jvp`` of ``s2s.grad``) of functions written for these
tests (not the benchmark's), and float32 calls on the fast paths of ``grad`` and
``jvp`` (s2s/api/hotcalls.py, s2s/api/pushforward.py).

Every expected value is JAX's: ``jax.jvp(jax.grad(f))`` and ``jax.grad`` of the same
source on ``jax.numpy``, in float64 and float32, at the 1st, 3rd and 10th call with the
values changing between calls and the caller writing into its arrays and the results.
A float32 call whose specialized code computes in float64 (a float64 scalar such as
``np.sqrt(q.shape[1])`` promotes, as NumPy's rules say) returns a new float32 array
from the fast path; one whose code stays in float32 returns its results as they are,
without the checked path's Python (counted with ``sys.setprofile``)."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import s2s
from s2s.api.pushforward import _jvp_transform

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402


def sin_times_x(x):
    return np.sum(np.sin(x) * x)


def softplus_sum(x):
    return np.sum(np.log1p(np.exp(x)))


def logistic_loss(w, a, y):
    return np.mean(np.log1p(np.exp(-y * (a @ w))))


def mlp_loss(w1, x, y, w2):
    h = np.tanh(x @ w1)
    return np.sum((h @ w2 - y) ** 2) / y.shape[0]


def tanh_sq(x):
    return np.sum(np.tanh(x) ** 2)


def scaled_attention(q, k):  # np.sqrt of an int is a float64 scalar: float32 promotes
    s = q @ k.T / np.sqrt(q.shape[1])
    e = np.exp(s - np.max(s, axis=1, keepdims=True))
    return np.sum(np.log(np.sum(e, axis=1)))


def scaled_tanh_sq(x):  # float32 in, float64 inside (np.sqrt of an int)
    return np.sum(np.tanh(x / np.sqrt(x.shape[0])) ** 2)


def twin(f):
    return types.FunctionType(f.__code__, {**f.__globals__, "np": jnp}, f.__name__)


def tol(dtype):
    return dict(rtol=3e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-11)


R = np.random.default_rng(5)
CASES = {  # function, a maker of its arguments (the first differentiated)
    "sin_times_x": (sin_times_x, lambda r: (r.normal(size=7),)),
    "softplus_sum": (softplus_sum, lambda r: (r.normal(size=9) * 3,)),
    "logistic_loss": (logistic_loss, lambda r: (r.normal(size=4), r.normal(size=(10, 4)),
                                                 r.choice([-1.0, 1.0], 10))),
    "mlp_loss": (mlp_loss, lambda r: (r.normal(size=(3, 5)) * 0.5, r.normal(size=(6, 3)),
                                       r.normal(size=(6, 2)), r.normal(size=(5, 2)))),
    "tanh_sq": (tanh_sq, lambda r: (r.normal(size=8),)),
}


@pytest.mark.slow  # (ten specializations and JAX compiles: the default tier's budget)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(CASES))
def test_hvps_match_jax(name, dtype):
    f, make = CASES[name]
    g = s2s.grad(f)
    gj = jax.grad(twin(f))
    want_fn = jax.jit(lambda *a: jax.jvp(gj, a[:-1], (a[-1], *(
        jnp.zeros_like(p) for p in a[1:-1]))))
    r = np.random.default_rng(0)
    for call in range(10):
        args = tuple(np.asarray(a, dtype=dtype) for a in make(r))
        v = r.normal(size=args[0].shape).astype(dtype)
        tangents = (v, *(np.zeros_like(a) for a in args[1:]))
        got = s2s.jvp(g, args, tangents)
        if call in (0, 2, 9):
            want = want_fn(*args, v)
            for a, b in zip(got, want):
                b = np.asarray(b)
                assert type(a) is np.ndarray and a.dtype == dtype and a.shape == b.shape
                np.testing.assert_allclose(a, b, **tol(dtype))
        for a in got:  # the caller writes into the results, and into its arrays
            a[...] = 7.0
        v[...] = 3.0
    assert _jvp_transform(g, False).specialized_source is not None


def _python_calls(fn, *args):
    """The names of the Python functions a call runs (sys.setprofile)."""
    names = []

    def prof(frame, event, arg):
        if event == "call":
            names.append(frame.f_code.co_name)

    sys.setprofile(prof)
    try:
        out = fn(*args)
    finally:
        sys.setprofile(None)
    return out, names


def test_a_float32_gradient_computed_in_float64_comes_back_float32_from_the_fast_path():
    g = s2s.grad(scaled_attention)
    jitted = s2s.jit(g, backend="numpy")
    gj = jax.jit(jax.grad(twin(scaled_attention)))
    r = np.random.default_rng(1)
    q, k = (r.normal(size=(5, 4)).astype(np.float32) for _ in range(2))
    for call in range(10):
        for fn in (g, jitted):
            got, names = _python_calls(fn, q, k)
            if call in (0, 2, 9):
                assert got.dtype == np.float32 and got.shape == q.shape
                assert got.flags.writeable and not np.may_share_memory(got, q)
                np.testing.assert_allclose(got, np.asarray(gj(q, k)), **tol(np.float32))
            if call >= 2:  # the specialized code, and no checked path around it
                assert "_postprocess" not in names and "_fix_one" not in names, names
            got[...] = 7.0
        q[...] = r.normal(size=q.shape)
    text = g.specialized_source
    assert text is not None and "np.float64(2.0)" in text  # (it does compute in float64)


@pytest.mark.parametrize("f", [tanh_sq, scaled_tanh_sq], ids=lambda f: f.__name__)
def test_a_float32_hvp_takes_the_fast_path(f):
    """tanh_sq's code computes in float32 (its results as they are), scaled_tanh_sq's
    in float64 (cast to float32 there, as the checked path casts)."""
    g = s2s.grad(f)
    gj = jax.jit(lambda a, b: jax.jvp(jax.grad(twin(f)), (a,), (b,)))
    r = np.random.default_rng(2)
    x, v = (r.normal(size=6).astype(np.float32) for _ in range(2))
    for call in range(10):
        got, names = _python_calls(lambda a, b: s2s.jvp(g, (a,), (b,)), x, v)
        if call in (0, 2, 9):
            want = gj(x, v)
            for a, b in zip(got, want):
                assert a.dtype == np.float32
                np.testing.assert_allclose(a, np.asarray(b), **tol(np.float32))
        if call >= 3:  # (the third call made the entry the later calls take)
            assert "_finish" not in names and "_jvp_results" not in names, names
        got[1][...] = 7.0
        x[...], v[...] = r.normal(size=6), r.normal(size=6)
    # a float64 call after it: its own entry, float64 results
    got = s2s.jvp(g, (x.astype(np.float64),), (v.astype(np.float64),))
    assert all(a.dtype == np.float64 for a in got)


def normalized_rows(x, t):  # np.mean over an axis: its cotangent divides by a count
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return np.sum((x - mu) / np.sqrt(var + 1e-5) * t) + np.average(x, axis=0).sum()


def test_a_means_count_keeps_float32_code_in_float32():
    """The mean's cotangent divides by ``size / max(size, 1)``, a Python float (weak):
    float32 code stays float32, as JAX's does, and its specialized code too (the
    count folds to a Python number, not a NumPy float64 that would promote)."""
    g = s2s.grad(normalized_rows)
    gj = jax.jit(jax.grad(twin(normalized_rows)))
    r = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        x, t = (r.normal(size=(4, 6)).astype(dtype) for _ in range(2))
        for call in range(3):
            got = g(x, t)
            assert got.dtype == dtype
            np.testing.assert_allclose(got, np.asarray(gj(x, t)), **tol(dtype))
            x[...] = r.normal(size=x.shape)
        entry = [e for e in g._by_signature.values() if e.text is not None][-1]
        assert entry.fn(x, t).dtype == dtype  # (the code itself, before any cast)
        assert "np.int64" not in entry.text  # (the counts are Python numbers)
        assert dtype == np.float64 or "np.float64" not in entry.text
