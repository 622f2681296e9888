"""``s2s.vjp``'s pullback and ``s2s.linearize``'s linear function compute at the point
of the ``vjp()`` / ``linearize()`` call, as JAX's do (s2s/api/pullbacks.py): a closure
variable rebound after it (a comprehension's lambdas), the primal written into in
place, a module global or an object's attribute rebound, the primal output and the
pullback's own result written into, the pullback called twice and after a later vjp
of the same function, and vjps of a new lambda per step whose pullbacks (steps 1, 3,
10) are called after the loop.  Expected values: NumPy closed forms (default tier) and
the same source under ``jax.vjp`` / ``jax.linearize`` (tests/support.py ``jax_twin``)
in float64 and float32 (slow)."""

from __future__ import annotations

import numpy as np
import pytest
import vjp_frozen_fns as F

import s2s


def _data(dtype=np.float64):
    rng = np.random.default_rng(3)
    w = rng.normal(size=3).astype(dtype)
    xs = [rng.normal(size=(n, 3)).astype(dtype) for n in (4, 4, 2, 4, 4, 4, 4, 4, 4, 1)]
    return w, xs, rng.normal(size=4).astype(dtype)


def _trio(xs):  # (three batches of 4 rows, each its own values)
    return [xs[0], xs[1], xs[3]]


def sin_vjp(w, x, ct):  # (the closed form of np.sin(x @ w)'s pullback)
    return x.T @ (np.cos(x @ w) * ct)


def test_comprehension_lambdas_keep_their_x():
    w, xs, ct = _data()
    got = F.comprehension(s2s.vjp, w, _trio(xs), ct)
    for g, x in zip(got, _trio(xs)):
        np.testing.assert_allclose(g, sin_vjp(w, x, ct), rtol=1e-12)


def test_primal_written_after_vjp():
    w, xs, ct = _data()
    first, second, y = F.primal_written(s2s.vjp, w, xs[0], ct)
    np.testing.assert_allclose(first, sin_vjp(w, xs[0], ct), rtol=1e-12)
    np.testing.assert_allclose(second, first, rtol=0)
    np.testing.assert_allclose(y, np.sin(xs[0] @ w), rtol=1e-12)


def test_module_global_rebound_after_vjp():
    w, _, _ = _data()
    g, y = F.global_rebound(s2s.vjp, w, 1.5)
    np.testing.assert_allclose(g, 1.5 * 2.0 * np.cos(w), rtol=1e-12)
    np.testing.assert_allclose(y, 2.0 * np.sum(np.sin(w)), rtol=1e-12)
    g, y, aux = F.aux_global(s2s.vjp, w, 1.0)
    np.testing.assert_allclose(g, 3.0 * np.cos(w), rtol=1e-12)
    assert aux == 3.0


def test_module_objects_attributes_and_items_rebound_after_vjp():
    w, _, _ = _data()
    g, y = F.objects_rebound(s2s.vjp, w, 1.5)
    np.testing.assert_allclose(g, 1.5 * 12.0 * np.cos(w), rtol=1e-12)
    np.testing.assert_allclose(y, 12.0 * np.sum(np.sin(w)), rtol=1e-12)
    g, _ = F.objects_rebound(s2s.vjp, w, 1.0)  # (the code read them again: restored)
    np.testing.assert_allclose(g, 12.0 * np.cos(w), rtol=1e-12)
    g, _ = F.module_attribute_rebound(s2s.vjp, w, 1.0)
    np.testing.assert_allclose(g, 2.0 * np.cos(w), rtol=1e-12)


def test_object_attribute_rebound_after_vjp():
    w, xs, ct = _data()
    g, y = F.method_rebound(s2s.vjp, w, xs[0], ct)
    np.testing.assert_allclose(g, 2.0 * sin_vjp(w, xs[0], ct), rtol=1e-12)


def test_twice_written_into_and_after_a_later_vjp():
    w, xs, ct = _data()
    keep, again, second, first_late, y2, doubled = F.twice_and_later(
        s2s.vjp, w, xs[0], xs[1], ct)
    np.testing.assert_allclose(keep, sin_vjp(w, xs[0], ct), rtol=1e-12)
    np.testing.assert_allclose(again, keep, rtol=0)
    np.testing.assert_allclose(first_late, keep, rtol=0)
    np.testing.assert_allclose(second, sin_vjp(w, xs[1], ct), rtol=1e-12)
    np.testing.assert_allclose(doubled, sin_vjp(w, xs[0], 2 * ct), rtol=1e-12)
    np.testing.assert_allclose(y2, np.sin(xs[1] @ w), rtol=1e-12)


def test_steps_pullbacks_called_after_the_loop():
    w0, xs, ct = _data()
    got = F.steps(s2s.vjp, w0, xs, ct)
    w, want = w0, []
    for i, x in enumerate(xs):  # (the loop again, by the closed form)
        g = sin_vjp(w, x, ct[: x.shape[0]])
        if i in (0, 2, 9):
            want.append(g)
        w = w - 0.1 * g
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-10)


def test_linearize_closure_rebound_after_it():
    w, xs, _ = _data()
    v = np.array([0.5, -1.0, 2.0])
    for f, x in zip(F.lin_closure(s2s.linearize, w, _trio(xs), v), _trio(xs)):
        np.testing.assert_allclose(f, np.cos(x @ w) * (x @ v), rtol=1e-12)


def test_linearize_primal_written_after_it():
    w, xs, _ = _data()
    v = np.array([0.5, -1.0, 2.0])
    f, _ = F.lin_primal(s2s.linearize, w, xs[0], v)
    np.testing.assert_allclose(f, np.cos(xs[0] @ w) * (xs[0] @ v), rtol=1e-12)


def test_linearize_object_attribute_rebound_after_it():
    w, xs, _ = _data()
    v = np.array([0.5, -1.0, 2.0])
    f, _ = F.lin_method(s2s.linearize, w, xs[0], v)
    np.testing.assert_allclose(f, 2.0 * np.cos(xs[0] @ w) * (xs[0] @ v), rtol=1e-12)


def test_vjp_of_grad_and_of_jit_rebound_after_it():
    w, xs, ct = _data()
    v = np.array([1.0, 0.5, -1.0])
    x = xs[0]
    hess = -x.T @ (np.sin(x @ w)[:, None] * x)  # (of sum(sin(x @ w)): symmetric)
    closure, scaled, jitted = F.inner_transforms(s2s.vjp, s2s.grad, s2s.jit, w, x, xs[1], v)
    np.testing.assert_allclose(closure, hess @ v, rtol=1e-12)
    np.testing.assert_allclose(scaled, 2.0 * hess @ v, rtol=1e-12)
    np.testing.assert_allclose(jitted, sin_vjp(w, x, np.ones(4)), rtol=1e-12)


@pytest.mark.parametrize("backend", [None, pytest.param("jax", marks=pytest.mark.slow)])
def test_jit_of_a_function_rebinding_between_vjp_and_pullback(backend):
    if backend == "jax":
        pytest.importorskip("jax")
    w, xs, _ = _data()
    got = s2s.jit(F.rebound_in_body, backend=backend)(w, xs[0], xs[1])
    np.testing.assert_allclose(got, sin_vjp(w, xs[0], np.ones(4)), rtol=1e-12)


def test_linearize_after_a_module_global_rebound():
    """As JAX's linearized program: the number of the linearize() point (it was
    refused; api/linear.py)."""
    w, _, _ = _data()
    old = F.SCALE
    try:
        _, f = s2s.linearize(F.scaled, w)
        np.testing.assert_allclose(f(np.ones(3)), 2.0 * np.sum(np.cos(w)), rtol=1e-12)
        F.SCALE = 5.0
        np.testing.assert_allclose(f(np.ones(3)), 2.0 * np.sum(np.cos(w)), rtol=1e-12)
        F.SCALE = old
        np.testing.assert_allclose(f(np.ones(3)), 2.0 * np.sum(np.cos(w)), rtol=1e-12)
    finally:
        F.SCALE = old


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_jax(dtype):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from support import jax_twin

    J = jax_twin(F)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    w, xs, ct = _data(dtype)
    v = np.array([0.5, -1.0, 2.0], dtype)

    def same(got, want):
        assert len(got) == len(want)
        for g, e in zip(got, want):
            e = np.asarray(e)
            assert np.asarray(g).dtype == e.dtype, (np.asarray(g).dtype, e.dtype)
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol)

    same(F.comprehension(s2s.vjp, w, _trio(xs), ct), J.comprehension(jax.vjp, w, _trio(xs), ct))
    same(F.primal_written(s2s.vjp, w, xs[0], ct), J.primal_written(jax.vjp, w, xs[0], ct))
    one = dtype(1.5)
    same(F.global_rebound(s2s.vjp, w, one), J.global_rebound(jax.vjp, w, one))
    same(F.aux_global(s2s.vjp, w, dtype(1))[:2], J.aux_global(jax.vjp, w, dtype(1))[:2])
    same(F.objects_rebound(s2s.vjp, w, one), J.objects_rebound(jax.vjp, w, one))
    same(F.module_attribute_rebound(s2s.vjp, w, one),
         J.module_attribute_rebound(jax.vjp, w, one))
    same(F.method_rebound(s2s.vjp, w, xs[0], ct), J.method_rebound(jax.vjp, w, xs[0], ct))
    same(F.twice_and_later(s2s.vjp, w, xs[0], xs[1], ct),
         J.twice_and_later(jax.vjp, w, xs[0], xs[1], ct))
    same(F.steps(s2s.vjp, w, xs, ct), J.steps(jax.vjp, w, xs, ct))
    same(F.inner_transforms(s2s.vjp, s2s.grad, s2s.jit, w, xs[0], xs[1], v),
         J.inner_transforms(jax.vjp, jax.grad, jax.jit, w, xs[0], xs[1], v))
    same(F.lin_closure(s2s.linearize, w, _trio(xs), v), J.lin_closure(jax.linearize, w, _trio(xs), v))
    same(F.lin_primal(s2s.linearize, w, xs[0], v), J.lin_primal(jax.linearize, w, xs[0], v))
    same(F.lin_method(s2s.linearize, w, xs[0], v), J.lin_method(jax.linearize, w, xs[0], v))


def test_linearize_after_an_attribute_or_item_changed():
    w, _, _ = _data()
    v = np.ones(3)
    want = 12.0 * np.sum(np.cos(w))
    _, f = s2s.linearize(F.read_objects, w)
    saved = F.CFG.s
    try:
        np.testing.assert_allclose(f(v), want, rtol=1e-12)
        F.CFG.s = 5.0
        np.testing.assert_allclose(f(v), want, rtol=1e-12)
        F.CFG.s = saved
        F.TABLE["a"] = 2.5
        np.testing.assert_allclose(f(v), want, rtol=1e-12)
    finally:
        F.CFG.s, F.TABLE["a"] = saved, 2.0
    np.testing.assert_allclose(f(v), want, rtol=1e-12)


@pytest.mark.slow
def test_pullbacks_of_one_code_taken_at_different_points_on_threads():
    """Each pullback sets the code's free names to its own objects: on eight threads
    at once, each still computes with its own (api/pullbacks.py ``_lock``; without
    it, a few calls in 1,600 read another's ``x`` here)."""
    import sys
    import threading

    rng = np.random.default_rng(0)
    w = rng.normal(size=30)
    xs = [rng.normal(size=(200, 30)) for _ in range(8)]
    pbs = [s2s.vjp(lambda w: np.sin(x @ w), w)[1] for x in xs]  # (one cell `x`)
    ct = np.ones(200)
    bad = []

    def run(i):
        want = sin_vjp(w, xs[i], ct)
        for _ in range(200):
            if not np.allclose(pbs[i](ct)[0], want, rtol=1e-12):
                bad.append(i)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not bad
