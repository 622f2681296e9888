"""Free arrays a mini-batch loop rebinds at every step (a module name, a closure cell,
a lambda made again over each batch): the code specialized for one batch serves the
next batch of the same shape and dtype (api/signatures.py ``FreeSnapshot``: a plain
array's name passes while it holds a plain array of that layout).  Sound only if
nothing cached depends on a free array's identity or values: the tests change values,
shapes, dtypes and identity between the 1st, 3rd and 10th call, mutate the array in
place, rebind a cell to a list or a scalar, and put NaN/inf, 0-size and size-1 batches
in, each result against a NumPy closed form (default tier) or JAX (slow).
"""

from __future__ import annotations

import warnings

import closure17_fns as F
import numpy as np
import pytest

import s2s
from s2s.api import signatures
from s2s.optimize import specialize as spec_mod


def grad_closed(w, x, y):
    x, y = np.asarray(x), np.asarray(y)
    return x.T @ (-y / (1.0 + np.exp(y * (x @ w)))) / max(x.shape[0], 1)  # (JAX: 0 rows, 0)


def hvp_closed(w, v, x, y):
    s = 1.0 / (1.0 + np.exp(-y * (x @ w)))
    return x.T @ (s * (1.0 - s) * (x @ v)) / x.shape[0]


def _batch(n, d=4, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d)).astype(dtype),
            rng.choice([-1.0, 1.0], n).astype(dtype))


@pytest.fixture
def counted(monkeypatch):
    """How many times the specializer ran."""
    runs = []
    real = spec_mod.specialize

    def counting(*a, **k):
        runs.append(1)
        return real(*a, **k)

    monkeypatch.setattr(spec_mod, "specialize", counting)
    monkeypatch.setattr(signatures, "IN_BACKGROUND", False)
    return runs


def _set(x, y):
    F.XB, F.YB = x, y


def test_module_batch_rebound_each_call_runs_specialized_code(counted):
    """A new batch (new values, a new object) at each of 12 calls: one specializing,
    every result its own batch's gradient; then a batch of another shape and of
    float32 (another signature of the free names: checked again, still right)."""
    g = s2s.grad(F.batch_loss)
    w = np.random.default_rng(1).normal(size=4)
    for i in range(12):
        x, y = _batch(16, seed=i)
        _set(x, y)
        np.testing.assert_allclose(g(w), grad_closed(w, x, y), rtol=1e-12, atol=1e-15)
    assert len(counted) == 1 and g.specialized_source is not None


@pytest.mark.slow
def test_module_batch_of_another_shape_and_dtype_checked_again():
    """A batch of another row count, then float32 batches (float64 w): another layout
    of the free names, so the code is checked (and specialized) again, still right."""
    g = s2s.grad(F.batch_loss)
    w = np.random.default_rng(1).normal(size=4)
    for i in range(4):
        x, y = _batch(16, seed=i)
        _set(x, y)
        np.testing.assert_allclose(g(w), grad_closed(w, x, y), rtol=1e-12, atol=1e-15)
    x, y = _batch(5, seed=50)  # another row count
    for _ in range(3):
        _set(x, y)
        np.testing.assert_allclose(g(w), grad_closed(w, x, y), rtol=1e-12, atol=1e-15)
    x, y = _batch(16, dtype=np.float32, seed=51)  # float32 batch, float64 w
    for i in range(3):
        x, y = _batch(16, dtype=np.float32, seed=60 + i)
        _set(x, y)
        got = g(w)
        want = grad_closed(w, x.astype(np.float64), y.astype(np.float64))
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_same_array_mutated_in_place_between_calls():
    g = s2s.grad(F.batch_loss)
    w = np.linspace(-1.0, 1.0, 4)
    x, y = _batch(8, seed=3)
    _set(x, y)
    for i in range(10):
        x[...] = np.random.default_rng(i).normal(size=x.shape)
        y[::2] = -y[::2]
        np.testing.assert_allclose(g(w), grad_closed(w, x, y), rtol=1e-12, atol=1e-15)


@pytest.mark.slow
def test_closure_cell_rebound_to_arrays_lists_and_scalars():
    """The cell of a grad made once: new arrays (fast), then a list (the IR sees a new
    kind: normalized again), a scalar, and arrays again."""
    loss, set_batch = F.cell_loss()
    g = s2s.grad(loss)
    w = np.array([0.5, -0.25, 1.0, 2.0])
    for i in range(10):
        x, y = _batch(6, seed=i)
        set_batch(x, y)
        np.testing.assert_allclose(g(w), grad_closed(w, x, y), rtol=1e-12, atol=1e-15)
    x, y = _batch(6, seed=20)
    set_batch(x.tolist(), y)
    np.testing.assert_allclose(g(w), grad_closed(w, x, y), rtol=1e-12, atol=1e-15)
    set_batch(x, 1.0)  # a scalar label for every row
    np.testing.assert_allclose(g(w), grad_closed(w, x, np.ones(6)), rtol=1e-12)
    for i in range(3):
        x, y = _batch(6, seed=30 + i)
        set_batch(x, y)
        np.testing.assert_allclose(g(w), grad_closed(w, x, y), rtol=1e-12, atol=1e-15)


def test_boolean_mask_and_index_values_change_with_the_same_shape():
    """A free mask selects another number of rows at each call (the selection's shape
    is its values': no fact of it may be kept), an index other rows."""
    g = s2s.grad(F.masked_loss)
    h = s2s.grad(F.gathered_loss)
    w = np.array([1.0, -2.0, 0.5, 0.25])
    for i in range(10):
        rng = np.random.default_rng(i)
        x = rng.normal(size=(7, 4))
        F.XB, F.MASK, F.IDX = x, rng.random(7) < (0.1 * i), rng.integers(0, 7, 5)
        sel = x[F.MASK]
        np.testing.assert_allclose(g(w), 2 * sel.T @ (sel @ w), rtol=1e-12, atol=1e-15)
        rows = x[F.IDX]
        np.testing.assert_allclose(h(w), rows.T @ np.cos(rows @ w), rtol=1e-12, atol=1e-15)


def test_an_array_subclass_in_place_of_the_batch_is_not_taken_as_a_plain_one():
    g = s2s.grad(F.batch_loss)
    w = np.array([0.1, 0.2, -0.3, 0.4])
    for i in range(4):
        x, y = _batch(6, seed=i)
        _set(x, y)
        g(w)
    x, y = _batch(6, seed=9)
    F.XB, F.YB = np.ma.masked_array(x, mask=np.zeros_like(x, bool)), y
    assert not signatures.like(F.XB, (x.shape, x.dtype))
    np.testing.assert_allclose(np.asarray(g(w)), grad_closed(w, x, y), rtol=1e-12)


def test_nan_inf_zero_and_one_row_batches():
    g = s2s.grad(F.batch_loss)
    w = np.array([1.0, 0.0, -1.0, 2.0])
    for i in range(3):
        _set(*_batch(4, seed=i))
        g(w)
    x, y = _batch(4, seed=7)
    x[1, 2], x[2, 0] = np.nan, np.inf
    _set(x, y)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(g(w), grad_closed(w, x, y), rtol=1e-12)
    for n in (1, 0, 1):
        x, y = _batch(n, seed=8)
        _set(x, y)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, want = g(w), grad_closed(w, x, y)
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.slow
def test_lambda_over_each_batch_hvp_matches_closed_form(counted):
    """``s2s.jvp(lambda w: g(w, xb, yb), (w,), (v,))`` with a new batch per call:
    one specializing for the lambda's family, every result its own batch's."""
    g = s2s.grad(F.logistic_mean)
    rng = np.random.default_rng(5)
    w, v = rng.normal(size=4), rng.normal(size=4)
    for i in range(10):
        xb, yb = _batch(12, seed=100 + i)
        got = s2s.jvp(lambda w: g(w, xb, yb), (w,), (v,))[1]  # noqa: B023
        np.testing.assert_allclose(got, hvp_closed(w, v, xb, yb), rtol=1e-11, atol=1e-14)
    assert len(counted) <= 3  # (grad's own and the lambda's JVP, not one per batch)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_minibatch_grads_and_hvps_against_jax(dtype):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def jloss(w, x, y):
        return jnp.mean(jnp.log1p(jnp.exp(-y * (x @ w))))

    def jmlp(w1, w2, x, y):
        h = jnp.tanh(x @ w1)
        return 0.5 * jnp.mean(jnp.sum((h @ w2 - y) ** 2, axis=1))

    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-4, atol=1e-5)
    rng = np.random.default_rng(0)
    w, v = rng.normal(size=5).astype(dtype), rng.normal(size=5).astype(dtype)
    w1, w2 = (rng.normal(size=(5, 6)) * 0.5).astype(dtype), rng.normal(size=(6, 3)).astype(dtype)
    g = s2s.grad(F.batch_loss)
    gl = s2s.grad(F.logistic_mean)
    for i, n in enumerate([16, 16, 3, 16, 1, 16, 16, 0, 16, 16, 16, 7]):
        x = rng.normal(size=(n, 5)).astype(dtype)
        y = rng.choice([-1.0, 1.0], n).astype(dtype)
        if i == 9:
            x[0, 0] = np.inf
        _set(x, y)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = g(w)
            want = np.asarray(jax.grad(jloss)(w, x, y))
            np.testing.assert_allclose(got, want, **tol)
            assert got.dtype == dtype
            hv = s2s.jvp(lambda w: gl(w, x, y), (w,), (v,))[1]  # noqa: B023
            jhv = jax.jvp(lambda w: jax.grad(jloss)(w, x, y), (w,), (v,))[1]  # noqa: B023
            np.testing.assert_allclose(hv, np.asarray(jhv), **tol)
            ym = rng.normal(size=(n, 3)).astype(dtype)
            mg = s2s.grad(lambda a, b: F.mlp_loss(a, b, x, ym), argnums=(0, 1))(w1, w2)  # noqa: B023
            jg = jax.grad(jmlp, argnums=(0, 1))(w1, w2, x, ym)
            for a, b in zip(mg, jg):
                np.testing.assert_allclose(a, np.asarray(b), **tol)


@pytest.mark.slow
def test_jax_backend_reads_a_rebound_module_batch():  # (api/jit_jax_free.py)
    pytest.importorskip("jax")
    j = s2s.jit(s2s.grad(F.batch_loss), backend="jax")
    w = np.array([0.3, -0.2, 0.1, 0.5])
    for i in range(4):
        _set(*_batch(8, seed=i))
        np.testing.assert_allclose(np.asarray(j(w)), grad_closed(w, F.XB, F.YB), rtol=1e-6)


@pytest.mark.slow
def test_vmap_of_grad_over_a_rebound_module_batch(counted):
    v = s2s.vmap(s2s.grad(F.batch_loss))
    ws = np.random.default_rng(0).normal(size=(3, 4))
    for i in range(10):
        x, y = _batch(6, seed=200 + i)
        _set(x, y)
        want = np.stack([grad_closed(w, x, y) for w in ws])
        np.testing.assert_allclose(v(ws), want, rtol=1e-11, atol=1e-15)
