"""The per-call fast paths (s2s/api/transformed.py ``__call__``/``_run_entry``,
s2s/api/signatures.py, s2s/api/jit.py) give what the checked path gives: the same
values (JAX's), types, dtypes and shapes, a fresh writeable result that shares no
memory with the caller's arrays, at the 1st, 3rd and 10th call with values changing,
and they notice what would make the cached code stale (a module constant, a default
or a closure cell rebound).  Also the matmul cotangents the specializer spells for
1-D operands, against JAX, and the JAX backend's dispatch staying on JAX's C++ path
after a vmapped function's first call."""

from __future__ import annotations

import types

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

OFFSET = 0.5


def wave(x):
    return np.sum(np.sin(x) * x) + OFFSET * np.sum(x**2)


def with_default(x, scale=2.0):
    return np.sum(np.tanh(x) * scale)


def product(a, b):
    return np.sum(np.sin(a @ b))


def twin(f, **extra):
    return types.FunctionType(f.__code__, {**f.__globals__, "np": jnp, **extra}, f.__name__,
                              f.__defaults__)


def check(got, want, primal, first):
    """``got``: JAX's value ``want``, of the type, dtype and shape of the first call's
    result ``first`` (an array of ``primal``'s dtype and shape), writeable and sharing
    nothing with ``primal``."""
    assert type(got) is type(first) is np.ndarray
    assert got.dtype == first.dtype == np.result_type(primal)
    assert got.shape == first.shape == np.shape(primal)
    assert got.flags.writeable
    assert not (isinstance(primal, np.ndarray) and np.may_share_memory(got, primal))
    tol = 1e-5 if got.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, np.asarray(want), rtol=tol, atol=tol)


@pytest.mark.parametrize("make", [
    lambda v: np.array(v), lambda v: np.float64(v), lambda v: float(v),
    lambda v: np.float32(v), lambda v: np.array(v, np.float32), lambda v: np.arange(3.0) * v,
], ids=["0-d", "np.float64", "float", "np.float32", "0-d float32", "vector"])
def test_the_fast_path_returns_what_the_first_call_returns(make):
    g = s2s.grad(wave)
    jg = jax.grad(twin(wave))
    first = g(make(0.3))
    for call, v in enumerate(np.linspace(-2.0, 2.0, 10)):
        x = make(v)
        got = g(x)
        if call in (0, 2, 9):
            check(got, jg(jnp.asarray(x)), x, first)
        got[...] = 99.0  # the caller writes into a result: later ones are unaffected
    assert g.specialized_source is not None


def test_a_rebound_module_constant_reaches_the_fast_path(monkeypatch):
    g = s2s.grad(wave)
    x = np.linspace(-1, 1, 4)
    for offset in (0.5, 0.5, 0.5, 3.0, 3.0, 3.0):
        monkeypatch.setitem(wave.__globals__, "OFFSET", offset)
        check(g(x), jax.grad(twin(wave, OFFSET=offset))(x), x, g(x))


def test_a_replaced_default_reaches_the_fast_path(monkeypatch):
    g = s2s.grad(with_default)
    x = np.linspace(-1, 1, 4)
    for scale in (2.0, 2.0, 2.0, -1.5, -1.5, -1.5):
        monkeypatch.setattr(with_default, "__defaults__", (scale,))
        check(g(x), jax.grad(twin(with_default))(x), x, g(x))


def test_a_rebound_closure_cell_reaches_the_fast_path():
    scale = 2.0

    def inner(x):
        return np.sum(np.cos(x) * scale)

    g = s2s.grad(inner)
    x = np.linspace(-1, 1, 4)
    for s in (2.0, 2.0, 2.0, 5.0, 5.0, 5.0):
        scale = s
        np.testing.assert_allclose(g(x), -np.sin(x) * s, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((4, 3), (3,)), ((3,), (3, 5)),
                                   ((4, 3), (3, 5))])
def test_matmul_cotangents_of_every_rank_pair(sa, sb, dtype):
    g = s2s.grad(product, argnums=(0, 1))
    jg = jax.grad(twin(product), argnums=(0, 1))
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    for call in range(3):
        a, b = rng.normal(size=sa).astype(dtype), rng.normal(size=sb).astype(dtype)
        for got, want, p in zip(g(a, b), jg(a, b), (a, b)):
            check(got, want, p, got)
    text = g.specialized_source
    assert "matmul_lhs_bar(" not in text.split("def ")[1]
    assert "matmul_rhs_bar(" not in text.split("def ")[1]


def test_a_python_float_cotangent_of_an_inner_product_keeps_its_dtype():
    def dot(a, b):
        return (a @ b) * 3.0

    g = s2s.grad(dot, argnums=(0, 1))
    a, b = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    results = [g(a, b) for _ in range(3)]
    for r in results:
        assert [x.dtype for x in r] == [np.float32, np.float32]
        np.testing.assert_allclose(r[0], 3 * b)
        np.testing.assert_allclose(r[1], 3 * a)


def test_jit_on_numpy_counts_signatures_and_follows_values():
    j = s2s.jit(s2s.grad(wave), backend="numpy")
    jg = jax.grad(twin(wave))
    for n in (3, 3, 3, 5, 5, 3):
        x = np.linspace(-1, 1, n)
        check(j(x), jg(x), x, s2s.grad(wave)(x))
    assert j._compilations == 2
    x = np.linspace(-1, 1, 3)
    got = j(x)
    got[...] = 5.0
    check(j(x), jg(x), x, got)


def test_a_vmapped_function_on_jax_dispatches_on_jax_fast_path(monkeypatch):
    """Its first call raises inside the trace for an example of the arguments (the
    rank probe runs outside it); JAX would then run every later call of that
    signature through its Python path."""
    from jax._src import pjit

    def loss(w, x, y):
        return np.log1p(np.exp(-y * (x @ w)))

    f = s2s.jit(s2s.vmap(s2s.grad(loss), in_axes=(None, 0, 0)), backend="jax")
    rng = np.random.default_rng(0)
    w, x, y = rng.normal(size=3), rng.normal(size=(6, 3)), rng.choice([-1.0, 1.0], 6)
    want = jax.vmap(jax.grad(twin(loss)), in_axes=(None, 0, 0))(w, x, y)
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(w, x, y)), want, rtol=1e-12)
    slow = []
    real = pjit._run_python_pjit
    monkeypatch.setattr(pjit, "_run_python_pjit", lambda *a: slow.append(1) or real(*a))
    for _ in range(5):
        np.testing.assert_allclose(np.asarray(f(w, x, y)), want, rtol=1e-12)
    assert not slow


SCALES = np.ones(3)


def per_example(w, x, y):
    return np.log1p(np.exp(-y * (x @ (w * SCALES)))) + OFFSET * np.sum(w**2)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_vmapped_gradients_hot_path_follows_values_constants_and_dtypes(
        dtype, monkeypatch):
    """``Vmapped.__call__``'s hot path (after the shapes specialized): JAX's values at
    the 1st, 3rd and 10th call with values changing, in the inputs' dtype, results the
    caller may write into, and a module constant or array rebound (another shape too)
    between calls is read."""
    g = s2s.vmap(s2s.grad(per_example), in_axes=(None, 0, 0))
    rng = np.random.default_rng(0)
    for call in range(12):
        if call == 5:
            monkeypatch.setitem(per_example.__globals__, "OFFSET", -2.0)
        if call == 8:
            monkeypatch.setitem(per_example.__globals__, "SCALES", np.full(3, 0.5))
        w = rng.normal(size=3).astype(dtype)
        x, y = rng.normal(size=(6, 3)).astype(dtype), rng.choice([-1.0, 1.0], 6).astype(dtype)
        got = g(w, x, y)
        scales, offset = per_example.__globals__["SCALES"], per_example.__globals__["OFFSET"]
        want = jax.vmap(jax.grad(twin(per_example, SCALES=jnp.asarray(scales),
                                      OFFSET=offset)), in_axes=(None, 0, 0))(w, x, y)
        assert type(got) is np.ndarray and got.dtype == dtype and got.shape == (6, 3)
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, np.asarray(want), rtol=tol, atol=tol)
        got[...] = 99.0  # the caller writes into a result: later ones are unaffected
    assert g._hot  # the hot path was taken
