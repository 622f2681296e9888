"""The logistic HVP's tangent algebra: a value less its share ``e / (1 + e)`` is the
value over ``1 + e`` (s2s/optimize/complements.py, a row of docs/optimizer-rules.md).
Both sides of the rule on every combination of special values (float64, float32); the
pass on code that meets its guard and on code that misses one part of it; and the
specialized Hessian-vector products (zero data tangents given, a closure, a lambda made
again) against closed forms with values changing at calls 1, 3 and 10, NaN and inf,
zero tangents (default), and against ``jax.jvp(jax.grad(f))`` in float64 and float32
(slow)."""

from __future__ import annotations

import ast
import itertools
import re

import hvp18_fns as F
import numpy as np
import pytest
import support

import s2s
from s2s.api.transformed import JVPS
from s2s.errors import TransformError
from s2s.optimize import specialize
from s2s.optimize.complements import complements

SPECIAL = [-2.0, -0.5, -0.0, 0.0, 0.5, 3.0, 800.0, -800.0, np.inf, -np.inf, np.nan]


@pytest.fixture(autouse=True)
def _cheap_specializing(request, monkeypatch):
    """The default tier specializes without egglog (the e-graph's own rules and the
    zero proof: a second per code); this file's rule runs under the same pass name
    without it.  The slow tier runs every pass."""
    if "slow" not in request.keywords:
        monkeypatch.setattr(specialize, "egraph_simplify", lambda fn, fact: None)
        monkeypatch.setattr(specialize, "DISABLED", {"zero"})


def _sides(z, u, b, guarded=True):
    """The rule's left and right sides (``d`` has the factor ``e`` where ``guarded``)."""
    e = np.exp(u)
    d = z * e if guarded else z
    t = 1.0 + e
    q = b * d
    return (-d * b / t * e + b * d, b * d - d * e * b / t), (q / t + (q - q),) * 2


@pytest.mark.every_case
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_both_sides_on_every_combination_of_special_values(dtype):
    """Every (z, u, b) of SPECIAL: the same elements are NaN on both sides, none is
    infinite, and the finite ones agree to rounding (relative to b * d: the left side
    cancels)."""
    grid = np.array(list(itertools.product(SPECIAL, repeat=3)), dtype=dtype).T
    with np.errstate(all="ignore"):
        lhs, rhs = _sides(*grid)
        scale = np.abs(grid[2] * grid[0] * np.exp(grid[1]))
    tol = 1e-5 if dtype == np.float32 else 1e-13
    for a, b in zip(lhs, rhs):
        assert a.dtype == b.dtype == dtype
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        assert not np.isinf(a).any() and not np.isinf(b).any()
        finite = np.isfinite(a)
        assert finite.sum() > 100  # (the grid's finite rows are compared, not skipped)
        assert np.all(np.abs(a - b)[finite] <= tol * (1 + scale[finite]))


def test_without_the_factor_e_or_q_minus_q_the_sides_differ():
    """The guard's part that d has the factor e is needed: with d = z, at e = +inf the
    left side is NaN and the right side 0; and so is q - q: at an infinite z, q / t
    alone is infinite where the left side is NaN (the test above would see both)."""
    with np.errstate(all="ignore"):
        (lhs, _), (rhs, _) = _sides(np.array([1.0]), np.array([np.inf]), np.array([2.0]),
                                    guarded=False)
        assert np.isnan(lhs[0]) and rhs[0] == 0.0
        (lhs, _), _ = _sides(np.array([np.inf]), np.array([0.5]), np.array([2.0]))
        e = np.exp(0.5)
        assert np.isnan(lhs[0]) and np.isinf(2.0 * np.inf * e / (1 + e))


def _rewritten(body: str) -> str:
    """``complements`` on a function of float64 arrays of shape (5,)."""
    fn = ast.parse(f"def f(z, u, b, w):\n{body}").body[0]
    complements(fn, lambda node: ((5,), np.dtype(np.float64)))
    return ast.unparse(fn)


GUARDED = ("    e = np.exp(u)\n    d = z * e\n    t = 1 + e\n    c = 0.5 / t\n")


@pytest.mark.every_case
@pytest.mark.parametrize("term, want", [
    ("-d * c / t * e + c * d", "return c * d / t + (c * d - c * d)"),
    ("c * d + -d * c / t * e", "return c * d / t + (c * d - c * d)"),
    ("c * d - e * c * d / t", "return c * d / t + (c * d - c * d)"),
    ("b * -d / t * e + b * d", "return b * d / t + (b * d - b * d)"),
    ("-e * b / t * e + b * e", "return b * e / t + (b * e - b * e)"),
])
def test_the_pass_rewrites_what_meets_its_guard(term, want):
    assert want in _rewritten(GUARDED + f"    return {term}\n")


@pytest.mark.every_case
@pytest.mark.parametrize("body", [
    "    e = np.exp(u)\n    d = z * e\n    t = 2 + e\n    return -d * b / t * e + b * d\n",
    "    e = np.tanh(u)\n    d = z * e\n    t = 1 + e\n    return -d * b / t * e + b * d\n",
    "    e = np.exp(u)\n    d = z * w\n    t = 1 + e\n    return -d * b / t * e + b * d\n",
    "    e = np.exp(u)\n    d = z * e\n    t = 1 + e\n    e *= 2.0\n"
    "    return -d * b / t * e + b * d\n",
    "    e = np.exp(u)\n    d = z * e\n    t = 1 + e\n    return d * b / t * e + b * d\n",
    "    e = np.exp(u)\n    d = z * e\n    t = 1 + e\n    return -d * b / t * e + w * d\n",
    "    e = np.exp(u)\n    d = z * e\n    t = 1 + e\n    d = d + 1.0\n"
    "    return -d * b / t * e + b * d\n",
])
def test_the_pass_leaves_what_misses_a_part_of_its_guard(body):
    """t not 1 + e, e not an exponential, d without the factor e, e written into, the
    terms adding, another kept factor, d bound twice: left as it is."""
    assert "/ t * e" in _rewritten(body)


def logistic_grad(w, x, y):
    return x.T @ (-y / (1.0 + np.exp(y * (x @ w)))) / max(x.shape[0], 1)


def logistic_hvp(w, v, x, y):
    s = 1.0 / (1.0 + np.exp(-y * (x @ w)))
    return x.T @ (s * (1.0 - s) * y * y * (x @ v)) / max(x.shape[0], 1)


def _data(n, dtype=np.float64, seed=0, d=4):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=d).astype(dtype), rng.normal(size=d).astype(dtype),
            rng.normal(size=(n, d)).astype(dtype), rng.choice([-1.0, 1.0], n).astype(dtype))


def _spellings(g):
    """The three spellings of the benchmark's HVP: (w, v, x, y) -> (grad, hvp)."""
    def zeros(w, v, x, y):
        return s2s.jvp(g, (w, x, y), (v, np.zeros_like(x), np.zeros_like(y)))

    def closure(w, v, x, y):
        return s2s.jvp(lambda u: g(u, x, y), (w,), (v,))

    def grad_of_lambda(w, v, x, y):
        return s2s.jvp(s2s.grad(lambda u: F.logistic_mean(u, x, y)), (w,), (v,))
    return {"zeros": zeros, "closure": closure, "grad_of_lambda": grad_of_lambda}


@pytest.mark.every_case
@pytest.mark.parametrize("spelling, dtype", [
    ("zeros", np.float64),
    *(pytest.param(s, d, marks=pytest.mark.slow) for s, d in [
        ("zeros", np.float32), ("closure", np.float32), ("closure", np.float64),
        ("grad_of_lambda", np.float64),
        ("grad_of_lambda", np.float32)])])
def test_values_change_between_calls(spelling, dtype):
    """Twelve calls, new values each (rows fixed: one specialization), results kept
    and written into by the caller; against the closed forms."""
    run = _spellings(s2s.grad(F.logistic_mean))[spelling]
    tol = dict(rtol=2e-4, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    kept = []
    for k in range(12):
        w, v, x, y = _data(8, dtype, seed=k)
        w *= 1 + k  # (a larger margin each call: exp(-y x w) far from 1)
        out, tangent = run(w, v, x, y)
        assert out.dtype == tangent.dtype == dtype
        want = logistic_grad(*(a.astype(np.float64) for a in (w, x, y)))
        np.testing.assert_allclose(out, want, **tol)
        np.testing.assert_allclose(tangent, logistic_hvp(
            *(a.astype(np.float64) for a in (w, v, x, y))), **tol)
        kept.append((tangent.copy(), tangent))
        out[...] = 7.0  # (the caller writes into a result: later calls unchanged)
    for copy, held in kept:
        np.testing.assert_array_equal(copy, held)
    if spelling == "zeros":  # (the specialized code: q / t + (q - q), no product by e)
        texts = [e.text for e in JVPS[run.__closure__[0].cell_contents][False]
                 ._by_signature.values() if e.text]
        assert texts and all(re.search(r"\b(\w+) / total\b.*\b\1 - \1\b", t, re.S)
                             for t in texts), texts


@pytest.mark.slow
def test_nan_and_inf_as_the_code_before_the_rule():
    """An inf in the direction, a NaN in the data, a margin whose exp overflows: the
    same elements not finite as the generic code's, the finite ones equal."""
    g, generic = s2s.grad(F.logistic_mean), s2s.grad(F.logistic_mean)
    generic.specialize = False  # (the code as emitted: no pass rewrote it)
    for k in range(10):
        w, v, x, y = _data(6, seed=20 + k)
        if k in (2, 3):
            v[1] = np.inf
        if k in (5, 6):
            x[0, 0] = np.nan
        if k in (8, 9):
            w[:] = 400.0 * np.sign(x[0]) * -y[0]  # (exp(-y x w) overflows in row 0)
        with np.errstate(all="ignore"):
            got = s2s.jvp(g, (w, x, y), (v, np.zeros_like(x), np.zeros_like(y)))
            want = s2s.jvp(generic, (w, x, y), (v, np.zeros_like(x), np.zeros_like(y)))
        for a, b in zip(got, want):
            np.testing.assert_array_equal(np.isfinite(a), np.isfinite(b))
            np.testing.assert_allclose(a[np.isfinite(a)], b[np.isfinite(b)], rtol=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_jax(dtype):
    """The three spellings against ``jax.jvp(jax.grad(f))`` (every pass on): values
    changing at every call, rows 8 then 1 then 0, an inf in the direction, a NaN in
    the data, a margin that overflows, all-zero directions."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    J = support.jax_twin(F)
    jg = jax.grad(J.logistic_mean)
    tol = support.jax_tol(dtype, f64=1e-10, f32=3e-5)
    for spelling, run in _spellings(s2s.grad(F.logistic_mean)).items():
        for k, n in enumerate([8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 1, 0]):
            w, v, x, y = _data(n, dtype, seed=40 + k)
            if k == 3:
                v[2] = np.inf
            if k == 5 and n:
                x[1, 1] = np.nan
            if k == 7 and n:
                w[:] = 400.0 * np.sign(x[0]) * -y[0]
            if k == 9:
                v[:] = 0.0
            with np.errstate(all="ignore"):
                out, tangent = run(w, v, x, y)
                want_out, want = jax.jvp(lambda u: jg(u, x, y), (w,), (v,))
            assert out.dtype == tangent.dtype == dtype, spelling
            np.testing.assert_allclose(out, np.asarray(want_out), **tol, err_msg=spelling)
            np.testing.assert_allclose(tangent, np.asarray(want), **tol, err_msg=spelling)


# ---- the latest family's path (api/families.runner) ------------------------------------


def test_a_lambda_made_again_takes_the_family_path(monkeypatch):
    """After its first calls, ``s2s.jvp(lambda u: g(u, x, y), ...)`` with new data each
    call runs without ``families.family`` or ``run_as`` (counted), values the closed
    forms', and ``s2s.source`` of the latest lambda still shows its code."""
    from s2s.api import families, pushforward

    g = s2s.grad(F.logistic_mean)
    calls = {"family": 0, "run_as": 0}
    for name in calls:
        real = getattr(families, name)

        def counted(*a, _real=real, _name=name):
            calls[_name] += 1
            return _real(*a)
        monkeypatch.setattr(families, name, counted)
    for k in range(10):
        w, v, x, y = _data(8, seed=60 + k)
        lam = lambda u: g(u, x, y)  # noqa: E731
        out, tangent = s2s.jvp(lam, (w,), (v,))
        np.testing.assert_allclose(out, logistic_grad(w, x, y), rtol=1e-10)
        np.testing.assert_allclose(tangent, logistic_hvp(w, v, x, y), rtol=1e-10)
        if k == 5:
            before = dict(calls)
    assert calls == before, calls  # (calls 7 to 10: the family path alone)
    assert pushforward._FAMILY[0] is lam.__code__
    assert "def " in s2s.source(lam, "jvp")


@pytest.mark.slow
def test_the_family_path_misses_where_a_cell_changes_kind_or_the_call_fails():
    """A cell holding another rank, a lambda of the same code with a default, a
    tangent of another shape (located error, the cells restored): the checked path
    decides, and the next calls are right again."""
    g = s2s.grad(F.tanh_rows)

    def hvp(w, v, x):
        return s2s.jvp(lambda u: g(u, x), (w,), (v,))
    rng = np.random.default_rng(3)
    w, v, x = rng.normal(size=3), rng.normal(size=3), rng.normal(size=(5, 3))
    for _ in range(4):
        np.testing.assert_allclose(hvp(w, v, x)[1], _tanh_rows_hvp(w, v, x), rtol=1e-10)
    with pytest.raises(ValueError):
        hvp(w, np.ones(4), x)  # (a tangent of another shape)
    x2 = rng.normal(size=(7, 3))
    np.testing.assert_allclose(hvp(w, v, x2)[1], _tanh_rows_hvp(w, v, x2), rtol=1e-10)
    xs = rng.normal(size=(2, 5, 3))  # (a cell of another rank: a batch of rows)
    for _ in range(3):
        np.testing.assert_allclose(hvp(w, v, xs)[1], _tanh_rows_hvp(w, v, xs.reshape(-1, 3)),
                                   rtol=1e-10)
    np.testing.assert_allclose(hvp(w, v, x)[1], _tanh_rows_hvp(w, v, x), rtol=1e-10)


def _tanh_rows_hvp(w, v, x):
    t = np.tanh(x @ w)
    return x.T @ (2 * (1 - t * t) * (1 - 3 * t * t) * (x @ v))


@pytest.mark.slow
def test_the_family_path_on_threads():
    """Eight threads, each its own data, a new lambda per call: each gets its own
    values (the canonical's cells are swapped under the family's lock)."""
    import threading

    g = s2s.grad(F.logistic_mean)
    w, v, x, y = _data(8, seed=90)
    for _ in range(3):
        s2s.jvp(lambda u: g(u, x, y), (w,), (v,))
    wrong: list = []

    def work(seed):
        for k in range(40):
            w, v, x, y = _data(8, seed=seed * 100 + k % 3)
            got = s2s.jvp(lambda u: g(u, x, y), (w,), (v,))[1]
            if not np.allclose(got, logistic_hvp(w, v, x, y), rtol=1e-10):
                wrong.append((seed, k))
    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong, wrong


def test_a_closure_cell_rebound_or_emptied_between_calls():
    """The hot path reads a closure's cells inline (api/hotcode.py): a cell rebound at
    calls 3 and 10 gives the new value's HVP; one emptied (``del``) is refused, never
    the old value."""
    rng = np.random.default_rng(8)
    x = rng.normal(size=(5, 3))

    def loss(w):
        return np.sum(np.tanh(x @ w) ** 2)

    def rebind(new):
        nonlocal x
        x = new

    def empty():
        nonlocal x
        del x
    g = s2s.grad(loss)
    w, v = rng.normal(size=3), rng.normal(size=3)
    for k in range(12):
        if k in (2, 9):
            rebind(rng.normal(size=(5, 3)))
        np.testing.assert_allclose(s2s.jvp(g, (w,), (v,))[1], _tanh_rows_hvp(w, v, x),
                                   rtol=1e-10)
    empty()
    with pytest.raises(TransformError, match="the name `x` is not defined"):
        s2s.jvp(g, (w,), (v,))
