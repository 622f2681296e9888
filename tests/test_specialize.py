"""Shape specialization (``s2s/optimize/specialize.py``): the second call with a signature runs
code rewritten from the first call's shapes; it must give what the emitted code gives.

The oracle is the generic emitted code itself (checked against JAX by the rest of the
suite): every corpus case and every rule-table function is called twice and the two
results compared, and the specialized text must hold the output invariants.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s
from corpus import CASES
from s2s.emit.code import check_invariants
from support import HAVE_JAX, jax

from test_rules import E2E  # noqa: E402

SPECIALIZED: list[str] = []


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    if isinstance(tree, dict):
        return [x for t in tree.values() for x in _leaves(t)]
    return [tree]


def _assert_same(a, b, what: str) -> None:
    la, lb = _leaves(a), _leaves(b)
    assert len(la) == len(lb), what
    for x, y in zip(la, lb):
        assert np.shape(x) == np.shape(y), what
        assert np.result_type(x) == np.result_type(y), what
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12, err_msg=what)


def _twice(g, args, what: str) -> None:
    copies = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    first = g(*args)
    second = g(*args)  # specializes here
    third = g(*args)  # the specialized code, through the cached fast path
    _assert_same(first, second, what)
    _assert_same(first, third, what)
    for a, c in zip(args, copies):  # the caller's arrays are never written
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, c)
    text = g.specialized_source
    if text is not None:
        check_invariants(text)
        SPECIALIZED.append(what)


@pytest.mark.parametrize("case", [c for c in CASES if not c.kwargs],
                         ids=[c.name for c in CASES if not c.kwargs])
def test_corpus_second_call_matches_first(case) -> None:
    g = s2s.grad(case.fn, argnums=case.argnums, has_aux=case.has_aux)
    _twice(g, case.args(), case.name)


# a quarter of the rule functions by default, all with -m slow
RULE_CASES = [c if i % 4 == 0 else pytest.param(c, marks=pytest.mark.slow)
              for i, c in enumerate(E2E)]


@pytest.mark.parametrize("case", RULE_CASES, ids=[c.id for c in E2E])
def test_rule_functions_second_call_matches_first(case) -> None:
    g = s2s.grad(case.fn, argnums=case.argnums)
    _twice(g, case.draw(), case.id)


def test_most_straight_line_code_is_specialized() -> None:
    """The comparison above is only evidence where code was specialized: most of the
    rule functions are straight-line, so most must have been."""
    ran = [w for w in SPECIALIZED if any(w == c.id for c in E2E)]
    if len(ran) < 40:
        pytest.skip("run with the parametrized tests above (e.g. the whole file)")
    assert len(ran) > len(E2E) // 8  # over half of the quarter that runs by default


def test_fix_ups_and_seed_disappear() -> None:
    def mlp_loss(w, x, y):
        h = np.tanh(x @ w)
        return np.mean((h - y) ** 2)

    r = np.random.default_rng(0)
    args = (r.normal(size=(4, 3)), r.normal(size=(5, 4)), r.normal(size=(5, 3)))
    g = s2s.grad(mlp_loss)
    g(*args)
    assert g.specialized_source is None  # one call pays nothing
    g(*args)
    text = g.specialized_source
    for gone in ("unbroadcast(", "grad_seed(", "matmul_rhs_bar(", "broadcast_to(",
                 "np.size("):
        assert gone not in text.split("def ")[1], text
    assert "x.T.dot(" in text  # (x.T @ g, spelled as the BLAS call: s2s/optimize/dots.py)
    assert "unbroadcast(" in g.source  # the generic code keeps them


def test_new_shapes_specialize_again() -> None:
    def f(x, w):
        return np.sum(np.sin(x) * w)

    g = s2s.grad(f, argnums=(0, 1))
    for shape_x, shape_w in [((3,), (3,)), ((3,), ()), ((2, 3), (3,)), ((2, 3), (2, 1))]:
        x = np.linspace(0.1, 1.0, int(np.prod(shape_x))).reshape(shape_x)
        w = np.full(shape_w, 0.7)
        for _ in range(3):
            gx, gw = g(x, w)
            np.testing.assert_allclose(gx, np.cos(x) * w)
            assert gw.shape == np.shape(w)
            # the gradient of w sums sin(x) over the axes w was broadcast along
            full = np.broadcast_to(np.sin(x), np.broadcast_shapes(x.shape, w.shape))
            np.testing.assert_allclose(gw, s2s.runtime.unbroadcast(full, w))


def test_float32_keeps_its_dtype() -> None:
    def f(x):
        return np.sum(3.0 * np.tanh(x) ** 2)

    g = s2s.grad(f)
    x = np.linspace(-1, 1, 7, dtype=np.float32)
    a, b = g(x), g(x)
    assert a.dtype == b.dtype == np.float32
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_gradient_is_never_the_callers_array() -> None:
    def f(x, y):
        return np.sum(x * y)

    g = s2s.grad(f)
    x, y = np.ones(4), np.arange(4.0)
    for _ in range(3):
        out = g(x, y)
        assert out is not y and not np.shares_memory(out, y)
        np.testing.assert_array_equal(out, y)


def test_a_gradient_pytree_never_holds_the_callers_arrays() -> None:
    def f(p, x):
        return np.sum(p["a"] * x) + np.sum(p["b"] ** 2)

    g = s2s.grad(f)
    p, x = {"a": np.ones(3), "b": np.arange(3.0)}, np.array([1.0, 2.0, 3.0])
    for _ in range(3):
        out = g(p, x)
        assert not np.shares_memory(out["a"], x)
        np.testing.assert_array_equal(out["a"], x)
        np.testing.assert_array_equal(out["b"], 2 * p["b"])
        out["a"][0] = 99.0  # the caller's x is not touched
        assert x[0] == 1.0


@pytest.mark.parametrize("form", ["argnums", "pytree", "value_and_grad"])
def test_two_gradients_of_one_cotangent_are_two_arrays(form) -> None:
    """``sum(sin(a + b))`` has one cotangent for ``a`` and ``b``; the emitted code (and
    the specialized code) returned that one array twice, so a caller writing into one
    gradient changed the other.  JAX's arrays are immutable; s2s's gradients are each
    their own array at every call."""
    a, b = np.linspace(0.1, 1.0, 4), np.linspace(-1.0, 0.5, 4)
    if form == "pytree":
        g = s2s.grad(lambda p: np.sum(np.sin(p["a"] + p["b"])))
        call = lambda: tuple(g({"a": a, "b": b}).values())  # noqa: E731
    elif form == "argnums":
        g = s2s.grad(lambda x, y: np.sum(np.sin(x + y)), argnums=(0, 1))
        call = lambda: g(a, b)  # noqa: E731
    else:
        g = s2s.value_and_grad(lambda x, y: np.sum(np.sin(x + y)), argnums=(0, 1))
        call = lambda: g(a, b)[1]  # noqa: E731
    for _ in range(3):  # the emitted code, the specializing call, the specialized code
        ga, gb = call()
        assert not np.shares_memory(ga, gb)
        ga[0] = 99.0
        np.testing.assert_allclose(gb, np.cos(a + b), rtol=1e-15)


def test_scalar_index_add_at_becomes_augmented_assignment() -> None:
    def f(z, label):
        return -(z - np.log(np.sum(np.exp(z))))[label]

    g = s2s.grad(f)
    z = np.array([0.5, -1.0, 2.0])
    first = g(z, 1)
    second = g(z, 1)
    np.testing.assert_allclose(first, second)
    assert "np.add.at" not in g.specialized_source
    third = g(z, 2)  # another integer value is another signature
    soft = np.exp(z) / np.sum(np.exp(z))
    np.testing.assert_allclose(third, soft - np.eye(3)[2])


SCALE = np.ones(3)


def test_a_global_array_that_changes_shape_is_not_stale() -> None:
    global SCALE

    def f(x):
        return np.sum(x * SCALE)

    g = s2s.grad(f)
    x = np.arange(3.0)
    g(x), g(x)
    SCALE = np.ones((2, 3)) * 2.0  # same object kind, new shape: broadcasting changes
    try:
        np.testing.assert_allclose(g(x), np.full(3, 4.0))
        np.testing.assert_allclose(g(x), np.full(3, 4.0))
    finally:
        SCALE = np.ones(3)


def test_branches_are_not_specialized() -> None:
    def f(x):
        if np.sum(x) > 0:
            return np.sum(x ** 2)
        return np.sum(np.sin(x))

    g = s2s.grad(f)
    for x in (np.ones(3), -np.ones(3), np.ones(3)):
        g(x)
    assert g.specialized_source is None


def test_turned_off(monkeypatch) -> None:
    from s2s.api import signatures

    monkeypatch.setattr(signatures, "OPTIMIZE", False)

    def f(x):
        return np.sum(np.tanh(x))

    g = s2s.grad(f)
    x = np.ones(3)
    g(x), g(x), g(x)
    assert g.specialized_source is None


def test_the_max_subtracted_before_a_softmax_gets_no_adjoint_work() -> None:
    """Its cotangent is zero in exact arithmetic (the e-graph proves it), so the
    specialized code drops the max's backward (JAX: stop_gradient in logsumexp)."""

    def xent(logits, label):
        shifted = logits - np.max(logits)
        logp = shifted - np.log(np.sum(np.exp(shifted)))
        return -logp[label]

    g = s2s.grad(xent)
    z = np.array([0.3, -1.2, 2.0, 0.7])
    first, second = g(z, 2), g(z, 2)
    soft = np.exp(z - z.max()) / np.sum(np.exp(z - z.max()))
    np.testing.assert_allclose(first, soft - np.eye(4)[2], atol=1e-15)
    np.testing.assert_allclose(second, first, atol=1e-15)
    text = g.specialized_source
    assert "winners" in g.source and "winners" not in text, text
    # and the one-hot cotangent of logp[label] is accumulated, not materialized
    assert "zeros" not in text and "[label] +=" in text, text


def test_a_one_hot_cotangent_read_twice_stays_materialized() -> None:
    def f(z, i):
        p = z[i]
        return p * np.sum(z) + np.sum(np.sin(z))

    g = s2s.grad(f)
    z = np.array([0.5, -1.0, 2.0])
    first, second = g(z, 1), g(z, 1)
    np.testing.assert_allclose(first, z[1] + np.eye(3)[1] * np.sum(z) + np.cos(z))
    np.testing.assert_allclose(second, first, atol=1e-15)


def test_a_max_whose_cotangent_is_not_zero_keeps_its_backward() -> None:
    def f(x):
        m = np.max(x)
        return np.sum(np.exp(x - m)) + 3.0 * m

    g = s2s.grad(f)
    x = np.array([0.1, 0.9, -0.4])
    first, second = g(x), g(x)
    expected = np.exp(x - x.max())
    expected[1] += 3.0 - np.sum(np.exp(x - x.max()))
    np.testing.assert_allclose(first, expected, atol=1e-14)
    np.testing.assert_allclose(second, expected, atol=1e-14)
    assert "winners" in g.specialized_source


def _random_program_check(n: int) -> None:
    from hypothesis import HealthCheck, Phase, given, seed, settings

    from fuzz_programs import load, programs

    @seed(20261130)
    @settings(max_examples=n, deadline=None, database=None,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def run(source):
        f = load(source)[0]
        r = np.random.default_rng(len(source))
        x, y = r.normal(size=4), r.normal(size=4)
        g = s2s.grad(f, argnums=(0, 1))
        _twice(g, (x, y), source)

    run()


def test_random_programs_second_call_matches_first() -> None:
    """Random programs of the differential fuzzer (ifs, loops, the primitive library)."""
    _random_program_check(10)


@pytest.mark.slow
def test_random_programs_second_call_matches_first_long() -> None:
    _random_program_check(400)


VMAP_CASES = [c for c in CASES if not c.kwargs and isinstance(c.argnums, int)]


@pytest.mark.parametrize("case", VMAP_CASES, ids=[c.name for c in VMAP_CASES])
def test_vmap_of_grad_second_call_matches_first(case) -> None:
    """Per-example gradients: the batched code specialized to the batch's shapes."""
    args = case.args()
    if not all(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in args):
        pytest.skip("plain float arrays only (the batched fast path)")
    r = np.random.default_rng(1)
    batched = tuple(np.stack([a + 0.01 * r.normal(size=a.shape) for _ in range(3)])
                    for a in args)
    v = s2s.vmap(s2s.grad(case.fn, argnums=case.argnums, has_aux=case.has_aux))
    try:
        first = v(*batched)
    except Exception as exc:  # noqa: BLE001 - vmap itself is tests/test_vmap.py's
        pytest.skip(f"the first call fails ({type(exc).__name__}): tests/test_vmap.py")
    copies = [np.copy(b) for b in batched]
    second, third = v(*batched), v(*batched)
    _assert_same(first, second, case.name)
    _assert_same(first, third, case.name)
    for b, c in zip(batched, copies):
        np.testing.assert_array_equal(b, c)
    if v.specialized_source is not None:
        check_invariants(v.specialized_source)


def _long_function(n: int, where):
    import importlib.util
    import sys

    forms = ["np.sin(a) * y", "a * 0.5 + y", "np.tanh(a + y)", "a * a * 0.1 + y"]
    lines = ["import numpy as np", "", "", "def f(x, y):", "    a = x"]
    lines += [f"    a = {forms[i % 4]}" for i in range(n)] + ["    return np.sum(a)"]
    path = where / f"long_{n}.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(f"long_specialize_{n}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.f


@pytest.mark.slow
def test_the_second_call_does_work_linear_in_the_function(tmp_path, monkeypatch) -> None:
    """Specializing visited every statement once per statement (the inliner rescanned
    the function after each inlining, the CSE table per assignment): 400 lines took
    70 s.  Counted as AST fields visited, not as time: three times the lines, about
    four times the work (4.0 on 2026-12-06; a quadratic pass would be nine).  (100 and
    400 lines until the default suite passed five minutes on CI; 100 and 300 until it
    reached 257 s there.)"""
    import ast

    from s2s.optimize import specialize as S

    real = ast.iter_fields
    visits = [0]

    def counted(node):
        visits[0] += 1
        return real(node)

    x, y = np.ones(3), np.ones(3)
    work = {}
    for n in (60, 180):
        g = s2s.grad(_long_function(n, tmp_path))
        want = g(x, y)
        visits[0] = 0
        monkeypatch.setattr(ast, "iter_fields", counted)
        got = g(x, y)  # specializes
        monkeypatch.setattr(ast, "iter_fields", real)
        work[n] = visits[0]
        assert g.specialized_source is not None
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert work[180] < 5.5 * work[60], work


def test_past_the_size_limit_the_code_runs_as_emitted(tmp_path, monkeypatch) -> None:
    from s2s.optimize import specialize as S

    monkeypatch.setattr(S, "MAX_STATEMENTS", 100)
    g = s2s.grad(_long_function(40, tmp_path))
    x, y = np.ones(3), np.ones(3)
    first = g(x, y)
    np.testing.assert_allclose(g(x, y), first)
    assert g.specialized_source is None


@pytest.mark.slow
def test_without_egglog_the_specializer_still_gives_the_gradient(tmp_path) -> None:
    """egglog is the optional [egraph] extra: a plain install has no e-graph passes, and
    the second and third calls (specialized) still equal the closed-form gradient."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import sys
        sys.modules["egglog"] = None  # import egglog raises ImportError
        import numpy as np
        import s2s

        def xent(logits, label):
            shifted = logits - np.max(logits)
            logp = shifted - np.log(np.sum(np.exp(shifted)))
            return -logp[label]

        g = s2s.grad(xent)
        z = np.array([0.3, -1.2, 2.0, 0.7])
        soft = np.exp(z - z.max()) / np.sum(np.exp(z - z.max()))
        for _ in range(3):
            np.testing.assert_allclose(g(z, 2), soft - np.eye(4)[2], atol=1e-15)
        assert g.specialized_source is not None
        assert "egglog" not in sys.modules or sys.modules["egglog"] is None
        print("ok")
    """)
    (tmp_path / "no_egglog.py").write_text(script)
    out = subprocess.run([sys.executable, str(tmp_path / "no_egglog.py")],
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


# ---- specializing in the background (the default outside the suite) -------------------


@pytest.fixture
def background(monkeypatch):
    if not HAVE_JAX:
        pytest.skip("JAX is the oracle")
    from s2s.api import signatures

    monkeypatch.setattr(signatures, "IN_BACKGROUND", True)


def _mlp_loss(w, b, x, y):
    h = np.tanh(x @ w + b)
    p = 1 / (1 + np.exp(-h.sum(axis=1)))
    return np.mean((p - y) ** 2) + 0.01 * np.sum(w**2)


def _mlp_args(rng, dtype=np.float64):
    return tuple(a.astype(dtype) for a in (rng.normal(size=(5, 4)), rng.normal(size=4),
                                           rng.normal(size=(16, 5)), rng.random(16)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_background_specializing_gives_the_gradient_at_every_call(background, dtype) -> None:
    """Calls 1 to 10, with new values each time and the caller writing into its arrays
    as soon as a call returns: every gradient equals JAX's, before and after the
    thread's code takes over."""
    jgrad = jax.jit(jax.grad(jax_twin_mlp()))
    g = s2s.grad(_mlp_loss)
    rng = np.random.default_rng(0)
    args = _mlp_args(rng, dtype)
    for call in range(10):
        got = g(*args)
        want = np.asarray(jgrad(*args))
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-10,
                                   atol=1e-6 if dtype == np.float32 else 1e-12)
        assert got.dtype == dtype
        for a, new in zip(args, _mlp_args(rng, dtype)):
            a[...] = new  # in place: the specializing thread works on its own copies
        if call == 3:
            g.wait_specialized()
            assert g.specialized_source is not None


def jax_twin_mlp():
    import jax.numpy as jnp

    def loss(w, b, x, y):
        h = jnp.tanh(x @ w + b)
        p = 1 / (1 + jnp.exp(-h.sum(axis=1)))
        return jnp.mean((p - y) ** 2) + 0.01 * jnp.sum(w**2)

    return loss


def test_the_second_call_does_not_wait_for_the_specializer(background, monkeypatch) -> None:
    """The call that starts specializing returns the emitted code's result while the
    thread is still at work (the thread is held until the call has returned)."""
    import threading

    from s2s.optimize import specialize as spec_module

    release = threading.Event()
    real = spec_module.specialize

    def held(*a, **k):
        assert release.wait(30)
        return real(*a, **k)

    monkeypatch.setattr(spec_module, "specialize", held)
    g = s2s.grad(_mlp_loss)
    args = _mlp_args(np.random.default_rng(1))
    first = g(*args)
    second = g(*args)  # returns although the specializer is held
    third = g(*args)
    assert g._by_signature and all(e.text is None for e in g._by_signature.values())
    release.set()
    g.wait_specialized()
    assert g.specialized_source is not None
    for out in (second, third, g(*args)):
        np.testing.assert_allclose(out, first, rtol=1e-12, atol=1e-15)


def test_a_background_specializer_failure_is_reported_by_the_next_call(background,
                                                                       monkeypatch) -> None:
    from s2s.optimize import specialize as spec_module

    def broken(*a, **k):
        raise ZeroDivisionError("a bug in the specializer")

    monkeypatch.setattr(spec_module, "specialize", broken)
    g = s2s.grad(_mlp_loss)
    args = _mlp_args(np.random.default_rng(2))
    g(*args), g(*args)
    with pytest.raises(RuntimeError, match="s2s.specialize failed: ZeroDivisionError"):
        g(*args)
    np.testing.assert_allclose(g(*args), np.asarray(jax.grad(jax_twin_mlp())(*args)),
                               rtol=1e-10)  # the emitted code serves the calls
