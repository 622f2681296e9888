"""The JAX backend reads free names at every call, as the NumPy backend does
(api/jit_jax_free.py): a batch a training loop rebinds (``mod.XB = next_batch``) or
writes in place, a closure cell, a float scale, an integer index, a boolean mask, an
integer count.  Each ``s2s.jit(..., backend="jax")`` result against the NumPy
backend's and ``jax.grad``'s on the same data (float64 and float32), over 10 calls
whose values, shapes and dtypes change; a new batch of the same layout runs the
compiled code without tracing again.
"""

from __future__ import annotations

import warnings

import jaxfree17_fns as F
import numpy as np
import pytest

import s2s
from s2s.api import jit_jax_free

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


def jloss(w, x, y):
    return jnp.mean(jnp.log1p(jnp.exp(-y * (x @ w))))


def _batch(n, d=4, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d)).astype(dtype),
            rng.choice([-1.0, 1.0], n).astype(dtype))


def _tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-4, atol=1e-5)


@pytest.fixture(autouse=True)
def first_batch(monkeypatch):
    """Each test starts from a batch of its own (the module's names restored after)."""
    x, y = _batch(5, seed=99)
    for name, value in dict(XB=x, YB=y, SCALE=1.0, IDX=np.arange(3),
                            MASK=np.ones(5, bool), REPEAT=2).items():
        monkeypatch.setattr(F, name, value)


def test_what_is_passed_and_what_is_guarded():
    assert jit_jax_free.passed(np.zeros(3)) and jit_jax_free.passed(np.zeros((), np.float32))
    assert not jit_jax_free.passed(np.zeros(3, int))  # (an index: guarded)
    assert not jit_jax_free.passed(np.ma.masked_array(np.zeros(3)))  # (kept as seen)
    assert not jit_jax_free.passed([1.0, 2.0])
    for v in (1.5, 2, True, np.float32(1), np.arange(3), np.ones(2, bool)):
        assert jit_jax_free.guard_key(v) is not None
    assert jit_jax_free.guard_key(float("nan")) == jit_jax_free.guard_key(float("nan"))
    assert jit_jax_free.guard_key(1) != jit_jax_free.guard_key(1.0)
    assert jit_jax_free.guard_key(np.arange(3)) != jit_jax_free.guard_key(np.arange(1, 4))
    assert jit_jax_free.guard_key("abc") is None and jit_jax_free.guard_key(np.zeros(2)) is None


@pytest.mark.slow
def test_rebound_module_batch_read_at_every_call_one_compilation():
    """(one trace: 2 s here, most of it XLA's compile) three batches of one layout: each result its own batch's."""
    j = s2s.jit(s2s.grad(F.batch_loss), backend="jax")
    w = np.array([0.3, -0.2, 0.1, 0.5])
    for i in range(3):
        F.XB, F.YB = _batch(8, seed=i)
        np.testing.assert_allclose(np.asarray(j(w)),
                                   np.asarray(jax.grad(jloss)(w, F.XB, F.YB)), rtol=1e-12)
    assert j._compilations == 1


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rebound_batch_values_shapes_dtypes_against_numpy_and_jax(dtype):
    """10+ calls: new values each call, other row counts (0 and 1 too), a batch of
    the other float dtype, NaN/inf; the JAX backend, the NumPy backend and jax.grad
    agree; a batch of a layout seen before traces nothing new."""
    j = s2s.jit(s2s.grad(F.batch_loss), backend="jax")
    g = s2s.grad(F.batch_loss)
    w = np.random.default_rng(1).normal(size=4).astype(dtype)
    other = np.float32 if dtype == np.float64 else np.float64
    plan = [(16, dtype), (16, dtype), (3, dtype), (16, dtype), (1, dtype), (16, other),
            (16, dtype), (0, dtype), (16, dtype), (16, dtype), (3, dtype), (16, dtype)]
    for i, (n, dt) in enumerate(plan):
        x, y = _batch(n, dtype=dt, seed=10 + i)
        if i == 9:
            x[0, 1] = np.inf
        F.XB, F.YB = x, y
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, ref = np.asarray(j(w)), g(w)
            want = np.asarray(jax.grad(jloss)(w, x, y))
        tol = _tol(np.float32 if np.float32 in (dtype, dt) else np.float64)
        np.testing.assert_allclose(got, want, **tol)
        np.testing.assert_allclose(got, ref, **tol)
        assert got.dtype == ref.dtype
    assert j._compilations == 5  # (16, 3, 1, 0 rows; the other dtype's batch)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batch_written_in_place_between_calls(dtype):
    """The same arrays, written in place before each call: the JAX backend passes
    them at every call, so it sees the new values, as the NumPy backend does."""
    j = s2s.jit(s2s.value_and_grad(F.batch_loss), backend="jax")
    g = s2s.value_and_grad(F.batch_loss)
    w = np.linspace(-1.0, 1.0, 4).astype(dtype)
    x, y = _batch(8, dtype=dtype, seed=3)
    F.XB, F.YB = x, y
    for i in range(10):
        x[...] = np.random.default_rng(i).normal(size=x.shape)
        y[::2] = -y[::2]
        (v, d), (_, rd) = j(w), g(w)
        jv, jd = jax.value_and_grad(jloss)(w, x, y)
        np.testing.assert_allclose(np.asarray(d), np.asarray(jd), **_tol(dtype))
        np.testing.assert_allclose(np.asarray(d), rd, **_tol(dtype))
        np.testing.assert_allclose(float(v), float(jv), **_tol(dtype))
    assert j._compilations == 1


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_closure_cells_rebound(dtype):
    loss, set_batch = F.cell_loss()
    j = s2s.jit(s2s.grad(loss), backend="jax")
    g = s2s.grad(loss)
    w = np.array([0.5, -0.25, 1.0, 2.0], dtype)
    for i, n in enumerate([6, 6, 6, 2, 6, 6, 6, 6, 9, 6]):
        x, y = _batch(n, dtype=dtype, seed=30 + i)
        set_batch(x, y)
        got = np.asarray(j(w))
        np.testing.assert_allclose(got, np.asarray(jax.grad(jloss)(w, x, y)), **_tol(dtype))
        np.testing.assert_allclose(got, g(w), **_tol(dtype))
    assert j._compilations == 3


@pytest.mark.slow
def test_scale_index_mask_and_count_rebound():
    """A float scale, an integer index, a boolean mask (the selection's shape is its
    values'), an integer count (a shape): each rebound between calls, the JAX backend
    against the NumPy backend's gradient (each a new value: traced again)."""
    w = np.array([1.0, -2.0, 0.5, 0.25])
    js = {f: s2s.jit(s2s.grad(f), backend="jax")
          for f in (F.scaled_loss, F.indexed_loss, F.repeated_loss)}
    for i in range(10):
        rng = np.random.default_rng(i)
        F.XB, F.YB = _batch(7, seed=40 + i)
        F.SCALE = [0.0, 0.5, 1e-3][i % 3]
        F.IDX = rng.integers(0, 7, 5)
        F.MASK = rng.random(7) < 0.1 * i
        F.REPEAT = 1 + i % 3
        for f, j in js.items():
            np.testing.assert_allclose(np.asarray(j(w)), s2s.grad(f)(w), rtol=1e-12,
                                       atol=1e-14, err_msg=f.__name__)
    assert js[F.scaled_loss]._compilations == 3  # (a scale seen before: its trace)


@pytest.mark.slow
def test_plain_function_vmap_and_hessian_read_the_rebound_batch():
    """The user's function jitted as written, vmap(grad) and hessian of the loss."""
    w = np.array([0.3, -0.2, 0.1, 0.5])
    ws = np.random.default_rng(0).normal(size=(3, 4))
    jf = s2s.jit(F.batch_loss, backend="jax")
    jv = s2s.jit(s2s.vmap(s2s.grad(F.batch_loss)), backend="jax")
    jh = s2s.jit(s2s.hessian(F.batch_loss), backend="jax")
    for i in range(5):
        x, y = _batch(6, seed=60 + i)
        F.XB, F.YB = x, y
        np.testing.assert_allclose(float(jf(w)), float(jloss(w, x, y)), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(jv(ws)), np.asarray(
            jax.vmap(jax.grad(jloss), (0, None, None))(ws, x, y)), rtol=1e-10)
        np.testing.assert_allclose(np.asarray(jh(w)), np.asarray(
            jax.hessian(jloss)(w, x, y)), rtol=1e-10, atol=1e-13)


@pytest.mark.slow
def test_a_free_array_whose_values_make_a_mask_is_guarded_by_its_bytes():
    """``XB[XB[:, 0] > 0]``: a traced XB cannot make the mask, so the jit takes the
    array as a constant guarded by its bytes (FreeInputs.demote): a new batch, and the
    same array written in place, trace again with their values."""
    j = s2s.jit(s2s.grad(F.rows_by_values), backend="jax")
    w = np.array([0.5, -1.0, 2.0, 0.25])

    def want(x):
        sel = x[x[:, 0] > 0.0]
        return 2 * sel.T @ (sel @ w)

    for i in range(4):
        F.XB = np.random.default_rng(70 + i).normal(size=(9, 4))
        np.testing.assert_allclose(np.asarray(j(w)), want(F.XB), rtol=1e-12)
    F.XB[:, 0] = -F.XB[:, 0]  # in place
    np.testing.assert_allclose(np.asarray(j(w)), want(F.XB), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(j(w)), s2s.grad(F.rows_by_values)(w), rtol=1e-12)


def powered(w, k):  # (the batch as a module's attribute, `F.XB`, and a static power)
    return np.sum((F.XB @ w) ** k)


@pytest.mark.slow
def test_a_module_attribute_batch_with_a_static_argument():
    """``F.XB`` read through the module (api/jit_jax_objects.py ``_ModuleOnJax``)
    in a jit with ``static_argnums``: each call's batch, each power's trace."""
    j = s2s.jit(s2s.grad(powered), backend="jax", static_argnums=1)
    w = np.array([0.3, -0.2, 0.1, 0.5])

    def jpowered(w, x, k):
        return jnp.sum((x @ w) ** k)

    for i in range(5):
        F.XB = np.random.default_rng(90 + i).normal(size=(6, 4))
        for k in (2, 4):
            got = np.asarray(j(w, k))
            np.testing.assert_allclose(got, s2s.grad(powered)(w, k), rtol=1e-12)
            np.testing.assert_allclose(got, np.asarray(jax.grad(jpowered)(w, F.XB, k)),
                                       rtol=1e-12)
    assert j._compilations == 2
