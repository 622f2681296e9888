"""s2s.jit and the backends: the emitted code run on JAX agrees with the NumPy backend
(and with JAX's own transforms), compiled once per signature."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2s
from corpus import CASES, Case
from support import HAVE_JAX, jax_twin, leaves

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="the jax backend needs jax")

if HAVE_JAX:
    import jax
    import jax.numpy as jnp

    from s2s.backends import TracedValueError

import corpus_fns as F

# Corpus cases whose emitted gradient runs Python control flow on a traced value the
# JAX backend does not lower to lax (control.py): a `break` or `return` in a loop,
# `and` of arrays, float() of one, a boolean mask, the gradient of a `while` (JAX
# refuses reverse mode through lax.while_loop too).  They raise TracedValueError
# naming the line.  A case leaving this set is progress: update the set.
TRACED_CONTROL_FLOW = {
    "float_conversion", "slice_updates", "while_never_runs", "while_shrinks",
}
# Cases that lowering to lax.cond/fori_loop/scan made run on JAX (they raised before).
LOWERED_CONTROL_FLOW = {
    "conditional_expression", "early_return_skipped", "early_return_taken",
    "if_elif_first", "if_elif_second", "if_elif_third", "if_else_false", "if_else_true",
    "if_without_else", "loop_continue", "while_in_for",
}


def python_int_args(args: tuple) -> tuple[int, ...]:
    """Positions of Python ints (loop counts, labels): static, as a JAX user makes them."""
    return tuple(i for i, a in enumerate(args) if type(a) is int)


def tolerance(args) -> dict:
    if any(np.result_type(x) == np.float32 for x in leaves(args)):
        return {"rtol": 2e-5, "atol": 1e-6}
    return {"rtol": 1e-9, "atol": 1e-12}


def assert_same(got, expected, **tol) -> None:
    g, e = leaves(got), leaves(expected)
    assert len(g) == len(e)
    for a, b in zip(g, e):
        a = np.asarray(a)
        assert a.shape == np.shape(b)
        assert a.dtype == np.result_type(b), (a.dtype, np.result_type(b))
        np.testing.assert_allclose(a, b, **tol)


# ---- the corpus: the emitted gradients on JAX ---------------------------------------


@pytest.mark.parametrize("case", [  # every second case by default (the JAX backend
    # suite compares more transforms on its own subset), all with -m slow
    pytest.param(c, id=c.name, marks=[] if k % 2 == 0 or c.name in TRACED_CONTROL_FLOW
                 else [pytest.mark.slow]) for k, c in enumerate(CASES)])
def test_corpus_gradient_on_jax_matches_numpy_backend(case: Case) -> None:
    args = case.args()
    grad = s2s.grad(case.fn, argnums=case.argnums, has_aux=case.has_aux)
    jitted = s2s.jit(s2s.grad(case.fn, argnums=case.argnums, has_aux=case.has_aux),
                     backend="jax", static_argnums=python_int_args(args),
                     static_argnames=tuple(case.kwargs))
    if case.name in TRACED_CONTROL_FLOW:
        with pytest.raises(TracedValueError) as info:
            jitted(*args, **case.kwargs)
        message = str(info.value)
        assert "backend='numpy'" in message and "static_argnums" in message
        # your line, quoted (not the emitted code's)
        assert f'File "{case.fn.__code__.co_filename}"' in message and "<s2s" not in message
        return
    expected = grad(*args, **case.kwargs)
    got = jitted(*args, **case.kwargs)
    if case.has_aux:
        got, expected = got[0], expected[0]
        # aux is whatever the function returned, computed by JAX
    assert_same(got, expected, **tolerance(args))
    assert jitted.cache_info().compilations == 1


@pytest.mark.parametrize("case", CASES[:12], ids=[c.name for c in CASES[:12]])
def test_corpus_gradient_on_numpy_backend(case: Case) -> None:
    args = case.args()
    jitted = s2s.jit(s2s.grad(case.fn, argnums=case.argnums, has_aux=case.has_aux))
    assert jitted.backend.name == "numpy"
    got = jitted(*args, **case.kwargs)
    expected = s2s.grad(case.fn, argnums=case.argnums, has_aux=case.has_aux)(
        *args, **case.kwargs)
    assert_same(got, expected, rtol=0, atol=0)
    assert "import numpy as np" in s2s.source(jitted)


def test_gradients_match_jax_jit_of_jax_grad() -> None:
    twin = jax_twin(F)
    r = np.random.default_rng(0)
    args = (r.normal(size=3), r.normal(size=(5, 3)), r.normal(size=5))
    got = s2s.jit(s2s.grad(F.loss, argnums=(0, 1, 2)), backend="jax")(*args)
    expected = jax.jit(jax.grad(twin.loss, argnums=(0, 1, 2)))(*args)
    assert_same(got, [np.asarray(e) for e in expected], rtol=1e-12, atol=1e-14)


def test_value_and_grad_with_pytrees() -> None:
    twin = jax_twin(F)
    r = np.random.default_rng(1)
    params = {"w1": r.normal(size=(3, 4)), "w2": r.normal(size=(4, 2))}
    x = r.normal(size=(5, 3))
    value, grads = s2s.jit(s2s.value_and_grad(F.two_layers), backend="jax")(params, x)
    value_e, grads_e = jax.value_and_grad(twin.two_layers)(params, x)
    np.testing.assert_allclose(value, value_e, rtol=1e-12)
    assert set(grads) == {"w1", "w2"}
    for k in grads:
        np.testing.assert_allclose(grads[k], grads_e[k], rtol=1e-12, atol=1e-14)


# ---- caching ------------------------------------------------------------------------


def test_jax_cache_counts_compilations_per_signature() -> None:
    g = s2s.jit(s2s.grad(F.loss), backend="jax")
    r = np.random.default_rng(2)
    w, x, y = r.normal(size=3), r.normal(size=(5, 3)), r.normal(size=5)
    g(w, x, y)
    assert g.cache_info().compilations == 1
    for k in range(3):  # new values: no new trace
        g(w + k, x * k, y)
    info = g.cache_info()
    assert (info.compilations, info.hits, info.misses) == (1, 3, 1)
    g(w, r.normal(size=(7, 3)), r.normal(size=7))  # new shapes
    assert g.cache_info().compilations == 2
    g(w.astype(np.float32), x.astype(np.float32), y.astype(np.float32))  # new dtypes
    assert g.cache_info().compilations == 3
    assert g.cache_info().currsize == 3


def test_numpy_cache_counts_compilations_per_signature() -> None:
    g = s2s.jit(s2s.grad(F.loss), backend="numpy")
    r = np.random.default_rng(3)
    w, x, y = r.normal(size=3), r.normal(size=(5, 3)), r.normal(size=5)
    np.testing.assert_array_equal(g(w, x, y), s2s.grad(F.loss)(w, x, y))
    g(w + 1, x, y)
    assert g.cache_info() == s2s.jit(lambda: 0).cache_info()._replace(
        hits=1, misses=1, compilations=1, currsize=1)
    g(w, r.normal(size=(2, 3)), r.normal(size=2))
    g(w.astype(np.float32), x, y)
    assert g.cache_info().compilations == 3


# ---- static arguments ---------------------------------------------------------------


def test_static_argnums_specialise_and_recompile() -> None:
    twin = jax_twin(F)
    g = s2s.jit(s2s.grad(F.loop_carried), backend="jax", static_argnums=1)
    x = np.array([0.2, 0.3, 0.4])
    for n in (3, 5, 3):
        expected = jax.grad(twin.loop_carried)(x, n)
        np.testing.assert_allclose(g(x, n), expected, rtol=1e-12)
    assert g.cache_info().compilations == 2  # n=3 compiled once


def test_static_argnames_inferred_from_argnums_and_back() -> None:
    x = np.array([0.2, 0.3, 0.4])
    expected = s2s.grad(F.loop_carried)(x, 4)
    by_name = s2s.jit(s2s.grad(F.loop_carried), backend="jax", static_argnames="n")
    assert by_name.static_argnums == (1,)
    np.testing.assert_allclose(by_name(x, 4), expected, rtol=1e-12)
    np.testing.assert_allclose(by_name(x, n=4), expected, rtol=1e-12)
    numpy_jit = s2s.jit(s2s.grad(F.loop_carried), static_argnums=1)
    assert numpy_jit.static_argnames == ("n",)
    np.testing.assert_allclose(numpy_jit(x, 4), expected, rtol=0)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        numpy_jit(x, [4])


def test_traced_loop_count_names_the_line_and_the_fixes() -> None:
    g = s2s.jit(s2s.grad(F.loop_carried), backend="jax")  # n traced: range(n) fails
    with pytest.raises(TracedValueError) as info:
        g(np.array([0.2, 0.3]), 3)
    message = str(info.value)
    assert "for i in range(n):" in message
    assert "backend='numpy'" in message and "static_argnums" in message
    assert isinstance(info.value, s2s.TransformError)


def test_traced_if_in_a_plain_function_names_the_users_line() -> None:
    def clipped(x):  # (a loop with `else:` stays Python: the function runs as written)
        for i in range(3):
            if np.sum(x) > 0:
                return x
            x = x + 1.0
        else:
            x = x * 2.0
        return -x

    with pytest.raises(TracedValueError) as info:
        s2s.jit(clipped, backend="jax")(np.ones(3))
    assert "Python `if`" in str(info.value)
    assert "if np.sum(x) > 0:" in str(info.value)
    assert __file__ in str(info.value)


# ---- choosing a backend -------------------------------------------------------------


def test_missing_jax_names_the_extra(monkeypatch) -> None:
    import s2s.backends as backends

    monkeypatch.setitem(sys.modules, "jax", None)  # import jax now raises ImportError
    with pytest.raises(backends.BackendUnavailableError, match=r"pip install s2s\[jax\]"):
        s2s.jit(F.loss, backend="jax")
    with pytest.raises(ImportError):
        backends.get("jax")
    assert backends.available() == ["numpy"]
    assert s2s.jit(F.loss).backend.name == "numpy"  # the default needs nothing


def test_default_backend_can_be_chosen() -> None:
    import s2s.backends as backends

    assert backends.get_default() == "numpy"
    with backends.using("jax"):
        assert s2s.jit(F.loss).backend.name == "jax"
    assert s2s.jit(F.loss).backend.name == "numpy"
    previous = backends.set_default("jax")
    try:
        assert previous == "numpy" and s2s.jit(F.loss).backend.name == "jax"
    finally:
        backends.set_default(previous)
    with pytest.raises(ValueError, match="unknown s2s backend"):
        backends.set_default("torch")
    with pytest.raises(ValueError, match="shard_batch needs the 'jax' backend"):
        s2s.jit(F.loss, backend="numpy", shard_batch=True)


def run_script(tmp_path, code: str, **env_vars: str) -> subprocess.CompletedProcess:
    """Run ``code`` from a file (s2s reads sources from files) in a fresh Python."""
    script = tmp_path / "script.py"
    script.write_text(code)
    env = dict(os.environ, JAX_PLATFORMS="cpu", **env_vars)
    env.pop("JAX_ENABLE_X64", None)
    return subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=180)


@pytest.mark.slow
def test_default_backend_from_the_environment_and_x64_opt_out(tmp_path) -> None:
    code = textwrap.dedent("""
        import jax, numpy as np, s2s
        import s2s.backends as b
        assert b.get_default() == "jax", b.get_default()
        def f(x):
            return np.sum(np.sin(x))
        g = s2s.jit(s2s.grad(f))
        assert g.backend.name == "jax"
        out = g(np.ones(3, np.float32))
        assert not jax.config.jax_enable_x64
        assert out.dtype == np.float32, out.dtype
        print("ok")
    """)
    done = run_script(tmp_path, code, S2S_BACKEND="jax", S2S_JAX_X64="0")
    assert done.returncode == 0, done.stderr
    assert "ok" in done.stdout


@pytest.mark.slow
def test_jax_backend_turns_on_x64_by_default(tmp_path) -> None:
    code = textwrap.dedent("""
        import jax, numpy as np, s2s
        assert not jax.config.jax_enable_x64
        def f(x):
            return np.sum(x ** 2)
        g = s2s.jit(s2s.grad(f), backend="jax")
        assert jax.config.jax_enable_x64
        assert g(np.ones(3)).dtype == np.float64
        print("ok")
    """)
    done = run_script(tmp_path, code)
    assert done.returncode == 0, done.stderr


# ---- vmap, jvp and nested transforms under jit --------------------------------------


def test_vmap_of_grad_under_jit() -> None:
    twin = jax_twin(F)
    r = np.random.default_rng(4)
    ws, x, y = r.normal(size=(6, 3)), r.normal(size=(5, 3)), r.normal(size=5)
    v = s2s.vmap(s2s.grad(F.loss), in_axes=(0, None, None))
    jv = s2s.jit(v, backend="jax")
    got = jv(ws, x, y)
    np.testing.assert_allclose(got, v(ws, x, y), rtol=1e-12, atol=1e-14)
    expected = jax.vmap(jax.grad(twin.loss), in_axes=(0, None, None))(ws, x, y)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    jv(ws * 2, x, y)
    assert jv.cache_info().compilations == 1
    jv(r.normal(size=(4, 3)), x, y)  # a new batch size: a new example, a new trace
    assert jv.cache_info().compilations == 2
    assert "n_batch" in s2s.source(jv) or "axis=1" in s2s.source(jv)
    assert "import s2s.backends.jax_numpy as np" in s2s.source(jv)


def test_vmap_of_grad_with_np_add_at_under_jit() -> None:
    twin = jax_twin(F)
    logits = np.random.default_rng(11).normal(size=(4, 5))
    v = s2s.vmap(s2s.grad(F.softmax_xent), in_axes=(0, None))
    got = s2s.jit(v, backend="jax", static_argnums=1)(logits, 2)
    np.testing.assert_allclose(got, v(logits, 2), rtol=1e-12, atol=1e-14)
    expected = jax.vmap(jax.grad(twin.softmax_xent), in_axes=(0, None))(logits, 2)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_vmap_of_a_function_with_loops_under_jit() -> None:
    twin = jax_twin(F)
    r = np.random.default_rng(5)
    m, v = r.normal(size=(3, 4, 3)), r.normal(size=(3, 3))
    vm = s2s.vmap(F.loop_over_rows)
    got = s2s.jit(vm, backend="jax")(m, v)
    np.testing.assert_allclose(got, vm(m, v), rtol=1e-12)
    np.testing.assert_allclose(got, jax.vmap(twin.loop_over_rows)(m, v), rtol=1e-12)


def test_jvp_under_jit() -> None:
    twin = jax_twin(F)
    r = np.random.default_rng(6)
    x, t = r.uniform(0.5, 2.0, size=4), r.normal(size=4)

    def fwd(x, t):
        return s2s.jvp(F.elementwise_chain, (x,), (t,))

    jf = s2s.jit(fwd, backend="jax")
    out, out_dot = jf(x, t)
    out_n, dot_n = s2s.jvp(F.elementwise_chain, (x,), (t,))
    out_e, dot_e = jax.jvp(twin.elementwise_chain, (x,), (t,))
    np.testing.assert_allclose(out, out_n, rtol=1e-12)
    np.testing.assert_allclose(out_dot, dot_n, rtol=1e-12)
    np.testing.assert_allclose(out_dot, dot_e, rtol=1e-12)
    jf(x * 1.5, t)
    assert jf.cache_info().compilations == 1


def test_grad_called_inside_a_jitted_function() -> None:
    twin = jax_twin(F)
    r = np.random.default_rng(7)
    w, x, y = r.normal(size=3), r.normal(size=(5, 3)), r.normal(size=5)
    g = s2s.grad(F.loss)

    def step(w, x, y):
        return w - 0.1 * g(w, x, y)

    def step_again(w, x, y):
        return w - 0.1 * s2s.grad(F.loss)(w, x, y)

    expected = w - 0.1 * jax.grad(twin.loss)(w, x, y)
    for fn in (step, step_again):
        got = s2s.jit(fn, backend="jax")(w, x, y)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def _scalar_fn(x):
    return np.sin(x) * x + np.exp(0.5 * x)


@pytest.mark.slow
def test_second_order_under_jit() -> None:
    def twin(x):
        return jnp.sin(x) * x + jnp.exp(0.5 * x)

    gg = s2s.jit(s2s.grad(s2s.grad(_scalar_fn)), backend="jax")
    for x in (0.7, -1.3):
        np.testing.assert_allclose(gg(np.float64(x)), jax.grad(jax.grad(twin))(x),
                                   rtol=1e-12)
        np.testing.assert_allclose(gg(np.float64(x)),
                                   s2s.grad(s2s.grad(_scalar_fn))(np.float64(x)),
                                   rtol=1e-12)
    assert gg.cache_info().compilations == 1


def test_plain_function_on_jax() -> None:
    twin = jax_twin(F)
    r = np.random.default_rng(8)
    x = r.normal(size=(4, 3))
    for name in ("import_spellings", "calls_helper", "closure_fn"):
        fn = getattr(F, name)
        args = (x[0],) if name != "calls_helper" else (x[0], x[1])
        got = s2s.jit(fn, backend="jax")(*args)
        np.testing.assert_allclose(got, fn(*args), rtol=1e-12)
        np.testing.assert_allclose(got, getattr(twin, name)(*args), rtol=1e-12)
    assert "jax_numpy" in s2s.source(s2s.jit(F.loss, backend="jax"))


def test_jacobians_run_on_both_backends() -> None:
    x = np.random.default_rng(3).uniform(0.5, 1.5, size=3)
    expected = s2s.jacfwd(F.elementwise_chain)(x)
    got = s2s.jit(s2s.jacfwd(F.elementwise_chain), backend="jax")(x)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12, atol=1e-14)
    # the numpy backend runs anything callable
    h = s2s.jit(s2s.hessian(F.elementwise_chain))
    np.testing.assert_allclose(h(x), s2s.hessian(F.elementwise_chain)(x), rtol=0)


# ---- the code that runs ---------------------------------------------------------------


def test_source_shows_lowered_in_place_writes() -> None:
    g = s2s.jit(s2s.grad(F.rosenbrock), backend="jax")
    x = np.random.default_rng(9).normal(size=6)
    np.testing.assert_allclose(g(x), s2s.grad(F.rosenbrock)(x), rtol=1e-12)
    text = s2s.source(g)
    numpy_text = s2s.source(s2s.jit(s2s.grad(F.rosenbrock)))
    assert "] += " in numpy_text
    assert "] += " not in text and ".at[" in text
    assert text.startswith("import s2s.backends.jax_numpy as np\n")
    assert "from s2s.backends.jax_runtime import" in text
    assert "+=" not in "".join(line for line in text.splitlines() if ".at[" in line)


def test_np_add_at_lowered() -> None:
    args = F.softmax_xent, np.random.default_rng(10).normal(size=5)
    g = s2s.jit(s2s.grad(F.softmax_xent), backend="jax")
    np.testing.assert_allclose(g(args[1], 2), s2s.grad(F.softmax_xent)(args[1], 2),
                               rtol=1e-12)
    text = s2s.source(g)
    assert "np.add.at" not in text and "_bar.at[label].add(" in text


def test_lower_inplace_rewrites() -> None:
    from s2s.backends.lower import LoweringError, lower_inplace

    text = textwrap.dedent("""\
        def f(x, idx):
            y = np.zeros_like(x)
            y[1:] += x[:-1]  # kept
            y[0][1] = 3
            np.add.at(y, idx, x)
            np.maximum.at(y, idx, x)
            rows = [x, x]
            rows[0] = y
            y[idx] -= 2
            z = np.add.at(y, np.s_[:, 0], x) or y
            w = np.add.at(t := np.repeat(x[None], 3, axis=0), idx, x) or t
            return y
    """)
    lowered = lower_inplace(text)
    # a value is cast to the array's dtype, as NumPy's write casts it (JAX warns on a
    # float64 value into a float32 array); a literal (`2`, `3`) is weak, left as it is
    assert "y = y.at[1:].add(np.astype(x[:-1], y.dtype))  # kept" in lowered
    assert "y = y.at[0].set(y[0].at[1].set(3))" in lowered
    assert "y = y.at[idx].add(np.astype(x, y.dtype))" in lowered
    assert "y = y.at[idx].max(np.astype(x, y.dtype))" in lowered
    assert "rows[0] = y" in lowered
    assert "y = y.at[idx].subtract(2)" in lowered
    assert "z = y.at[np.s_[:, 0]].add(np.astype(x, y.dtype))" in lowered  # batched code's expression form
    # (alias15: the walrus kept, its name the dtype the value is cast to; it was
    # `np.repeat(...).at[idx].add(x)`, uncast: a float64 value into float32 warned)
    assert "w = (t := np.repeat(x[None], 3, axis=0)).at[idx].add(np.astype(x, t.dtype))" \
        in lowered
    with pytest.raises(LoweringError):
        lower_inplace("def f(a):\n    a.b[0] = 1\n")
    fused = lower_inplace(text + "    for i in range(3):\n        y[i:] += x\n",
                          fuse_slices=True)
    assert ("y = y + np.zeros_like(y).at[1:].set(np.astype(x[:-1], y.dtype))  # kept"
            in fused)
    assert "y = y.at[idx].subtract(2)" in fused  # no slice: in place
    assert "        y = y.at[i:].add(np.astype(x, y.dtype))" in fused  # inside a loop: in place


def test_lowered_writes_run_like_numpy() -> None:
    from s2s.backends.lower import lower_inplace

    import s2s.backends.jax_numpy as jnp_np

    text = textwrap.dedent("""\
        def f(x, idx):
            y = np.zeros_like(x)
            y[1:] += x[:-1] * 2
            y[:, 0] = x[:, 1]
            y[:, 1:] -= x[:, :2]
            for i in range(2):
                y[i, :] += x[i + 1]
            y[0][1] = 3.0
            np.add.at(y, idx, x[0])
            y[rows] *= 0.5
            return y
    """)
    x = np.arange(12.0).reshape(4, 3)
    idx = np.array([0, 2, 2])  # np.add.at accumulates repeated indices, as .at[].add
    rows = np.array([3, 1])  # an augmented write through distinct indices
    ns_np: dict = {"np": np}
    exec(text, ns_np)
    ns_np["rows"] = rows
    for fuse in (False, True):
        ns_jax: dict = {"np": jnp_np, "rows": rows}
        exec(lower_inplace(text, fuse_slices=fuse), ns_jax)
        np.testing.assert_allclose(jax.jit(ns_jax["f"])(x, idx), ns_np["f"](x, idx))


def test_jax_numpy_leaves_host_constants_to_numpy() -> None:
    import s2s.backends.jax_numpy as jnp_np

    assert type(jnp_np.atleast_1d((0, 2))) is np.ndarray
    assert type(jnp_np.argsort([2, 1])) is np.ndarray
    assert isinstance(jnp_np.zeros(3), jax.Array)  # constructors build JAX arrays
    seen = []

    @jax.jit
    def f(x):
        seen.append(type(jnp_np.sum(x)))
        seen.append(type(jnp_np.argsort((2, 0, 1))))
        return x

    f(np.ones(2))
    assert issubclass(seen[0], jax.core.Tracer) and seen[1] is np.ndarray
    assert jnp_np.linalg.inv is not np.linalg.inv
    assert jnp_np.float64 is jnp.float64 and jnp_np.pi == np.pi


# ---- the runtime helpers, rebuilt on JAX ------------------------------------------------


def _runtime_rows():
    import rule_rows_runtime

    return rule_rows_runtime.ROWS


@pytest.mark.parametrize("row", _runtime_rows() if HAVE_JAX else [],
                         ids=lambda r: r.id)
def test_runtime_helper_on_jax_matches_numpy(row) -> None:
    """Each helper of s2s/runtime.py, run by the JAX runtime under jax.jit (arrays
    traced, other arguments static), against the NumPy runtime."""
    from rule_table import rng_for

    from s2s import runtime
    from s2s.backends import jax_runtime

    r = rng_for(row.id)
    args = [draw(r) for draw in row.args]
    traced = [i for i, a in enumerate(args)
              if isinstance(a, (np.ndarray, list)) and not (
                  isinstance(a, np.ndarray) and a.dtype == object)]

    def call(*arrays):
        full = list(args)
        for i, a in zip(traced, arrays):
            full[i] = a
        return getattr(jax_runtime, row.prim)(*full, **row.params)

    expected = getattr(runtime, row.prim)(*args, **row.params)
    got = jax.jit(call)(*[args[i] for i in traced])
    for g, e in zip(leaves(got), leaves(expected)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-10, atol=1e-12)


def test_runtime_on_jax_is_runtime_source_lowered() -> None:
    import inspect

    from s2s import runtime
    from s2s.backends import jax_runtime

    assert set(jax_runtime.__all__) == set(runtime.__all__)
    assert "bar = bar.ravel().at[" in jax_runtime.SOURCE  # the einsum-view write
    assert "out = out.at[s].add(" in jax_runtime.SOURCE
    # SciPy's helpers are runtime_scipy.py's (re-exported by runtime), lowered apart
    from s2s.backends import jax_runtime_scipy

    assert "from jax.scipy import special" in jax_runtime_scipy.SOURCE
    # every line that is not a lowered write is runtime.py's own
    numpy_lines = set(inspect.getsource(runtime).splitlines())
    changed = [line for line in jax_runtime.SOURCE.splitlines() if line not in numpy_lines]
    assert all(".at[" in line or "jax" in line for line in changed), changed


# ---- several devices -------------------------------------------------------------------


SHARDED = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    import jax, numpy as np, s2s
    jax.config.update("jax_enable_x64", True)
    import corpus_fns as F
    from jax.sharding import NamedSharding
    assert jax.device_count() == 4, jax.devices()
    r = np.random.default_rng(0)
    ws, x, y = r.normal(size=(8, 3)), r.normal(size=(5, 3)), r.normal(size=5)
    v = s2s.vmap(s2s.grad(F.loss), in_axes=(0, None, None))
    single = s2s.jit(v, backend="jax")(ws, x, y)
    sharded_fn = s2s.jit(v, backend="jax", shard_batch=True)
    sharded = sharded_fn(ws, x, y)
    np.testing.assert_allclose(np.asarray(sharded), np.asarray(single), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(sharded), v(ws, x, y), rtol=1e-12)
    assert isinstance(sharded.sharding, NamedSharding), sharded.sharding
    assert len(sharded.sharding.device_set) == 4
    assert {{s.data.shape for s in sharded.addressable_shards}} == {{(2, 3)}}
    assert len(single.sharding.device_set) == 1
    sharded_fn(ws * 2, x, y)
    assert sharded_fn.cache_info().compilations == 1
    try:
        sharded_fn(ws[:6], x, y)
    except ValueError as err:
        assert "not a multiple of the 4 devices" in str(err)
    else:
        raise AssertionError("uneven batch accepted")
    # a jitted function's leading axis, chosen by position
    def layer(xs, w):
        return np.tanh(xs @ w)
    g = s2s.jit(layer, backend="jax", shard_batch=(0,))
    out = g(r.normal(size=(8, 3)), r.normal(size=3))
    assert len(out.sharding.device_set) == 4
    print("sharded ok")
""")


@pytest.mark.slow
def test_shard_batch_across_four_cpu_devices(tmp_path) -> None:
    code = SHARDED.format(tests=os.path.dirname(os.path.abspath(__file__)))
    done = run_script(tmp_path, code, XLA_FLAGS="--xla_force_host_platform_device_count=4")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "sharded ok" in done.stdout


# ---- the NumPy backend never writes into the caller's arrays --------------------------


def _iadd_into_tree(params, x):
    params["w"] += x  # NumPy would write into the caller's params["w"]
    x *= 2.0
    return np.sum(params["w"] * x)


def test_numpy_jit_leaves_the_callers_arrays_alone() -> None:
    import catalogue_fns as C

    x = np.array([0.5, -1.0, 2.0])
    jitted = s2s.jit(C.rebinds_argument_with_iadd)
    assert jitted(x) == pytest.approx(np.sum((np.array([0.5, -1.0, 2.0]) + 1.0) ** 2))
    np.testing.assert_array_equal(x, [0.5, -1.0, 2.0])
    w, x = np.array([1.0, 2.0]), np.array([0.25, 0.5])
    params = {"w": w}
    got = s2s.jit(_iadd_into_tree)(params, x)
    np.testing.assert_array_equal(w, [1.0, 2.0])
    np.testing.assert_array_equal(x, [0.25, 0.5])
    assert params["w"] is w
    assert got == pytest.approx(_iadd_into_tree({"w": w.copy()}, x.copy()))


def test_numpy_jit_source_shows_the_code_specialised_to_the_signature() -> None:
    """On NumPy the transform specialises its code to a signature on its second call
    with it (s2s/optimize/specialize.py); the jitted function's source is then that code."""
    g = s2s.jit(s2s.grad(F.loss))
    if not hasattr(g.fun, "specialized_source"):
        pytest.skip("the core's shape specialisation is not in this tree")
    r = np.random.default_rng(4)
    w, x, y = r.normal(size=3), r.normal(size=(5, 3)), r.normal(size=5)
    generic = s2s.grad(F.loss)(w, x, y)  # the emitted code, unspecialised
    first = g(w, x, y)
    generic_source = s2s.source(g)
    second, third = g(w, x, y), g(w + 0.5, x, y)
    specialised_source = s2s.source(g)
    assert "pred_bar = unbroadcast(pred_minus_y_bar, pred)" in generic_source
    assert "unbroadcast(" not in specialised_source.split("def loss_grad", 1)[1]
    np.testing.assert_allclose(first, generic, rtol=0, atol=0)
    np.testing.assert_allclose(second, generic, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(third, s2s.grad(F.loss)(w + 0.5, x, y), rtol=1e-13,
                               atol=1e-15)
    assert g.cache_info().compilations == 1


def test_jax_numpy_sort_takes_numpys_kind() -> None:
    """Emitted sort/argsort calls spell NumPy's ``kind="stable"`` (sort's VJP rule);
    jax.numpy spells it ``stable=True``."""
    import s2s.backends.jax_numpy as jnp_

    x = np.array([3.0, 1.0, 2.0, 1.0])
    np.testing.assert_array_equal(jnp_.argsort(jnp.asarray(x), kind="stable"),
                                  np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(jnp_.sort(jnp.asarray(x), kind="mergesort"), np.sort(x))

    def sorted_tail(x):
        return np.sum(np.sort(x)[1:] ** 2)

    got = s2s.jit(s2s.grad(sorted_tail), backend="jax")(x + np.array([0, 0, 0, 0.5]))
    np.testing.assert_allclose(got, s2s.grad(sorted_tail)(x + np.array([0, 0, 0, 0.5])))


def _unsorted_keys(params, x):
    return np.sum(np.tanh(x * params["w"]) + params["b"] ** 2)


def test_vmap_of_grad_with_dict_keys_out_of_order_under_jit() -> None:
    """jax.jit hands the traced function dicts in sorted key order: the vmapped code's
    signature key must not depend on the caller's order (NeedExample escaped)."""
    params = {"w": np.array([0.5, -1.0]), "b": np.array([0.25, 2.0])}  # not sorted
    xs = np.array([[0.1, 0.2], [0.3, -0.4], [1.0, 0.5]])
    batched = s2s.vmap(s2s.grad(_unsorted_keys), in_axes=(None, 0))
    got = s2s.jit(batched, backend="jax")(params, xs)
    expected = batched(params, xs)
    for k in params:
        np.testing.assert_allclose(got[k], expected[k], rtol=1e-12)


def test_jax_numpy_takes_numpys_spellings_of_tensordot_and_zeros_like() -> None:
    import s2s.backends.jax_numpy as jnp_

    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(
        jnp_.tensordot(jnp.asarray(a), jnp.asarray(b), axes=(range(1, 2), range(0, 1))),
        np.tensordot(a, b, axes=(range(1, 2), range(0, 1))))
    parts = [jnp.ones(3), jnp.zeros(3)]
    np.testing.assert_array_equal(jnp_.zeros_like(parts), np.zeros((2, 3)))


def twelve_steps(x):
    y = x
    for i in range(12):
        y = y * x + np.sin(y)
    return np.sum(y)


@pytest.mark.parametrize("unroll, loops", [(None, False), (True, False), (12, False),
                                           (11, True), (False, True), (0, True)])
def test_short_static_loops_unroll_for_xla(unroll, loops) -> None:
    """A loop of at most ``unroll`` iterations reaches XLA unrolled (no while loop in
    the compiled program, as for the Python loop jax.jit traces); a longer one stays a
    loop.  Either way the gradient is JAX's."""
    x = np.linspace(-0.8, 0.8, 7)
    g = s2s.jit(s2s.grad(twelve_steps), backend="jax", unroll=unroll)
    expected = jax.grad(_jax_twelve_steps)(x)
    np.testing.assert_allclose(g(x), expected, rtol=1e-12)
    hlo = g._jitted.lower(x).as_text()
    assert ("while" in hlo) is loops


def _jax_twelve_steps(x):
    y = x
    for i in range(12):
        y = y * x + jnp.sin(y)
    return jnp.sum(y)


def test_unroll_takes_a_count_or_a_bool() -> None:
    with pytest.raises(TypeError, match="unroll must be a bool or a count"):
        s2s.jit(s2s.grad(twelve_steps), backend="jax", unroll=-1)
