"""``s2s.jvp`` specialized (s2s/optimize/specialize.py): from the second call with one
signature (the primals' and tangents' structure, shapes, dtypes, integer values) the
forward-mode code runs rewritten to it, as a grad's does; Hessian-vector products
(``jvp`` of ``grad``) with it.  Every expected value is JAX's (``jax.jvp`` of the same
source, ``jax.jvp(jax.grad(...))`` for HVPs), in float64 and float32, at the 1st, 3rd
and 10th call with values changing between calls, new shapes, NaN and inf, and a
module constant rebound between calls."""

from __future__ import annotations

from pathlib import Path

import corpus_fns
import numpy as np
import pytest
from corpus import CASES
from oracle import attr_name
from support import jax_twin, leaves, rng_tree

import s2s
from s2s.api.pushforward import _jvp_transform
from s2s.emit.code import check_invariants

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

SCALE = 2.0  # a module constant the code reads (rebound by a test)


def tanh_sq(x):
    return np.sum(np.tanh(x) ** 2)


def softplus_loss(w, x, y):
    z = x @ w
    return np.mean(np.log1p(np.exp(-y * z))) + 0.5 * SCALE * np.sum(w**2)


def rows_softmax(a):
    e = np.exp(a - np.max(a, axis=1, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)
    return np.sum(p * np.cos(a))


def twin(f):
    import types

    return types.FunctionType(f.__code__, {**f.__globals__, "np": jnp}, f.__name__)


def tol(dtype):
    return dict(rtol=3e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-11)


def close(got, want, dtype):
    got, want = leaves(got), leaves(want)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        b = np.asarray(b)
        assert np.shape(a) == b.shape and np.result_type(a) == b.dtype, (a, b)
        np.testing.assert_allclose(np.asarray(a), b, **tol(dtype))


def hvp_of(f, argnum=0):
    g = s2s.grad(f, argnums=argnum)

    def hvp(*args_and_v):
        *args, v = args_and_v
        return s2s.jvp(g, tuple(args), tuple(
            v if i == argnum else np.zeros_like(a) for i, a in enumerate(args)))
    return g, hvp


def jax_hvp(f, argnum=0):
    gj = jax.grad(twin(f), argnums=argnum)
    return jax.jit(lambda *a: jax.jvp(gj, tuple(a[:-1]), tuple(
        a[-1] if i == argnum else jnp.zeros_like(x) for i, x in enumerate(a[:-1]))))


def specialized(fun):
    t = _jvp_transform(fun, False)
    t.wait_specialized()
    return t.specialized_source


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hvp_values_changing_between_calls(dtype):
    g, hvp = hvp_of(tanh_sq)
    want = jax_hvp(tanh_sq)
    rng = np.random.default_rng(0)
    x, v = (rng.normal(size=6).astype(dtype) for _ in range(2))
    for call in range(10):
        got = hvp(x, v)
        if call in (0, 2, 9):
            close(got, want(x, v), dtype)
        if call == 2:
            text = specialized(g)
            assert text is not None and "grad_seed(" not in text.split("def ")[1]
            check_invariants(text)
        # the caller writes into its arrays (and into the results) between calls
        got[1][...] = 7.0
        x[...], v[...] = rng.normal(size=6), rng.normal(size=6)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)])
def test_hvp_of_a_loss_with_data_and_new_shapes(dtype):
    g, hvp = hvp_of(softplus_loss)
    want = jax_hvp(softplus_loss)
    rng = np.random.default_rng(1)
    for n, d in ((8, 3), (8, 3), (8, 3), (1, 1), (1, 1), (1, 1)):
        w, v = (rng.normal(size=d).astype(dtype) for _ in range(2))
        x = rng.normal(size=(n, d)).astype(dtype)
        y = rng.choice([-1.0, 1.0], n).astype(dtype)
        close(hvp(w, x, y, v), want(w, x, y, v), dtype)
    assert len(_jvp_transform(g, False)._by_signature) == 2


@pytest.mark.slow
def test_hvp_of_the_softmax_rows_and_zero_size():
    g, hvp = hvp_of(rows_softmax)
    want = jax_hvp(rows_softmax)
    rng = np.random.default_rng(2)
    for shape in ((4, 5), (4, 5), (4, 5), (0, 3), (0, 3), (0, 3)):
        a, v = rng.normal(size=shape), rng.normal(size=shape)
        close(hvp(a, v), want(a, v), np.float64)


LABELS = np.eye(3)[[0, 1, 2, 1]]


def xent_rows(logits):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(LABELS * logp, axis=1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])  # (float32 logits meet the
# float64 LABELS: JAX gives the gradient and H v in float32, and so does s2s: dtypes_down)
def test_hvp_of_a_cross_entropy_drops_the_max_backward_in_both_outputs(dtype):
    """The row max's cotangent is zero (the zero proof), and so is its tangent
    (``*_bar_dot``); forward mode spells ``g / count * winners`` in steps, so the zero
    is followed through them: neither the gradient nor H v computes ``winners``'
    backward.  Ties for the max (where that backward would split) are in the data."""
    g, hvp = hvp_of(xent_rows)
    want = jax_hvp(xent_rows)
    rng = np.random.default_rng(4)
    for call in range(3):
        a = rng.normal(size=(4, 3)).astype(dtype)
        a[0, 1] = a[0, 2] = a[0].max()  # a tie
        v = rng.normal(size=(4, 3)).astype(dtype)
        close(hvp(a, v), want(a, v), dtype)
    body = specialized(g).split("def ", 1)[1]
    assert "count *" not in body and "/ count" not in body and "count =" not in body, body


def test_hvp_with_nan_and_inf():
    g, hvp = hvp_of(tanh_sq)
    x = np.array([0.3, np.nan, np.inf, -np.inf, 2.0])
    v = np.array([1.0, 1.0, 1.0, np.nan, np.inf])
    want = [np.asarray(a) for a in jax_hvp(tanh_sq)(x, v)]
    for _ in range(3):
        got = hvp(x, v)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
            np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_hvp_reads_the_doubled_tanh_it_computed(dtype, monkeypatch):
    """The tangent of ``2t * (1 - t**2)`` reads ``2t`` (``tanh_x_times_2``), which the
    gradient computes, where the e-graph used to fold its constant out into
    ``-2.0 * (tanh_x_dot * tanh_x)`` (two operations more): repeated subexpressions
    are shared before the e-graph runs, and a single use is inlined into the item of
    the returned tuple that reads it.  Ten array operations besides ``tanh`` (thirteen
    with ``subexpr`` off), and the values bit for bit those with it off (NaN and inf
    among them), which test_hvp_with_nan_and_inf checks against JAX."""
    import ast

    rng = np.random.default_rng(6)
    x, v = (rng.normal(size=7).astype(dtype) * 2 for _ in range(2))
    x[1], x[2], v[3], v[4] = np.nan, np.inf, np.nan, np.inf
    texts, values = {}, {}
    for off in ("", "subexpr"):
        monkeypatch.setenv("S2S_PASSES_OFF", off)
        g, hvp = hvp_of(tanh_sq)
        with np.errstate(all="ignore"):
            values[off] = [hvp(x, v) for _ in range(3)]
        texts[off] = specialized(g)
    for got, want in zip(values[""], values["subexpr"]):
        for a, b in zip(got, want):
            assert a.dtype == dtype
            np.testing.assert_array_equal(a, b)
    counts = {off: sum(isinstance(n, (ast.BinOp, ast.Call)) or isinstance(n, ast.UnaryOp)
                       and not isinstance(n.operand, ast.Constant)
                       for n in ast.walk(ast.parse(text.split("def ", 1)[1].join(
                           ("def ", ""))))) for off, text in texts.items()}
    assert counts == {"": 11, "subexpr": 14}, (counts, texts[""])
    assert "2.0 *" not in texts[""] and "tanh_x_times_2 * (tanh_x_dot * tanh_x_times_2)" \
        in texts[""], texts[""]


@pytest.mark.slow
def test_a_module_constant_rebound_between_calls(monkeypatch):
    g, hvp = hvp_of(softplus_loss)
    rng = np.random.default_rng(3)
    w, v = rng.normal(size=3), rng.normal(size=3)
    x, y = rng.normal(size=(6, 3)), rng.choice([-1.0, 1.0], 6)
    for scale in (2.0, 2.0, 2.0, 5.0, 5.0, 5.0):
        monkeypatch.setitem(softplus_loss.__globals__, "SCALE", scale)
        want = jax.jvp(jax.grad(twin(softplus_loss)), (w, x, y), (v, 0 * x, 0 * y))
        close(hvp(w, x, y, v), want, np.float64)


def test_a_grad_whose_specializing_is_off_keeps_the_emitted_jvp():
    g, hvp = hvp_of(tanh_sq)
    g.specialize = False
    x, v = np.linspace(-1, 1, 4), np.ones(4)
    for _ in range(3):
        close(hvp(x, v), jax_hvp(tanh_sq)(x, v), np.float64)
    assert specialized(g) is None


def test_jvp_of_a_function_specializes_in_the_background(monkeypatch):
    from s2s.api import signatures

    monkeypatch.setattr(signatures, "IN_BACKGROUND", True)
    f = softplus_loss
    rng = np.random.default_rng(4)
    w, x, y = rng.normal(size=3), rng.normal(size=(6, 3)), rng.choice([-1.0, 1.0], 6)
    want = jax.jit(lambda *p: jax.jvp(twin(f), p[:3], p[3:]))
    for call in range(10):
        t = tuple(rng.normal(size=np.shape(a)) for a in (w, x, y))
        close(s2s.jvp(f, (w, x, y), t), want(w, x, y, *t), np.float64)
        if call == 3:
            assert specialized(f) is not None
        w[...] = rng.normal(size=3)  # in place, as soon as the call returned


# ---- every corpus function: the third call (specialized) is JAX's jvp -------------------

FORWARD = [c for c in CASES if not c.kwargs]
SAMPLED = [c if i % 4 == 0 else pytest.param(c, marks=pytest.mark.slow)
           for i, c in enumerate(FORWARD)]
_TWIN = None


@pytest.mark.parametrize("case", SAMPLED, ids=[c.name for c in FORWARD])
def test_corpus_jvp_third_call_matches_jax(case):
    if not case.jax:
        pytest.skip("JAX cannot run this source")
    global _TWIN
    if _TWIN is None:
        _TWIN = jax_twin(corpus_fns)
    primals = case.args()
    tangents = rng_tree(primals, np.random.default_rng(len(case.name)))
    expected = jax.jvp(getattr(_TWIN, attr_name(case)), primals, tangents,
                       has_aux=case.has_aux)
    f32 = any(np.result_type(x) == np.float32 for x in leaves(primals))
    for _ in range(3):
        got = s2s.jvp(case.fn, primals, tangents, has_aux=case.has_aux)
        for a, b in zip(leaves(got), leaves(expected)):
            b = np.asarray(b)
            if b.dtype == jax.dtypes.float0:
                continue
            assert np.shape(a) == b.shape
            np.testing.assert_allclose(np.asarray(a), b, **tol(
                np.float32 if f32 else np.float64))
    text = _jvp_transform(case.fn, case.has_aux).specialized_source
    if text is not None:
        check_invariants(text)


def identity_and_aux(x):
    return x, np.sum(x)


def test_the_fast_path_never_hands_back_the_callers_tangent():
    x, t = np.arange(3.0), np.ones(3)
    for _ in range(4):
        out, out_dot, aux = s2s.jvp(identity_and_aux, (x,), (t,), has_aux=True)
        assert out_dot is not t and not np.may_share_memory(out_dot, t)
        np.testing.assert_array_equal(out_dot, t)
        assert aux == 3.0
        out_dot[...] = 5.0  # the caller writes into the result
        np.testing.assert_array_equal(t, np.ones(3))


@pytest.mark.slow
def test_background_specializing_prints_no_egglog_thread_error(tmp_path):
    """egglog's engines must be freed by the thread that made them: a collection on
    the caller's thread used to report 'EGraph is unsendable' on stderr."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "bg.py"
    script.write_text(textwrap.dedent('''
        import gc
        import numpy as np
        import s2s

        def wave(x):
            return np.sum(np.sin(x) * x)

        def soft(a):
            e = np.exp(a - np.max(a, axis=1, keepdims=True))
            return np.sum(e / np.sum(e, axis=1, keepdims=True) * a)

        for fn, x in ((wave, np.ones(3)), (soft, np.ones((3, 4)))):
            g = s2s.grad(fn)
            for _ in range(3):
                g(x)
            g.wait_specialized()
            assert g.specialized_source is not None
        junk = [[i] for i in range(10000)]
        gc.collect()
        print("ok")
    '''))
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("S2S_SPECIALIZE", "S2S_CHECK_EMITTED")}  # (a user's defaults)
    # (the s2s under test, wherever it is imported from)
    env["PYTHONPATH"] = str(Path(s2s.__file__).resolve().parent.parent)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    assert "unsendable" not in out.stderr, out.stderr


@pytest.mark.slow
def test_a_script_exiting_while_specializing_exits_cleanly(tmp_path):
    """The interpreter waits for a specializing thread at exit: one stopped inside the
    e-graph's native code aborted the process (exit status 134, a Rust panic)."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "exit.py"
    script.write_text(textwrap.dedent('''
        import numpy as np
        import s2s

        def f(a):
            q, r = np.linalg.qr(a)
            return np.sum(q * 2.0) + np.sum(r ** 2)

        a = np.random.default_rng(0).normal(size=(4, 3))
        g = s2s.grad(f)
        for i in range(3):
            g(a + i)
        s2s.vmap(g)(np.stack([a, a]))
        s2s.hessian(f)(a)
        print("ok")
    '''))
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("S2S_SPECIALIZE", "S2S_CHECK_EMITTED")}  # (a user's defaults)
    env["PYTHONPATH"] = str(Path(s2s.__file__).resolve().parent.parent)
    for _ in range(2):  # (a race: it showed in most runs)
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             env=env, timeout=300)
        assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
        assert "panicked" not in out.stderr and "unsendable" not in out.stderr, out.stderr
