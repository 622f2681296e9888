"""``s2s.grad`` of a lambda made again at each call (``s2s.grad(lambda w: loss(w, x,
y))(w)`` in a training loop) runs one transform shared by the lambdas of one code,
closure fingerprints and defaults (s2s/api/family_grads.py), reading each lambda's
closure values at its call.  Each test changes what the shared code must not assume
between calls (closed-over arrays' values, shapes and dtypes, Python numbers and
strings, defaults, module globals) and checks every call, the 1st, 3rd and 10th
among them.  Expected values: NumPy closed forms (default tier) and ``jax.grad`` of
the same source (tests/support.py ``jax_twin``) in float64 and float32 (slow)."""

from __future__ import annotations

import threading

import family_grads_fns as F
import numpy as np
import pytest

import s2s
from s2s.api import family_grads, signatures
from s2s.api.transformed import Transformed


def logistic_grad(w, x, y, mean=True):
    g = x.T @ (-y / (1.0 + np.exp(y * (x @ w))))
    return g / max(x.shape[0], 1) if mean else g


def _data(k, n=8, d=4, dtype=np.float64):
    rng = np.random.default_rng(k)
    return (rng.normal(size=d), rng.normal(size=(n, d)).astype(dtype),
            rng.choice([-1.0, 1.0], n).astype(dtype))


# calls 1..10: new data at each; the 3rd and 10th change the batch's rows, the 10th
# its dtype too (the specialized code of 8 rows runs at the 5th to 7th and 9th)
_ROWS = [8, 8, 5, 8, 8, 8, 8, 1, 8, 0]


@pytest.mark.every_case
@pytest.mark.parametrize("optimize", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_closure_values_shapes_dtypes(optimize, monkeypatch):
    monkeypatch.setattr(signatures, "OPTIMIZE", optimize)  # (specializing: slow tier)
    for k, n in enumerate(_ROWS):
        w, x, y = _data(k, n, dtype=np.float32 if k == 9 else np.float64)
        got = F.closure_sum_step(s2s.grad, w, x, y)
        tol = 1e-5 if k == 9 else 1e-12
        np.testing.assert_allclose(got, logistic_grad(w, x, y, mean=False), rtol=tol, atol=tol)
        assert got.dtype == np.float64 and got.shape == w.shape
    # (the family's transform ran: from the third lambda on, a grad is a member of it)
    made = [F.make(s2s.grad, x, y) for _ in range(3)]
    assert [type(m) for m in made[1:]] == [family_grads.Member] * 2


@pytest.mark.slow
def test_closure_mean_rows_alternating():
    for k, n in enumerate([8, 8, 5, 8, 8, 1, 8, 3, 8, 2] * 2):
        w, x, y = _data(k, n, dtype=np.float32 if k == 9 else np.float64)
        tol = 1e-5 if k == 9 else 1e-12
        got = F.closure_step(s2s.grad, w, x, y)
        np.testing.assert_allclose(got, logistic_grad(w, x, y), rtol=tol, atol=tol)


def test_numbers_strings_defaults(monkeypatch):
    monkeypatch.setattr(signatures, "OPTIMIZE", False)  # (the emitted code: cheap)
    w = np.array([0.3, -1.2, 2.0])
    x = np.array([1.5, -0.5, 0.25])
    # (a default's value is a constant of the code: each one its own transform)
    for k, (c, mode) in enumerate([(1.0, "l2"), (1.0, "l2"), (2.5, "sin")] + [(2.5, "l2")] * 6
                                  + [(-4, "sin")]):
        want = (2 * w if mode == "l2" else np.cos(w)) * c
        np.testing.assert_allclose(F.number_step(s2s.grad, w, c, mode), want, rtol=1e-13)
        np.testing.assert_allclose(F.default_step(s2s.grad, w, x, c),
                                   np.cos(w * c) * x * c, rtol=1e-13)


def test_module_globals_rebound(monkeypatch):
    monkeypatch.setattr(signatures, "OPTIMIZE", False)
    w = np.array([0.3, -1.2, 2.0])
    x = np.array([1.5, -0.5, 0.25])
    try:
        for k in range(10):
            if k == 2:
                F.SCALE = 3.0
            if k == 9:
                F.SCALE, F.ACT = -0.5, np.sin
            d = np.cos(w * x) if F.ACT is np.sin else 1 - np.tanh(w * x) ** 2
            np.testing.assert_allclose(F.global_step(s2s.grad, w, x), F.SCALE * d * x,
                                       rtol=1e-13)
    finally:
        F.SCALE, F.ACT = 1.0, np.tanh


def test_vjp_of_lambdas_made_again(monkeypatch):
    """s2s.vjp of a new lambda per batch (rows changing at the 3rd and 10th call), and
    pullbacks called after later lambdas' vjps (each reads its own batch)."""
    monkeypatch.setattr(signatures, "OPTIMIZE", False)
    w = np.array([0.3, -1.2, 2.0, 0.5])
    xs = [np.random.default_rng(k).normal(size=(n, 4)) for k, n in enumerate(_ROWS)]
    for k, x in enumerate(xs):
        y = np.linspace(-1.0, 1.0, x.shape[0])
        out, (g,) = F.vjp_step(s2s.vjp, w, x, y)
        np.testing.assert_allclose(out, np.tanh(x @ w) * y, rtol=1e-13)
        np.testing.assert_allclose(g, x.T @ ((1 - np.tanh(x @ w) ** 2) * y * y * 2), rtol=1e-12,
                                   atol=1e-15)
    got = F.vjp_pullbacks(s2s.vjp, w, xs)
    for g, x in zip(got, xs[::-1]):
        np.testing.assert_allclose(g, x.T @ np.cos(x @ w), rtol=1e-12, atol=1e-15)


@pytest.mark.slow
def test_two_lambdas_on_one_line_stay_apart():
    w = np.array([0.3, -1.2, 2.0])
    for k in range(10):
        x = np.full(3, k + 1.0)
        gf, gg = F.two_on_a_line(s2s.grad, w, x)
        np.testing.assert_allclose(gf, np.cos(w) * x, rtol=1e-13)
        np.testing.assert_allclose(gg, -np.sin(w) * x, rtol=1e-13)


@pytest.mark.slow
def test_value_aux_argnums_keyword():
    for k in range(10):
        w, x, y = _data(k, n=6)
        b = np.linspace(-1, 1, 6) * k
        value, g = F.value_step(s2s.value_and_grad, w, x, y)
        assert np.ndim(value) == 0
        np.testing.assert_allclose(value, np.mean(np.log1p(np.exp(-y * (x @ w)))), rtol=1e-13)
        np.testing.assert_allclose(g, logistic_grad(w, x, y), rtol=1e-12)
        g, aux = F.aux_step(s2s.grad, w, x[0])
        np.testing.assert_allclose(g, np.cos(w) * x[0], rtol=1e-13)
        np.testing.assert_allclose(aux, np.sum(x[0]), rtol=1e-13)
        t = 1 - np.tanh(x @ w + b) ** 2
        gw, gb = F.two_args_step(s2s.grad, w, b, x)
        np.testing.assert_allclose(gw, x.T @ t, rtol=1e-12)
        np.testing.assert_allclose(gb, t, rtol=1e-12)
        np.testing.assert_allclose(F.keyword_step(s2s.grad, w, b, x), x.T @ t, rtol=1e-12)


@pytest.mark.slow
def test_results_written_into_and_cells_kept():
    """The caller writing into a result, then the next lambda's call; the lambda's own
    closure cells and the caller's arrays are left as they were."""
    for k in range(10):
        w, x, y = _data(k, n=6)
        x0, w0 = x.copy(), w.copy()
        lam = lambda w: F.logistic(w, x, y)  # noqa: E731
        g = s2s.grad(lam)(w)
        np.testing.assert_allclose(g, logistic_grad(w, x, y), rtol=1e-12)
        g[:] = 1e9
        assert lam.__closure__[0].cell_contents is x
        np.testing.assert_array_equal(x, x0)
        np.testing.assert_array_equal(w, w0)


@pytest.mark.slow
def test_other_uses_make_its_own_transform():
    """What is not a call (.source, jit, vmap, a transform of it) sees a Transformed of
    the lambda itself, as before; the value of each against the closed form."""
    made = [F.make(s2s.grad, *_data(k)[1:]) for k in range(4)]
    assert type(made[3]) is family_grads.Member
    w, x, y = _data(3)
    assert repr(made[3]) == "<s2s grad of make.<locals>.<lambda>>"
    assert made[3].__name__ == "lambda_grad" and "make.<locals>" in made[3].__doc__
    assert type(made[3]) is family_grads.Member  # (none of those made it its own)
    assert "def " in made[3].source and type(made[3]) is Transformed
    np.testing.assert_allclose(made[3](w), logistic_grad(w, x, y), rtol=1e-12)
    w, x, y = _data(2)
    np.testing.assert_allclose(s2s.jit(made[2])(w), logistic_grad(w, x, y), rtol=1e-12)
    ws = np.stack([w, 2 * w])
    np.testing.assert_allclose(s2s.vmap(made[1])(ws)[1], logistic_grad(2 * w, *_data(1)[1:]),
                               rtol=1e-12)
    member = F.make(s2s.grad, x, y)
    out = s2s.eval_shape(member, w)
    assert out.shape == w.shape and out.dtype == w.dtype


@pytest.mark.slow
def test_threads_of_one_family():
    """Two threads calling lambdas of one code over their own data at once."""
    errors: list = []

    def run(seed):
        try:
            for k in range(15):
                w, x, y = _data(seed * 100 + k, n=4 + seed)
                np.testing.assert_allclose(F.closure_step(s2s.grad, w, x, y),
                                           logistic_grad(w, x, y), rtol=1e-12)
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(s,)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# ---- against JAX ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_jax(dtype):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from support import jax_twin

    J = jax_twin(F)
    tol = dict(rtol=1e-11, atol=1e-13) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-5)

    def same(got, want):
        for g, v in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert np.asarray(g).dtype == np.asarray(v).dtype
            np.testing.assert_allclose(g, np.asarray(v), **tol)

    try:
        for k, n in enumerate([8, 8, 5, 8, 8, 1, 8, 0, 8, 3]):
            rng = np.random.default_rng(k)
            w = rng.normal(size=4).astype(dtype)
            xd = np.float32 if k == 9 else dtype  # (the 10th: the closure's dtype changes)
            x = rng.normal(size=(n, 4)).astype(xd)
            y = rng.choice([-1.0, 1.0], n).astype(xd)
            b = rng.normal(size=n).astype(dtype)
            c, mode = [(1.0, "l2"), (2.5, "sin"), (3, "l2"), (-1.0, "sin")][k % 4]
            if k == 2:
                F.SCALE = J.SCALE = 3.0
            if k == 9:
                F.SCALE = J.SCALE = -0.5
                F.ACT, J.ACT = np.sin, J.np.sin
            same(F.closure_sum_step(s2s.grad, w, x, y), J.closure_sum_step(jax.grad, w, x, y))
            if n:
                same(F.closure_step(s2s.grad, w, x, y), J.closure_step(jax.grad, w, x, y))
                same(F.value_step(s2s.value_and_grad, w, x, y),
                     J.value_step(jax.value_and_grad, w, x, y))
                same(F.two_args_step(s2s.grad, w, b, x), J.two_args_step(jax.grad, w, b, x))
                same(F.keyword_step(s2s.grad, w, b, x), J.keyword_step(jax.grad, w, b, x))
            same(F.number_step(s2s.grad, w, c, mode), J.number_step(jax.grad, w, c, mode))
            same(F.default_step(s2s.grad, w, w[::-1], c), J.default_step(jax.grad, w, w[::-1], c))
            same(F.global_step(s2s.grad, w, w[::-1]), J.global_step(jax.grad, w, w[::-1]))
            same(F.two_on_a_line(s2s.grad, w, w + 1), J.two_on_a_line(jax.grad, w, w + 1))
            same(F.aux_step(s2s.grad, w, w * k), J.aux_step(jax.grad, w, w * k))
            same(F.vjp_step(s2s.vjp, w, x, y), J.vjp_step(jax.vjp, w, x, y))
            xs = [x, x * 2, x[:1], np.cos(x)]
            same(F.vjp_pullbacks(s2s.vjp, w, xs), J.vjp_pullbacks(jax.vjp, w, xs))
            params = [rng.normal(size=s).astype(dtype) for s in ((4, 5), (5,), (5, 3), (3,))]
            labels = np.eye(3, dtype=xd)[rng.integers(0, 3, n)]
            if n:  # (a list of parameters; the batch's rows and dtype as above)
                same(F.mlp_step(s2s.grad, params, x, labels),
                     J.mlp_step(jax.grad, params, x, labels))
    finally:
        F.SCALE, F.ACT = 1.0, np.tanh
