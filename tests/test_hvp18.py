"""jvp of a gradient given tangents that are all zero (the Hessian-vector product
``s2s.jvp(g, (w, x, y), (v, zeros, zeros))``): the code of the jvp in the other
primals alone runs (api/pushforward.py ``_jvp_kept``: its own signature key, the
zero test made at every call, the full code where an output is not finite).
Expected values from closed forms and central differences (default tier) and from
``jax.jvp(jax.grad(f))`` on the same source in float64 and float32 (slow)."""

from __future__ import annotations

import hvp18_fns as F
import numpy as np
import pytest
import support

import s2s
from s2s.api import pushforward
from s2s.api.transformed import JVPS
from s2s.optimize import specialize

G = s2s.grad(F.logistic_mean)


@pytest.fixture(autouse=True)
def _cheap_specializing(request, monkeypatch):
    """The default tier specializes without the e-graph's passes (a second of egglog
    per code saved; what this file tests is which code runs, not those passes); the
    slow tier with every pass."""
    if "slow" not in request.keywords:
        monkeypatch.setattr(specialize, "DISABLED", {"egraph", "zero"})


def grad_closed(w, x, y):
    return x.T @ (-y / (1.0 + np.exp(y * (x @ w)))) / max(x.shape[0], 1)


def hvp_closed(w, v, x, y):
    s = 1.0 / (1.0 + np.exp(-y * (x @ w)))
    return x.T @ (s * (1.0 - s) * (x @ v)) / max(x.shape[0], 1)


def along(grad, args, dirs, h=1e-6):
    """The central difference of ``grad`` at ``args`` along ``dirs``."""
    up = grad(*(a + h * d for a, d in zip(args, dirs)))
    down = grad(*(a - h * d for a, d in zip(args, dirs)))
    return (up - down) / (2 * h)


def tanh_rows_grad(w, x):
    t = np.tanh(x @ w)
    return x.T @ (2 * t * (1 - t * t))


def tanh_rows_hvp(w, v, x):
    t = np.tanh(x @ w)
    return x.T @ (2 * (1 - t * t) * (1 - 3 * t * t) * (x @ v))


def _data(n, d=4, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=d).astype(dtype), rng.normal(size=d).astype(dtype),
            rng.normal(size=(n, d)).astype(dtype), rng.choice([-1.0, 1.0], n).astype(dtype))


def _kept_texts(g):
    """The specialized texts of ``g``'s jvp given only some tangents."""
    t = (JVPS.get(g) or {}).get(False)
    return [e.text for k, e in (t._by_signature.items() if t else ())
            if isinstance(k[0], tuple) and e.text]


def _full(monkeypatch, *call):
    """The jvp with every tangent passed (no zero test)."""
    with monkeypatch.context() as m:
        m.setattr(pushforward, "_nonzero_tangents", lambda p, t: None)
        m.setattr(pushforward, "_LATEST", (None, None, None))  # (nor the generated path)
        return s2s.jvp(*call)


def test_zero_data_tangents_values_change_between_calls():
    """w, v and the data new at every call (1st, 3rd, 10th...), zeros made per call and
    once: the gradient and H v of each call's own arguments; the code that ran is the
    one without the data's tangents (specialized: no x_dot)."""
    g = s2s.grad(F.logistic_mean)
    for k in range(10):
        w, v, x, y = _data(n=8, seed=k)
        zx, zy = (np.zeros_like(x), np.zeros_like(y)) if k % 2 else (0 * x, 0 * y)
        out, tangent = s2s.jvp(g, (w, x, y), (v, zx, zy))
        np.testing.assert_allclose(out, grad_closed(w, x, y), rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(tangent, hvp_closed(w, v, x, y), rtol=1e-10, atol=1e-13)
        assert out.dtype == tangent.dtype == np.float64
    texts = _kept_texts(g)
    assert texts and all("x_dot" not in s and "y_dot" not in s for s in texts), texts


def test_a_zero_tangent_the_caller_writes_into(monkeypatch):
    """The zero test is made at every call: a tangent made once and written into
    between calls (a nonzero entry, a NaN, then -0.0 everywhere) takes the full code
    while it is not all zero; a NaN tangent's result is the full code's, NaN for NaN."""
    w, v, x, y = _data(n=6, seed=3)
    zx, zy = np.zeros_like(x), np.zeros_like(y)
    for k in range(4):
        w = w + 0.1 * k
        out, tangent = s2s.jvp(G, (w, x, y), (v, zx, zy))
        np.testing.assert_allclose(tangent, hvp_closed(w, v, x, y), rtol=1e-10, atol=1e-13)
    zx[1, 2] = 0.5
    zy[4] = -0.25
    out, tangent = s2s.jvp(G, (w, x, y), (v, zx, zy))
    want = along(grad_closed, (w, x, y), (v, zx, zy))
    np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(out, grad_closed(w, x, y), rtol=1e-10)
    zx[:] = 0.0
    zx[0, 0] = np.nan
    with np.errstate(invalid="ignore"):
        got = s2s.jvp(G, (w, x, y), (v, zx, zy))
        full = _full(monkeypatch, G, (w, x, y), (v, zx, zy))
    assert np.isnan(got[1]).all()
    np.testing.assert_array_equal(got[1], full[1])
    zx[:], zy[:] = -0.0, -0.0
    out, tangent = s2s.jvp(G, (w, x, y), (v, zx, zy))
    np.testing.assert_allclose(tangent, hvp_closed(w, v, x, y), rtol=1e-10, atol=1e-13)


def test_which_tangent_is_zero_is_part_of_the_key():
    """Two primals of one shape and dtype: (u, 0) and (0, u) alternate and each runs
    its own code (a key of shapes alone would run the other's)."""
    g = s2s.grad(F.tanh_pair)

    def grad_a(a, b):
        t = np.tanh(a * b)
        return 2 * t * (1 - t * t) * b

    rng = np.random.default_rng(5)
    for k in range(8):
        a, b, u = (rng.normal(size=4) for _ in range(3))
        z = np.zeros(4)
        dirs = (u, z) if k % 2 else (z, u)
        out, tangent = s2s.jvp(g, (a, b), dirs)
        np.testing.assert_allclose(tangent, along(grad_a, (a, b), dirs), rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(out, grad_a(a, b), rtol=1e-12)


@pytest.mark.parametrize("rows, d", [(0, 4), (1, 4), (5, 1), (1, 1)])
def test_zero_size_and_size_one_axes(rows, d):
    g = s2s.grad(F.tanh_rows)
    for k in range(3):
        w, v, x, _ = _data(n=rows, d=d, seed=k)
        out, tangent = s2s.jvp(g, (w, x), (v, np.zeros_like(x)))
        assert out.shape == tangent.shape == (d,)
        np.testing.assert_allclose(out, tanh_rows_grad(w, x), rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(tangent, tanh_rows_hvp(w, v, x), rtol=1e-10, atol=1e-13)


def test_float32_and_results_the_caller_writes_into():
    """float32 in, float32 out, near the float64 closed forms; writing into one call's
    results changes neither the next call's nor the arguments."""
    for k in range(5):
        w, v, x, y = _data(n=8, dtype=np.float32, seed=10 + k)
        zx, zy = np.zeros_like(x), np.zeros_like(y)
        kept = [a.copy() for a in (w, v, x, y, zx, zy)]
        out, tangent = s2s.jvp(G, (w, x, y), (v, zx, zy))
        assert out.dtype == tangent.dtype == np.float32
        w64, v64, x64, y64 = (a.astype(np.float64) for a in (w, v, x, y))
        np.testing.assert_allclose(out, grad_closed(w64, x64, y64), rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(tangent, hvp_closed(w64, v64, x64, y64), rtol=2e-5, atol=1e-6)
        out[:] = 99.0
        tangent[:] = 99.0
        for a, b in zip((w, v, x, y, zx, zy), kept):
            np.testing.assert_array_equal(a, b)


def test_an_output_that_is_not_finite_is_the_full_codes(monkeypatch):
    """exp overflows: the code without the zero tangent's terms gives NaN where the
    full code's ``0 * inf`` terms give NaN elsewhere too; jvp returns the full code's."""
    g = s2s.grad(F.soft_ratio)
    rng = np.random.default_rng(2)
    for k in range(6):
        w, v, x = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
        if k == 4:  # (by now jvp's generated path: its own finite test)
            hot = JVPS.get(g)[False].last_hot
            assert "CNZ(t1)" in hot.__s2s_source__, hot.__s2s_source__
        if k >= 4:
            w[0], x[0] = 800.0, 1.0
        with np.errstate(all="ignore"):
            got = s2s.jvp(g, (w, x), (v, np.zeros(3)))
        if k < 4:
            s = 1.0 / (1.0 + np.exp(-x * w))
            np.testing.assert_allclose(got[0], x * s * (1 - s), rtol=1e-12)
            np.testing.assert_allclose(got[1], x * x * s * (1 - s) * (1 - 2 * s) * v, rtol=1e-10)
            continue
        with np.errstate(all="ignore"):
            full = _full(monkeypatch, g, (w, x), (v, np.zeros(3)))
        assert not np.isfinite(got[1]).all()
        np.testing.assert_array_equal(got[0], full[0])
        np.testing.assert_array_equal(got[1], full[1])


def test_a_zero_tangent_of_the_wrong_shape_or_dtype_is_refused_as_before():
    w, v, x, y = _data(n=6, seed=1)
    for _ in range(3):
        s2s.jvp(G, (w, x, y), (v, np.zeros_like(x), np.zeros_like(y)))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        s2s.jvp(G, (w, x, y), (v, np.zeros((6, 3)), np.zeros_like(y)))
    with pytest.raises(TypeError, match="dtypes must be equal"):
        s2s.jvp(G, (w, x, y), (v, np.zeros(x.shape, np.float32), np.zeros_like(y)))


def test_every_tangent_zero():
    w, _, x, y = _data(n=6, seed=4)
    for _ in range(3):
        out, tangent = s2s.jvp(G, (w, x, y), (np.zeros(4), np.zeros_like(x), np.zeros_like(y)))
        np.testing.assert_allclose(out, grad_closed(w, x, y), rtol=1e-10)
        np.testing.assert_array_equal(tangent, np.zeros(4))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_jax(dtype):
    """Against ``jax.jvp(jax.grad(f))`` on the same source, the same (explicit, some
    zero) tangents: twelve calls with rows and values changing, size-1 and 0-row data,
    NaN and inf in the data and in the tangents, which tangent is zero changing."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    J = support.jax_twin(F)
    tol = support.jax_tol(dtype, f64=1e-10, f32=3e-5)
    cases = [(F.logistic_mean, J.logistic_mean), (F.tanh_rows, J.tanh_rows)]
    for f, jf in cases:
        g, jg = s2s.grad(f), jax.grad(jf)
        for k, n in enumerate([8, 8, 9, 1, 8, 0, 8, 12, 8, 8, 1, 8]):
            w, v, x, y = _data(n=n, dtype=dtype, seed=k)
            args = (w, x, y) if f is F.logistic_mean else (w, x)
            dirs = [v] + [np.zeros_like(a) for a in args[1:]]
            if k == 4:
                dirs[1][0, 0] = 0.5
            if k == 6:
                dirs[0] = np.zeros_like(v)
                dirs[1] = np.ones_like(x)
            if k == 7:
                x[2, 1] = np.inf
            if k == 8:
                dirs[1][1, 1] = np.nan
            if k == 9:
                v[1] = np.inf
            with np.errstate(all="ignore"):
                out, tangent = s2s.jvp(g, args, tuple(dirs))
            want_out, want = jax.jvp(jg, args, tuple(dirs))
            assert out.dtype == tangent.dtype == dtype
            np.testing.assert_allclose(out, np.asarray(want_out), **tol)
            np.testing.assert_allclose(tangent, np.asarray(want), **tol)
    g, jg = s2s.grad(F.soft_ratio), jax.grad(J.soft_ratio)
    rng = np.random.default_rng(7)
    for k in range(6):
        w, v, x = (rng.normal(size=3).astype(dtype) for _ in range(3))
        if k >= 3:
            w[0], x[0] = 800.0, 1.0
        with np.errstate(all="ignore"):
            got = s2s.jvp(g, (w, x), (v, np.zeros_like(x)))
        want = jax.jvp(jg, (w, x), (v, np.zeros_like(x)))
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, np.asarray(b), **tol)


def test_module_state_changed_between_calls(monkeypatch):
    """A module constant the loss reads, rebound between calls (after the code given
    only w's tangent specialized and took jvp's generated path): each call's own."""
    g = s2s.grad(F.scaled_rows)
    w, v, x, _ = _data(n=5, seed=8)
    for k in range(8):
        monkeypatch.setattr(F, "SCALE", 1.0 + (k // 3))
        out, tangent = s2s.jvp(g, (w, x), (v, np.zeros_like(x)))
        np.testing.assert_allclose(out, F.SCALE * tanh_rows_grad(w, x), rtol=1e-12)
        np.testing.assert_allclose(tangent, F.SCALE * tanh_rows_hvp(w, v, x), rtol=1e-10)


class _Scaled:
    def __init__(self):
        self.scale = np.array([1.0, 2.0, 3.0])

    def f(self, a, b):
        return np.sin(a * self.scale) * b


@pytest.mark.slow
def test_a_bound_method_and_a_lambda_made_again():
    """A bound method (its object's attributes a primal before the user's: the kept
    positions shift) with its attribute changing, and a lambda made at every call
    over the data (jvp's families): each call's own values."""
    m = _Scaled()
    rng = np.random.default_rng(9)
    for k in range(5):
        a, b, u = (rng.normal(size=3) for _ in range(3))
        _, t = s2s.jvp(m.f, (a, b), (u, np.zeros(3)))
        np.testing.assert_allclose(t, np.cos(a * m.scale) * m.scale * u * b, rtol=1e-12)
        _, t = s2s.jvp(m.f, (a, b), (np.zeros(3), u))
        np.testing.assert_allclose(t, np.sin(a * m.scale) * u, rtol=1e-12)
        m.scale = m.scale + 1
    for k in range(6):
        w, v, x, y = _data(n=6, seed=20 + k)
        out, tangent = s2s.jvp(lambda w, x: G(w, x, y), (w, x), (v, np.zeros_like(x)))
        np.testing.assert_allclose(out, grad_closed(w, x, y), rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(tangent, hvp_closed(w, v, x, y), rtol=1e-10, atol=1e-13)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_zero_tangent_adds_nothing_as_in_jaxs_closure_form(dtype):
    """Where a zero tangent meets an overflow the outputs do not show (exp(-exp(x)) at
    x = 1000: its x-derivative -inf * 0), the full code's 0 * NaN is NaN and JAX's jvp
    given the explicit zeros is NaN there; s2s's jvp leaves the zero tangent out and
    gives the derivative along (v, 0) that JAX's jvp of the closure over x gives (0,
    the gradient not depending on w), at every call (the first, specialized, hot)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    J = support.jax_twin(F)
    g = s2s.grad(F.hidden_overflow)
    x = np.array([1000.0, 0.0, 1.0], dtype)
    for k in range(5):
        w, v = np.full(3, 1.0 + k, dtype), np.full(3, 0.5 - k, dtype)
        with np.errstate(all="ignore"):
            out, tangent = s2s.jvp(g, (w, x), (v, np.zeros(3, dtype)))
        want_out, want = jax.jvp(lambda w: jax.grad(J.hidden_overflow)(w, x), (w,), (v,))
        tol = support.jax_tol(dtype, f64=1e-12, f32=1e-6)
        np.testing.assert_allclose(out, np.asarray(want_out), **tol)
        np.testing.assert_array_equal(tangent, np.asarray(want))
        _, explicit = jax.jvp(jax.grad(J.hidden_overflow), (w, x), (v, np.zeros(3, dtype)))
        assert np.isnan(explicit[0])  # (JAX's explicit zeros: the difference, pinned)
