"""State a pullback or a linear function records, and what other calls share with it
(s2s/api/pullbacks.py): a pullback's objects never set into emitted code another
transform runs (a grad on another thread), ``linearize``'s module objects, the JAX
backend's pullback fixed at ``vjp()``.  Expected values: closed forms (default tier),
the same source under JAX's transforms, float64 and float32 (slow)."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import threading
from pathlib import Path

import numpy as np
import pullback_state_fns as F
import pytest

import s2s


def _twin():
    """This module's source with ``jax.numpy`` and ``jax``'s transforms."""
    import importlib.util

    path = Path(F.__file__)
    text = re.sub(r"^import numpy as np$", "import jax.numpy as np", path.read_text(),
                  flags=re.M).replace("import s2s as T", "import jax as T")
    spec = importlib.util.spec_from_loader("pullback_state_fns_jax", loader=None)
    twin = importlib.util.module_from_spec(spec)
    twin.__file__ = str(path)
    exec(compile(text, str(path), "exec"), twin.__dict__)
    return twin


class _During(io.StringIO):
    """stdout whose first write (the kept ``print`` in ``F.inner``) runs ``call``: a
    call of the other thread's at that point of this one's, deterministically."""

    def __init__(self, call):
        super().__init__()
        self.call, self.got = call, []

    def write(self, text):
        if self.call is not None:
            call, self.call = self.call, None
            self.got.append(call())
        return len(text)


def _w(dtype=np.float64):
    return np.array([0.3, 0.7, -1.2], dtype)


def _outer_grad(w, scale):  # (d/dw of sum((scale cos w)^2))
    return -2 * scale**2 * np.cos(w) * np.sin(w)


def _other_grad(w, scale):  # (d/dw of sum(3 scale cos w))
    return -3 * scale * np.sin(w)


def test_grad_sharing_a_callee_while_a_pullback_runs():
    """A grad of ``other`` calls the emitted grad of ``inner`` that the pullback of
    ``outer`` (taken at SCALE 2) calls too: the pullback run in the middle of the grad's
    call (where a thread switch can put it) set SCALE 2 into the shared code's
    namespace, and the grad read it (SCALE is 5 now)."""
    w = _w()
    old = F.SCALE
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            F.SCALE = 2.0
            _, pb = s2s.vjp(F.outer, w)
            F.SCALE = 5.0
            g = s2s.grad(F.other)
            g(w)
            hook = _During(lambda: pb(1.0)[0])
        with contextlib.redirect_stdout(hook):
            got = g(w)
        np.testing.assert_allclose(got, _other_grad(w, 5.0), rtol=1e-12)
        np.testing.assert_allclose(hook.got[0], _outer_grad(w, 2.0), rtol=1e-12)
        hook = _During(lambda: g(w))  # (the other way: the grad in the pullback's call)
        with contextlib.redirect_stdout(hook):
            got = pb(1.0)[0]
        np.testing.assert_allclose(got, _outer_grad(w, 2.0), rtol=1e-12)
        np.testing.assert_allclose(hook.got[0], _other_grad(w, 5.0), rtol=1e-12)
    finally:
        F.SCALE = old


@pytest.mark.slow
def test_grad_sharing_a_callee_with_pullbacks_on_threads():
    """The same on two threads, switched every microsecond: 300 calls each."""
    w = _w()
    old, bad = F.SCALE, []
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            F.SCALE = 2.0
            _, pb = s2s.vjp(F.outer, w)
            F.SCALE = 5.0
            g = s2s.grad(F.other)

            def pulls():
                for _ in range(300):
                    if not np.allclose(pb(1.0)[0], _outer_grad(w, 2.0), rtol=1e-12):
                        bad.append("pullback")

            def grads():
                for _ in range(300):
                    if not np.allclose(g(w), _other_grad(w, 5.0), rtol=1e-12):
                        bad.append("grad")

            interval = sys.getswitchinterval()
            sys.setswitchinterval(1e-6)
            try:
                threads = [threading.Thread(target=pulls), threading.Thread(target=grads)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            finally:
                sys.setswitchinterval(interval)
    finally:
        F.SCALE = old
    assert not bad


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_shared_callee_against_jax(dtype):
    jax = pytest.importorskip("jax")
    J = _twin()
    w = _w(dtype)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    old = F.SCALE
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            F.SCALE = J.SCALE = 2.0
            _, pb = s2s.vjp(F.outer, w)
            _, jpb = jax.vjp(J.outer, w)
            F.SCALE = J.SCALE = 5.0
            g = s2s.grad(F.other)
            hook = _During(lambda: pb(dtype(1))[0])
            with contextlib.redirect_stdout(hook):
                got = g(w)
        want, jwant = jax.grad(J.other)(w), jpb(dtype(1))[0]
        for a, b in ((got, want), (hook.got[0], jwant)):
            assert np.asarray(a).dtype == np.asarray(b).dtype
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    finally:
        F.SCALE = J.SCALE = old


# ---- linearize: what the function reads from its module changed after it -----------


def _lin_scenarios(linearize, M, w, v):
    """linearize's function called after (1) an attribute the code never reads changed
    (refused before: a false refusal), (2) an attribute it reads changed, of a module
    and of a module-level object, (3) the module name rebound, (4) all restored."""
    old = (M.cfgmod.SCALE, M.cfgmod.UNUSED, M.CFG.scale, M.CFG.unused, M.CFG.table["k"])
    try:
        _, f_mod = linearize(M.reads_module, w)
        _, f_cfg = linearize(M.reads_cfg, w)
        M.cfgmod.UNUSED, M.CFG.unused = 5.0, 7.0
        got = [f_mod(v), f_cfg(v)]
        M.cfgmod.SCALE, M.CFG.scale, M.CFG.table["k"] = 9.0, -4.0, 0.5
        got += [f_mod(v), f_cfg(v), f_mod(2 * v)]
        saved, M.CFG = M.CFG, M.Settings()
        M.CFG.scale = 11.0
        got.append(f_cfg(v))
        M.CFG = saved
        (M.cfgmod.SCALE, M.cfgmod.UNUSED, M.CFG.scale, M.CFG.unused,
         M.CFG.table["k"]) = old
        return got + [f_mod(v), f_cfg(v)]
    finally:
        (M.cfgmod.SCALE, M.cfgmod.UNUSED, M.CFG.scale, M.CFG.unused,
         M.CFG.table["k"]) = old


def test_linearize_after_module_reads_changed():
    w, v = _w(), np.array([0.5, -1.0, 2.0])
    dot = np.sum(np.cos(w) * v)
    want = [2 * dot, 6 * dot] * 2 + [4 * dot, 6 * dot, 2 * dot, 6 * dot]
    got = _lin_scenarios(s2s.linearize, F, w, v)
    assert len(got) == len(want)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_linearize_after_module_reads_changed_against_jax(dtype):
    jax = pytest.importorskip("jax")
    J = _twin()
    w, v = _w(dtype), np.array([0.5, -1.0, 2.0], dtype)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    got, want = _lin_scenarios(s2s.linearize, F, w, v), _lin_scenarios(jax.linearize, J, w, v)
    for g, e in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


def _closure_object(linearize, vjp, w, v, xp=np):
    """A closure over an object whose attribute (and a nested dict's item) changes
    after linearize()/vjp(): the linear function and the pullback read them as they
    were (linearize read the new ones, on main before state19)."""

    class Box:
        pass

    cfg = Box()
    cfg.s, cfg.inner = 2.0, {"k": 3.0}

    def f(w):
        return cfg.s * cfg.inner["k"] * xp.sum(xp.sin(w))

    _, lin = linearize(f, w)
    _, pb = vjp(f, w)
    cfg.s, cfg.inner["k"] = 5.0, -1.0
    return [lin(v), pb(np.ones((), w.dtype))[0]]


def test_closure_object_changed_after_linearize():
    w, v = _w(), np.array([0.5, -1.0, 2.0])
    got = _closure_object(s2s.linearize, s2s.vjp, w, v)
    np.testing.assert_allclose(got[0], 6 * np.sum(np.cos(w) * v), rtol=1e-12)
    np.testing.assert_allclose(got[1], 6 * np.cos(w), rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_closure_object_changed_against_jax(dtype):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    w, v = _w(dtype), np.array([0.5, -1.0, 2.0], dtype)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    got = _closure_object(s2s.linearize, s2s.vjp, w, v)
    want = _closure_object(jax.linearize, jax.vjp, w, v, jnp)  # (the same source on JAX)
    for g, e in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


# ---- the JAX backend's vjp (inside s2s.jit(..., backend="jax")) ----------------------


def _jax_vjp_scenario(vjp, M, w, x, ct, write=False):
    """vjp, then the module global rebound (and the primal written into in place),
    then the pullback (the JAX backend generated and read its names at the pullback's
    call: SCALE 5, and zeros).  (JAX's own vjp reads a NumPy primal's memory where its
    pullback uses it, x.T here, and not where it kept a residual, cos(x @ w): no
    oracle for the write; s2s copies the primals, as on NumPy.)"""
    old = M.SCALE
    try:
        M.SCALE = 2.0
        x = x.copy()
        y, pb = vjp(M.scaled, w, x)
        M.SCALE = 5.0
        if write:
            x[:] = 0
        return [*pb(ct), y]
    finally:
        M.SCALE = old


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_jax_backends_vjp_fixed_at_vjp(dtype):
    jax = pytest.importorskip("jax")
    from s2s import backends
    from s2s.api.jit_jax import vjp_on_jax

    J = _twin()
    rng = np.random.default_rng(4)
    w, x = rng.normal(size=3).astype(dtype), rng.normal(size=(4, 3)).astype(dtype)
    ct = dtype(1.5)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    jax_backend = backends.get("jax")
    on_jax = lambda f, *p: vjp_on_jax(jax_backend, f, p)  # noqa: E731
    got = _jax_vjp_scenario(on_jax, F, w, x, ct)
    want = _jax_vjp_scenario(jax.vjp, J, w, x, ct)
    closed = 2.0 * ct * x.T @ np.cos(x @ w)
    np.testing.assert_allclose(want[0], closed, rtol=tol * 10, atol=tol)
    written = _jax_vjp_scenario(on_jax, F, w, x, ct, write=True)
    np.testing.assert_allclose(written[0], closed, rtol=tol * 10, atol=tol)
    np.testing.assert_allclose(written[1], 2.0 * ct * np.outer(np.cos(x @ w), w),
                               rtol=tol * 10, atol=tol)
    for g, e in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


# ---- the JAX backend: a callee's array default written in place between calls -------


_DEFAULT_CASES = {  # name -> (the transform, of s2s or jax, without jit; function)
    "fn": (lambda T: lambda f: f, "calls_helper"),
    "grad": (lambda T: T.grad, "calls_helper"),
    "own_default": (lambda T: T.grad, "helper"),
    "keyword_only": (lambda T: T.value_and_grad, "calls_kw_helper"),
    "vmap_grad": (lambda T: lambda f: T.vmap(T.grad(f)), "calls_helper"),
}


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", sorted(_DEFAULT_CASES))
def test_jax_backend_callee_default_written_in_place(case, dtype):
    """``W0[:] = ...`` before calls 3 and 10: s2s.jit on JAX read the values of its
    trace (a constant) at every later call.  The oracle: JAX's transform of the twin,
    not jitted (jax.jit bakes a default in too), its default the new values."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    J = _twin()
    make, name = _DEFAULT_CASES[case]
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 3) if case == "vmap_grad" else 3).astype(dtype)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    saved = F.W0.copy()
    values = {2: np.array([5.0, -1.0, 0.5]), 9: np.array([0.0, 7.0, -2.0])}
    try:
        F.W0[:] = [1.0, 2.0, 3.0]
        ours = s2s.jit(make(s2s)(getattr(F, name)), backend="jax")
        for i in range(10):
            if i in values:
                F.W0[:] = values[i]
            now = jnp.asarray(F.W0)
            J.helper.__defaults__, J.kw_helper.__kwdefaults__ = (now,), {"w": now}
            want = make(jax)(getattr(J, name))(x)
            got = ours(x)
            for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                assert np.asarray(g).dtype == np.asarray(e).dtype, (i, g, e)
                np.testing.assert_allclose(g, e, rtol=tol, atol=tol, err_msg=f"call {i}")
    finally:
        F.W0[:] = saved


# ---- NumPy's functions of a list argument: np.multiply(xs, 2.0) converts it ---------


def _items(dtype=np.float64):
    return [np.array(0.3, dtype), np.array(-0.7, dtype), np.array(1.1, dtype)]


def test_numpy_functions_of_list_arguments():
    """np.multiply/np.add of list arguments are NumPy's (as the function runs), under
    grad, value_and_grad and jvp: refused before, or Python's repetition and
    concatenation (wrong numbers: a mean half NumPy's)."""
    xs, ys = _items(), [np.array(0.5), np.array(0.25), np.array(-1.0)]
    x = np.array([1.0, 2.0, -1.0])
    np.testing.assert_allclose(s2s.grad(F.list_times)(x, [1.0, 2.0, 3.0]),
                               [2.0, 4.0, 6.0], rtol=1e-12)
    g = s2s.grad(F.list_sin)(xs)
    assert type(g) is list and len(g) == 3
    np.testing.assert_allclose(g, [2 * np.cos(2 * v) for v in xs], rtol=1e-12)
    v, g = s2s.value_and_grad(F.list_mean_by_int)(xs)
    np.testing.assert_allclose(v, F.list_mean_by_int(xs), rtol=1e-12)
    np.testing.assert_allclose(g, [2 / 3] * 3, rtol=1e-12)
    v, g = s2s.value_and_grad(F.list_add)(xs, ys)
    np.testing.assert_allclose(v, F.list_add(xs, ys), rtol=1e-12)
    np.testing.assert_allclose(g, [np.cos(a + b) / 3 for a, b in zip(xs, ys)], rtol=1e-12)
    out, dot = s2s.jvp(F.list_sin, (xs,), (ys,))
    np.testing.assert_allclose(out, F.list_sin(xs), rtol=1e-12)
    np.testing.assert_allclose(dot, sum(2 * np.cos(2 * a) * b for a, b in zip(xs, ys)),
                               rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numpy_functions_of_list_arguments_against_jax(dtype):
    """Against JAX's jnp.multiply/jnp.add of jnp.asarray(xs) (JAX's own refuse a
    list): grad, jvp, vmap (of the function and of its grad), s2s.jit on both
    backends."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    tol = 1e-12 if dtype == np.float64 else 2e-5
    xs, ys = _items(dtype), [v * dtype(0.5) for v in _items(dtype)]
    x = np.array([1.0, 2.0, -1.0], dtype)
    twins = {
        "list_times": lambda x, xs: jnp.sum(jnp.multiply(jnp.asarray(xs), 2.0) * x),
        "list_sin": lambda xs: jnp.sum(jnp.sin(jnp.multiply(jnp.asarray(xs), 2.0))),
        "list_mean_by_int": lambda xs: jnp.mean(jnp.multiply(jnp.asarray(xs), 2)),
        "list_add": lambda xs, ys: jnp.mean(jnp.sin(jnp.add(jnp.asarray(xs),
                                                            jnp.asarray(ys)))),
    }
    args = {"list_times": (x, [1.0, 2.0, 3.0]), "list_sin": (xs,),
            "list_mean_by_int": (xs,), "list_add": (xs, ys)}

    def same(got, want):
        got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
        assert len(got) == len(want)
        for g, e in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(e).dtype, (g, e)
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol)

    for name, twin in twins.items():
        f, a = getattr(F, name), args[name]
        same(s2s.value_and_grad(f)(*a), jax.value_and_grad(twin)(*a))
        for backend in (None, "jax"):
            same(s2s.jit(s2s.grad(f), backend=backend)(*a), jax.grad(twin)(*a))
    same(s2s.jvp(F.list_sin, (xs,), (ys,)), jax.jvp(F.list_sin and (
        lambda *v: twins["list_sin"](list(v))), tuple(xs), tuple(ys)))
    batch = np.stack([x, 2 * x, -x])
    same(s2s.vmap(F.list_times, in_axes=(0, None))(batch, [1.0, 2.0, 3.0]),
         jax.vmap(twins["list_times"], in_axes=(0, None))(batch, [1.0, 2.0, 3.0]))
    same(s2s.vmap(s2s.grad(F.list_times), in_axes=(0, None))(batch, [1.0, 2.0, 3.0]),
         jax.vmap(jax.grad(twins["list_times"]), in_axes=(0, None))(batch, [1.0, 2.0, 3.0]))


# ---- objects deeper than three levels (and a module's objects) after vjp() ----------


def _deep_scenarios(vjp, linearize, M, w, v):
    """An item five objects down (``CHAIN.inner x5["scale"]``) and an attribute of an
    object a module holds (``cfgmod.DEEP.scale``), changed after vjp()/linearize():
    the pullback and the linear function read them as they were (the copies stopped
    three levels down, and a module's objects were not copied: the new numbers)."""
    deepest = M.CHAIN.inner.inner.inner.inner.inner
    out = []
    try:
        for f in (M.reads_chain, M.reads_module_object):
            _, pb = vjp(f, w)
            _, lin = linearize(f, w)
            deepest["scale"], M.cfgmod.DEEP.scale = 5.0, -3.0
            out += [pb(np.ones((), w.dtype))[0], lin(v)]
            deepest["scale"], M.cfgmod.DEEP.scale = 2.0, 2.0
    finally:
        deepest["scale"], M.cfgmod.DEEP.scale = 2.0, 2.0
    return out


def test_deep_objects_changed_after_vjp():
    w, v = _w(), np.array([0.5, -1.0, 2.0])
    got = _deep_scenarios(s2s.vjp, s2s.linearize, F, w, v)
    for k in (0, 2):
        np.testing.assert_allclose(got[k], 2 * np.cos(w), rtol=1e-12)
        np.testing.assert_allclose(got[k + 1], 2 * np.sum(np.cos(w) * v), rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_deep_objects_changed_after_vjp_against_jax(dtype):
    jax = pytest.importorskip("jax")
    J = _twin()
    w, v = _w(dtype), np.array([0.5, -1.0, 2.0], dtype)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    got = _deep_scenarios(s2s.vjp, s2s.linearize, F, w, v)
    want = _deep_scenarios(jax.vjp, jax.linearize, J, w, v)
    for g, e in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
