"""The closure forms of a Hessian-vector product, ``s2s.jvp(lambda w: s2s.grad(f)(w, x,
y), (w,), (v,))`` and ``s2s.jvp(s2s.grad(lambda w: f(w, x, y)), (w,), (v,))``, a new
lambda per call: the latest family found without its key (api/families.py
``_LAST``), the grad of a lambda made again taking its family's shared grad's jvp
(api/pushforward.py), ``np.astype(x, d)`` of an array spelled ``x.astype(d)`` by the
methods pass.  Expected values from closed forms (default tier) and from
``jax.jvp(jax.grad(f))`` on the same source in float64 and float32 (slow)."""

from __future__ import annotations

import ast

import hvp18b_fns as F
import numpy as np
import pytest
import support

from s2s import syntax
from s2s.api import families
from s2s.optimize import aliases, passes, specialize

FORMS = [F.hvp_grad_inside, F.hvp_grad_of_lambda]


@pytest.fixture(autouse=True)
def _cheap_specializing(request, monkeypatch):
    if "slow" not in request.keywords:
        monkeypatch.setattr(specialize, "DISABLED", {"egraph", "zero"})


def grad_closed(w, x, y):
    return x.T @ (-y / (1.0 + np.exp(y * (x @ w)))) / max(x.shape[0], 1)


def hvp_closed(w, v, x, y):
    s = 1.0 / (1.0 + np.exp(-y * (x @ w)))
    return x.T @ (s * (1.0 - s) * (x @ v)) / max(x.shape[0], 1)


def _data(n, d=4, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=d).astype(dtype), rng.normal(size=d).astype(dtype),
            rng.normal(size=(n, d)).astype(dtype), rng.choice([-1.0, 1.0], n).astype(dtype))


def _calls(layouts):
    """Twelve calls: the data's values changing at calls 3 and 10 (and with
    ``layouts``, its rows at 6, the dtype at 8 and back at 9), the same arrays
    otherwise."""
    w, v, x, y = _data(8, seed=0)
    for k in range(12):
        if k in (3, 10):
            _, _, x, y = _data(8, seed=100 + k)
        if k == 6 and layouts:
            _, _, x, y = _data(5, seed=106)
        if k == 8 and layouts:
            w, v, x, y = (a.astype(np.float32) for a in (w, v, x, y))
        if k == 9 and layouts:
            w, v, x, y = (a.astype(np.float64) for a in (w, v, x, y))
        w = w + 0.125 * k
        yield w, v, x, y


@pytest.mark.parametrize("layouts", [False, pytest.param(True, marks=pytest.mark.slow)])
@pytest.mark.parametrize("form", FORMS)
def test_closure_values_rows_and_dtypes_changing(form, layouts):
    for w, v, x, y in _calls(layouts):
        keep = [a.copy() for a in (w, v, x, y)]
        out, tangent = form(w, v, x, y)
        assert out.dtype == tangent.dtype == w.dtype
        tol = dict(rtol=1e-10, atol=1e-13) if w.dtype == np.float64 else dict(
            rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(out, grad_closed(w, x, y), **tol)
        np.testing.assert_allclose(tangent, hvp_closed(w, v, x, y), **tol)
        assert not np.shares_memory(out, tangent)
        out += 100.0  # (the caller's to write into: the next call, the data unchanged)
        tangent *= -3.0
        for a, b in zip((w, v, x, y), keep):
            np.testing.assert_array_equal(a, b)


def test_a_closure_value_written_in_place_between_calls():
    """The data the lambda closes over changed in place (the same objects): each call
    reads the values it has."""
    w, v, x, y = _data(8, seed=3)  # (the layouts of the test above: its code)
    x = x.copy()
    for k in range(5):
        x[0, :] = k  # (same array, new values)
        for form in FORMS:
            out, tangent = form(w, v, x, y)
            np.testing.assert_allclose(tangent, hvp_closed(w, v, x, y), rtol=1e-10,
                                       atol=1e-13)


def test_the_latest_family_is_the_keyed_one():
    """families.family's test without the key gives what the key gives; a cell of
    another rank, a list, another function or defaults take the key."""
    def make(x, y, f=np.sin):
        return lambda w: f(w) * x + y

    a, b = np.ones(3), np.ones(3)
    first = make(a, b)
    assert families.family(first) is None  # (the first of its code runs as itself)
    found = families.family(make(a, b))
    assert found is not None and families._LAST[5] is found
    assert families.family(make(np.zeros(3), 2.0 * b)) is found  # (the test's)
    families._LAST = (None,) * 6
    assert families.family(make(np.zeros(3), 2.0 * b)) is found  # (the key's)
    other = families.family(make(np.ones((2, 3)), b))  # (another rank: another family)
    assert other is not None and other is not found or other is None
    assert families.family(make(a, b)) is found
    assert families.family(make(a, b, np.cos)) is not found  # (another function)
    listed = families.family(make([1.0], b))  # (a list: its fingerprint by the key)
    assert listed is None or families._LAST[5] is not listed

    def with_default(x):
        return lambda w, s=2.0: s * w * x

    kept = with_default(a)  # (the first of its code, kept alive: it runs as itself)
    assert families.family(kept) is None
    g = with_default(a)
    assert families.family(g) is not None  # (a family by its key, never the latest's)
    assert families._LAST[0] is not g.__code__


def _method_text(src, facts):
    module = syntax.parse(src)
    fn = module.body[0]
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in facts:
            node._k = node.id
    passes.methods(fn, lambda node: facts.get(getattr(node, "_k", None)))
    return ast.unparse(fn)


def test_methods_pass_spells_a_cast_of_an_array_as_its_method():
    arr = ((3,), np.dtype(np.float64))
    text = _method_text("def f(a, w):\n    return np.astype(a, np.asarray(w).dtype)\n",
                        {"a": arr, "w": arr})
    assert "return a.astype(w.dtype)" in text
    # (a 0-d value may be a NumPy scalar, np.astype refuses it: left as written)
    text = _method_text("def f(a, w):\n    return np.astype(a, np.asarray(w).dtype)\n",
                        {"a": ((), np.dtype(np.float64)), "w": ((), np.dtype(np.float64))})
    assert "np.astype(a, np.asarray(w).dtype)" in text
    text = _method_text("def f(a):\n    return np.astype(a, d, copy=False)\n", {"a": arr})
    assert "np.astype(a, d, copy=False)" in text
    new = syntax.parse("a.astype(d)", mode="eval").body
    assert aliases.makes_new(new, lambda node: True)
    kept = syntax.parse("a.astype(d, copy=False)", mode="eval").body
    assert not aliases.makes_new(kept, lambda node: True)
    a = np.ones(3)
    assert not np.shares_memory(a.astype(a.dtype), a)  # (NumPy's own promise)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("form", ["hvp_grad_inside", "hvp_grad_of_lambda"])
def test_against_jax(dtype, form):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    J = support.jax_twin(F)
    jg = jax.grad(J.logistic_mean)
    tol = support.jax_tol(dtype, f64=1e-10, f32=3e-5)
    x_fixed = None
    for k, n in enumerate([8, 8, 8, 9, 8, 1, 0, 8, 8, 8, 12, 8]):
        w, v, x, y = _data(n=n, dtype=dtype, seed=k)
        if k in (1, 2, 4, 8, 9, 11) and x_fixed is not None and x_fixed[0].shape[0] == n:
            x, y = x_fixed  # (the same data objects between changes)
        x_fixed = (x, y)
        if k == 7:
            x = x.copy()
            x[2, 1] = np.inf
        if k == 9:
            v = v.copy()
            v[0] = np.nan
        with np.errstate(all="ignore"):
            out, tangent = getattr(F, form)(w, v, x, y)
        want_out, want = jax.jvp(lambda w: jg(w, x, y), (w,), (v,))
        assert out.dtype == tangent.dtype == dtype
        np.testing.assert_allclose(out, np.asarray(want_out), **tol)
        np.testing.assert_allclose(tangent, np.asarray(want), **tol)
