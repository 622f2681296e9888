"""Hessian-vector products at the speed of the code: the cast a gradient called inside
``s2s.jvp`` makes (``np.astype(g, x.dtype) * np.isdtype(...)``) folds where the
signature fixes the dtypes (s2s/optimize/spelled.py ``isdtype_literal``), ``np.astype``
counts as a new array (s2s/optimize/aliases.py), so a lambda's specialized JVP returns
fresh arrays and takes jvp's hot path; a lambda made again is fingerprinted without a
FreeVar per array cell (s2s/api/families.py).  Expected values from NumPy closed forms
(the default tier) and from ``jax.jvp(jax.grad(...))`` in float64 and float32 (slow).
"""

from __future__ import annotations

import ast

import hvp17_fns as F
import numpy as np
import pytest

import s2s
from s2s import syntax
from s2s.api import families
from s2s.api.transformed import JVPS
from s2s.frontend.resolve import FreeVar
from s2s.optimize import aliases, specialize, spelled


def hvp_closed(w, v, x, y):
    """The logistic mean's Hessian times v, by hand."""
    s = 1.0 / (1.0 + np.exp(-y * (x @ w)))
    return x.T @ (s * (1.0 - s) * (x @ v)) / max(x.shape[0], 1)


def grad_closed(w, x, y):
    return x.T @ (-y / (1.0 + np.exp(y * (x @ w)))) / max(x.shape[0], 1)


X, Y = np.random.default_rng(99).normal(size=(8, 4)), np.array([1.0, -1.0] * 4)
_hvp = F.hvp


def _data(n, d=4, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=d).astype(dtype), rng.normal(size=d).astype(dtype),
            rng.normal(size=(n, d)).astype(dtype),
            rng.choice([-1.0, 1.0], n).astype(dtype))


def _canonical_entries():
    """The specialized entries of the lambdas' canonical transform."""
    out = []
    for fun in list(JVPS):
        per_fn = JVPS.get(fun) or {}
        for t in per_fn.values():
            if getattr(t.fn, "__name__", "") == "<lambda>":
                out += [e for e in t._by_signature.values() if e.text]
    return out


def test_closure_hvp_values_change_between_calls_and_the_cast_folds(monkeypatch):
    """Ten lambdas over one data set, w and v new at each call (the specialized code
    from the third on): each result is its own arguments', the gradient beside it
    too; the specialized lambda has no np.isdtype left and returns fresh arrays
    (jvp's hot path).  (New data at each call: the slow tier's test against JAX.)"""
    # (the e-graph passes off: the folds are the facts pass's; a second of egglog saved)
    monkeypatch.setattr(specialize, "DISABLED", {"egraph", "zero"})
    x, y = X, Y
    for k in range(10):
        w, v, _, _ = _data(n=8, seed=k)
        out, tangent = _hvp(w, v, x, y)
        np.testing.assert_allclose(out, grad_closed(w, x, y), rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(tangent, hvp_closed(w, v, x, y), rtol=1e-10, atol=1e-13)
        assert out.dtype == tangent.dtype == np.float64
    entries = [e for e in _canonical_entries() if "logistic_mean" in e.text]
    assert entries, "the lambda never specialized"
    for e in entries:
        assert "isdtype" not in e.text, e.text
        assert e.fresh, e.text


def test_closure_hvp_results_are_the_callers_to_write_into():
    """Writing into one call's results changes neither the next call's nor the data."""
    w, v, _, _ = _data(n=8, seed=3)
    x, y = X, Y
    keep = [a.copy() for a in (w, v, x, y)]
    for _ in range(3):
        out, tangent = _hvp(w, v, x, y)
        out += 100.0
        tangent *= -7.0
    for a, b in zip((w, v, x, y), keep):
        np.testing.assert_array_equal(a, b)
    out, tangent = _hvp(w, v, x, y)
    assert not np.shares_memory(out, tangent)
    np.testing.assert_allclose(tangent, hvp_closed(w, v, x, y), rtol=1e-10, atol=1e-13)


@pytest.mark.slow
@pytest.mark.parametrize("n", [0, 1])
def test_closure_hvp_at_zero_and_one_rows(n):
    for seed in range(3):
        w, v, x, y = _data(n=n, seed=seed)
        out, tangent = _hvp(w, v, x, y)  # (no rows: x.T @ nothing, zeros)
        np.testing.assert_allclose(out, grad_closed(w, x, y), rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(tangent, hvp_closed(w, v, x, y), rtol=1e-10, atol=1e-13)


@pytest.mark.slow
def test_closure_hvp_float32_stays_float32():
    for seed in range(3):
        w, v, x, y = _data(n=8, dtype=np.float32, seed=seed)
        out, tangent = _hvp(w, v, x, y)
        assert out.dtype == tangent.dtype == np.float32
        want = hvp_closed(*(a.astype(np.float64) for a in (w, v, x, y)))
        np.testing.assert_allclose(tangent, want, rtol=2e-5, atol=1e-6)


@pytest.mark.slow
def test_closure_hvp_nan_in_the_data_reaches_every_entry():
    w, v, x, y = _data(n=6, seed=4)
    for _ in range(3):
        _hvp(w, v, x, y)
    x = x.copy()
    x[0, 0] = np.nan
    for _ in range(3):
        out, tangent = _hvp(w, v, x, y)
        assert np.isnan(out).all() and np.isnan(tangent).all()


@pytest.mark.slow
def test_casts_under_jvp_specialized_int_and_float32_targets():
    """The folded test is False for an integer target (the tangent through the cast is
    zero) and True for a float one: values against closed forms over three calls."""
    rng = np.random.default_rng(7)
    for k in range(4):
        w, v, x = rng.normal(size=5), rng.normal(size=5), rng.normal(size=5)
        _, t = F.jvp_to_int(w, v, x)
        ints = np.astype(w * 10.0, np.int64)
        np.testing.assert_allclose(t, np.sum(np.cos(w) * x * v) + np.sum(ints * v),
                                   rtol=1e-12)
        _, t32 = s2s.jvp(F.to_float32, (w,), (v,))
        want = np.sum(2.0 * w.astype(np.float32).astype(np.float64) * v)
        np.testing.assert_allclose(t32, want, rtol=1e-5)


def _call(text):
    return syntax.parse(text, mode="eval").body


def test_isdtype_folds_only_on_a_known_dtype_and_literal_kinds():
    f64 = ((3,), np.dtype(np.float64))
    i64 = ((3,), np.dtype(np.int64))

    def fact_of(f):
        return lambda node: f if isinstance(node, ast.Name) else None

    kinds = '("real floating", "complex floating")'
    n = _call(f"np.isdtype(a.dtype, {kinds})")
    assert spelled.isdtype_literal(n, fact_of(f64)).value is True
    assert spelled.isdtype_literal(n, fact_of(i64)).value is False
    assert spelled.isdtype_literal(n, fact_of(None)) is None  # (nothing known)
    assert spelled.isdtype_literal(_call("np.isdtype(a.dtype, k)"), fact_of(f64)) is None
    assert spelled.isdtype_literal(_call("np.isdtype(a, 'integral')"), fact_of(f64)) is None


def test_times_true_folds_only_for_a_new_value_of_the_products_facts():
    f = ((3,), np.dtype(np.float64))

    def same(node):
        return f

    def wider(node):  # (the operand broadcasts to the product's shape)
        return f if isinstance(node, ast.BinOp) else ((1,), f[1])

    assert ast.unparse(spelled.python_arithmetic(_call("(a + b) * True"), same)) == "a + b"
    assert ast.unparse(spelled.python_arithmetic(_call("True * np.astype(a, d)"),
                                                 same)) == "np.astype(a, d)"
    assert spelled.python_arithmetic(_call("a * True"), same) is None  # (a name: alias)
    assert spelled.python_arithmetic(_call("np.reshape(a, s) * True"), same) is None
    assert spelled.python_arithmetic(_call("(a + b) * False"), same) is None
    assert spelled.python_arithmetic(_call("(a + b) * 1"), same) is None
    assert spelled.python_arithmetic(_call("np.sin(a) * True"), wider) is None
    assert spelled.python_arithmetic(_call("np.sin(a) * True")) is None  # (no facts)


def test_astype_copies_unless_told_not_to():
    a = np.ones(3)
    assert not np.shares_memory(np.astype(a, a.dtype), a)  # (NumPy's own promise)
    assert aliases.makes_new(_call("np.astype(a, a.dtype)"), lambda node: True)
    assert not aliases.makes_new(_call("np.astype(a, a.dtype, copy=False)"),
                                 lambda node: True)
    assert not aliases.makes_new(_call("np.reshape(a, (3,))"), lambda node: True)


@pytest.mark.parametrize("value", [np.zeros(()), np.ones(1), np.ones((2, 0)),
                                   np.ones((2, 3), dtype=np.float32)])
def test_family_array_print_is_the_free_vars(value):
    """families.family's inline print of an array cell is FreeVar.fingerprint's."""
    cell = (lambda: value).__closure__[0]
    assert FreeVar("value", cell).fingerprint() == ("data", families.LEAF, value.ndim, ())


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_closure_hvp_against_jax(dtype):
    """Against jax.jvp(jax.grad(...)) over twelve calls with data, rows and values
    changing, size-1 and 0-row data, and nan/inf in the data."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def jl(w, x, y):
        return jnp.mean(jnp.log1p(jnp.exp(-y * (x @ w))))

    jg = jax.grad(jl)
    tol = dict(rtol=1e-10, atol=1e-13) if dtype == np.float64 else dict(rtol=3e-5, atol=1e-6)
    for k, n in enumerate([8, 8, 9, 1, 8, 0, 8, 12, 8, 8, 1, 8]):
        w, v, x, y = _data(n=n, dtype=dtype, seed=k)
        if k == 7:
            x[2, 1] = np.inf
        if k == 8:
            v[0] = np.nan
        if k == 9:
            v[1] = np.inf
        with np.errstate(all="ignore"):
            out, tangent = _hvp(w, v, x, y)
        want_out, want = jax.jvp(lambda w: jg(w, x, y), (w,), (v,))
        assert tangent.dtype == out.dtype == dtype
        np.testing.assert_allclose(tangent, np.asarray(want), **tol)
        np.testing.assert_allclose(out, np.asarray(want_out), **tol)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_casts_under_jvp_against_jax(dtype):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def twin(w, x):
        return jnp.sum(jnp.sin(w) * x) + jnp.sum((w * 10.0).astype(jnp.int64) * w)

    def twin32(w):
        return jnp.sum(w.astype(jnp.float32) ** 2)

    rng = np.random.default_rng(11)
    for k in range(10):
        w, v, x = (rng.normal(size=5 if k != 4 else 1).astype(dtype) for _ in range(3))
        out, t = F.jvp_to_int(w, v, x)
        want_out, want = jax.jvp(lambda w: twin(w, x), (w,), (v,))
        tol = dict(rtol=1e-10) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(t, np.asarray(want), **tol)
        np.testing.assert_allclose(out, np.asarray(want_out), **tol)
        _, t32 = s2s.jvp(F.to_float32, (w,), (v,))
        np.testing.assert_allclose(t32, np.asarray(jax.jvp(twin32, (w,), (v,))[1]),
                                   rtol=2e-5, atol=1e-6)
