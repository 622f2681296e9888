"""The specializer's rewrite rules (s2s/optimize/rules.py, docs/optimizer-rules.md):
each rule's two sides agree on random values of every shape case its guard admits
(float64 and float32, NaN and inf, size-0 and size-1 axes), and each rule with a
witness program is what the specializer does to it: the left side's spelling is in
the generic code, gone from the specialized code, and back with the rule's pass off
(``S2S_PASSES_OFF``), the values unchanged (the generic code's, which the rest of the
suite checks against JAX; with -m slow, against JAX here too).  Also the composite
fact the issue asks for: a sum over an axis of ``a - sum(a) * softmax`` is zero
whatever ``a`` is built from."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import optimizer_rules_fns as F
import pytest

import s2s
from s2s import runtime
from s2s.optimize.rules import RULES
from s2s.optimize.specialize import PASSES

ROOT = Path(__file__).parent.parent


def add_at(x, i, v):
    np.add.at(x, i, v)
    return x


def iadd(x, i, v):
    x[i] += v
    return x


_EYE_3 = np.eye(3)  # (a module constant of the specialized code: read-only)
_EYE_3.flags.writeable = False


def _namespace(case: dict, dtype, rng, special: bool) -> dict:
    ns = {"np": np, "unbroadcast": runtime.unbroadcast, "grad_seed": runtime.grad_seed,
          "matmul_rhs_bar": runtime.matmul_rhs_bar, "matmul_lhs_bar": runtime.matmul_lhs_bar,
          "add_at": add_at, "iadd": iadd, "rhs_columns": runtime.rhs_columns,
          "special_logsumexp": runtime.special_logsumexp,
          "special_softmax": runtime.special_softmax, "EYE_3": _EYE_3}
    for name, shape in case.items():
        if shape in ("index", "labels", "row labels"):
            continue
        if shape[:1] == ("ties",):  # a few numbers, so that operands tie
            shape = shape[1]
            x = rng.choice([-1.0, -0.0, 0.0, 1.0, *((np.inf, -np.inf) if special else ())],
                           size=shape)
        else:
            x = (rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape))
        if special and x.size > 1:
            flat = x.reshape(-1)
            flat[rng.integers(0, flat.size, 2)] = rng.choice([np.nan, np.inf, -np.inf], 2)
        ns[name] = np.asarray(x, dtype=dtype)
    for name, shape in case.items():
        if shape == "index":
            ns[name] = int(rng.integers(0, ns["x"].shape[0]))
        if shape == "labels":  # (repeated, and negative: an element picked twice)
            n = ns["x"].shape[0]
            ns[name] = rng.integers(-n, n, size=n + 2)
        if shape == "row labels":  # one column of each row (negative ones too)
            n, m = ns["x"].shape
            ns[name] = rng.integers(-m, m, size=n)
    return ns


def _eval(text: str, ns: dict, dtype) -> object:
    text = text.replace("np.float64", f"np.{np.dtype(dtype).name}")
    with np.errstate(all="ignore"):
        return eval(text, {k: (v.copy() if isinstance(v, np.ndarray) else v)
                           for k, v in ns.items()})


@pytest.mark.every_case
@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_both_sides_agree_where_the_guard_holds(rule, dtype) -> None:
    rng = np.random.default_rng(3)
    for case in rule.shapes:
        for special in (False, True):
            ns = _namespace(case, dtype, rng, special)
            lhs, rhs = _eval(rule.lhs, ns, dtype), _eval(rule.rhs, ns, dtype)
            for a, b in zip(*(x if isinstance(x, tuple) else (x,) for x in (lhs, rhs))):
                a, b = np.asarray(a), np.asarray(b)
                if rule.narrows:  # (the left side float64, the right in the operands')
                    assert a.dtype == np.float64 and b.dtype == dtype, (rule.name, case)
                    a = a.astype(dtype)
                assert a.shape == b.shape and a.dtype == b.dtype, (rule.name, case)
                if rule.exact:
                    np.testing.assert_array_equal(a, b, err_msg=rule.name)
                    continue
                finite = np.isfinite(a) & np.isfinite(b)
                # (the same elements overflow or meet a NaN on both sides)
                np.testing.assert_array_equal(np.isfinite(a), np.isfinite(b), rule.name)
                tol = 1e-4 if dtype == np.float32 else 1e-12
                np.testing.assert_allclose(np.where(finite, a, 0), np.where(finite, b, 0),
                                           rtol=tol, atol=tol, err_msg=rule.name)
                if not special:
                    assert finite.all(), rule.name


R = np.random.default_rng(11)
ARGS = {
    "same_shape_product": (R.normal(size=(2, 3)), R.normal(size=(2, 3))),
    "row_bias": (R.normal(size=(4, 3)), R.normal(size=(1, 3))),
    "scaled_sum": (R.normal(size=5),), "scaled_by": (R.normal(size=5), np.array(0.7)),
    "onehot_mean": (R.normal(size=(4, 3)), np.eye(3)[[0, 1, 2, 1]]),
    "mean_square": (R.normal(size=(2, 3)),), "picked": (R.normal(size=5), 2),
    "mlp": (R.normal(size=(4, 3)), R.normal(size=(5, 4)), R.normal(size=(5, 3))),
    "mlp2": (R.normal(size=(5, 4)), R.normal(size=(4, 3))),
    "matvec": (R.normal(size=(4, 5)), R.normal(size=5)),
    "vecmat": (R.normal(size=5), R.normal(size=(5, 3))),
    "dot": (R.normal(size=4), R.normal(size=4)),
    "logdet": (R.normal(size=(3, 3)),),
    "picked_rows": (R.normal(size=(4, 3)), np.array([0, 2, 1, 2])),
    "row_mean": (R.normal(size=(4, 3)),),
    "scaled_rows": (R.normal(size=(3, 16)),),
    "relu": (np.array([[-1.0, 0.0, 2.0], [-0.0, 3.0, -2.0]]), R.normal(size=(2, 3))),
    "relu_maximum": (np.array([1.0, -0.0, 2.0, -3.0]), np.array([1.0, 0.0, -1.0, 5.0])),
    "relu_minimum": (np.array([1.0, -0.0, 2.0, -3.0]), np.array([1.0, 0.0, -1.0, 5.0])),
    "tanh_energy": (R.normal(size=5),),
    "var_scaled": (R.normal(size=(3, 4)),),
    "gp_nll": (np.float64(0.7), np.sort(R.uniform(0, 3, 8)), R.normal(size=8)),
    "row_sums": (R.normal(size=(4, 3)),), "col_means": (R.normal(size=(4, 3)),),
    "centered": (R.normal(size=3), R.normal(size=5)),
}
ARGNUMS = {"row_bias": (0, 1), "matvec": (0, 1), "vecmat": (0, 1), "dot": (0, 1),
           "relu_maximum": (0, 1), "relu_minimum": (0, 1)}
WITNESSED = [r for r in RULES if r.witness]
DEFAULT = {"an unbroadcast is the sums it does", "a dot product's cotangents",
           "a scalar spread by expand_dims folds into a scalar",
           "a mean's seed is a scalar times the cotangent",
           "a complex value with a zero imaginary part, read for its real part, is real",
           "a maximum operand's share is one comparison of the operands, a number",
           "twice a floating name is its sum with itself",
           "a sum along a matrix's rows is a product with ones"}


def _specialized(name: str, off: str, monkeypatch) -> tuple[str, list, str]:
    monkeypatch.setenv("S2S_PASSES_OFF", off)
    g = s2s.grad(getattr(F, name), argnums=ARGNUMS.get(name, 0))
    results = [g(*ARGS[name]) for _ in range(3)]
    return g.source, results, g.specialized_source


@pytest.mark.every_case
@pytest.mark.parametrize("rule", [r if r.name in DEFAULT else pytest.param(
    r, marks=pytest.mark.slow) for r in WITNESSED], ids=lambda r: r.name)
@pytest.mark.slow
def test_the_specializer_applies_the_rule_to_its_witness(rule, monkeypatch) -> None:
    generic, results, text = _specialized(rule.witness, "", monkeypatch)
    body = text.split("def ", 1)[1]
    assert rule.gone in generic.split("def ", 1)[1], generic
    assert rule.gone not in body, text
    _, off_results, off_text = _specialized(rule.witness, rule.pass_, monkeypatch)
    assert rule.gone in off_text.split("def ", 1)[1], off_text
    for got in (*results, *off_results):
        for a, b in zip(*(x if isinstance(x, tuple) else (x,) for x in (got, results[0]))):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ARGS))
def test_the_witnesses_gradients_are_jaxs(name) -> None:
    jax = pytest.importorskip("jax")
    from support import jax_twin

    twin = jax_twin(F)
    want = jax.grad(getattr(twin, name), argnums=ARGNUMS.get(name, 0))(*ARGS[name])
    g = s2s.grad(getattr(F, name), argnums=ARGNUMS.get(name, 0))
    for _ in range(3):
        got = g(*ARGS[name])
        for a, b in zip(*(x if isinstance(x, tuple) else (x,) for x in (got, want))):
            np.testing.assert_allclose(a, np.asarray(b), rtol=1e-10, atol=1e-12)


def test_every_rule_names_a_pass_and_a_witness_that_exists() -> None:
    for rule in RULES:
        assert rule.pass_ in PASSES, rule.name
        assert not rule.witness or (hasattr(F, rule.witness) and rule.gone), rule.name
    assert len({r.name for r in RULES}) == len(RULES)


@pytest.mark.parametrize("built", ["onehot", "labels_mean", "picked", "smoothed", "random"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_sum_over_an_axis_of_a_minus_its_sum_times_softmax_is_zero(built, dtype) -> None:
    """The fact the zero proof establishes for the max subtracted before a softmax:
    the cotangent of the row max, -sum(a - sum(a) * softmax, axis), vanishes for any
    cotangent ``a`` of the log-probabilities (checked to rounding)."""
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(6, 4)).astype(dtype) * 3
    labels = np.eye(4, dtype=dtype)[rng.integers(0, 4, 6)]
    a = {"onehot": -labels / 6, "labels_mean": -labels.mean(axis=0, keepdims=True) * labels,
         "picked": -np.eye(4, dtype=dtype)[[1] * 6],
         "smoothed": -(0.9 * labels + 0.1 / 4) / 6,
         "random": rng.normal(size=(6, 4)).astype(dtype)}[built]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    softmax = e / e.sum(axis=1, keepdims=True)
    total = np.sum(a - np.sum(a, axis=1, keepdims=True) * softmax, axis=1)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(total, 0.0, atol=tol * (1 + np.abs(a).sum()))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fn", ["picked_sub", "picked_twice"])
def test_a_one_hot_cotangent_sums_to_its_value(fn, dtype) -> None:
    """``z = np.zeros(s); z[i] += v`` (the cotangent of ``x[i]``) sums to ``v`` whatever
    ``i`` is: with it the zero proof drops the max's backward when the label's term is
    subtracted from the log-sum-exp (``-(shifted[label] - lse)``), as for ``-logp[label]``,
    and keeps it where the terms do not cancel (``lse - x[i] - 0.5 x[j]``).  Against
    the softmax formula, at the 1st, 2nd and 3rd call, with ties for the max (where the
    max's backward splits its cotangent) and labels at the max."""
    g = s2s.grad(getattr(F, fn))
    for logits, i, j in [(np.array([0.5, 2.0, 2.0, -1.0]), 1, 3),
                         (np.array([3.0, 1.0, 3.0, 3.0]), 2, 2),
                         (np.array([-1.0, 0.0, 4.0, 1.0]), 0, 2)]:
        logits = logits.astype(dtype)
        args = (logits, i) if fn == "picked_sub" else (logits, i, j)
        x = logits.astype(np.float64)
        e = np.exp(x - x.max())
        want = e / e.sum()
        want[i] -= 1.0
        if fn == "picked_twice":  # lse - x[i] - 0.5 x[j] + 0.5 max(x): the max counts
            want[j] -= 0.5
            winners = x == x.max()
            want += 0.5 * winners / winners.sum()
        for _ in range(3):
            got = g(*args)
            assert got.dtype == dtype
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                       atol=1e-6 if dtype == np.float32 else 1e-14)
    body = g.specialized_source.split("def ", 1)[1]
    # the max's cotangent is -sum(cotangent of shifted): 1 - 1 = 0 for one label, but
    # 1 - 1.5 for two terms: there its backward must stay
    assert ("winners" in body) == (fn == "picked_twice"), body


def test_a_buffer_written_twice_is_no_one_hot() -> None:
    """Two writes into one zeros buffer (``z[i] += v; z[j] += w``): the fact is about
    the buffer after one write only, so nothing past the second is proven from it."""
    import ast

    from s2s.optimize.zero import zero_cotangents

    text = (
        "def f(x, i, j):\n"
        "    z = np.zeros((4,), dtype=np.float64)\n"
        "    z[i] += 1.0\n"
        "    z[j] += 1.0\n"
        "    s_bar = z.sum() - 1.0\n"
        "    t_bar = z.sum() - 2.0\n")
    fn = ast.parse(text).body[0]
    floats = {"z", "s_bar", "t_bar"}

    def fact(node):
        if isinstance(node, ast.Name) and node.id in ("i", "j"):
            return ((), np.dtype(np.int64))
        if isinstance(node, ast.Name) and node.id in floats:
            return ((4,) if node.id == "z" else (), np.dtype(np.float64))
        if isinstance(node, ast.Constant):
            return ((), np.dtype(np.float64))
        if isinstance(node, ast.Call):
            return ((4,), np.dtype(np.float64)) if "zeros" in ast.dump(node) else \
                ((), np.dtype(np.float64))
        if isinstance(node, ast.BinOp):
            return ((), np.dtype(np.float64))
        return None

    # (the sum is 2.0 whether i == j or not: s_bar is 1.0, never zero)
    assert ("s_bar", 1) not in zero_cotangents(fn, fact, {"z"})
    once = ast.parse(text.replace("    z[j] += 1.0\n", "")).body[0]
    assert ("s_bar", 1) in zero_cotangents(once, fact, {"z"})  # (one write: it is)


def test_the_page_is_the_tables() -> None:
    """docs/optimizer-rules.md is `python tools/optimizer_rules_doc.py`'s output."""
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "optimizer_rules_doc.py"),
                           "--check"], capture_output=True, text=True)
    assert done.returncode == 0, "run: python tools/optimizer_rules_doc.py"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_rules_a_nodes_facts_settle_apply_in_loop_bodies(dtype, monkeypatch) -> None:
    """In a loop's body (a sigmoid gate over a Python loop): the matrix-vector
    cotangents are spelled for their ranks and the cotangent's two negations cancel;
    the values are JAX's at calls 1-3 (float64 and float32), and with the passes off
    the helpers and the negations are back."""
    jax = pytest.importorskip("jax")
    from support import jax_twin

    rng = np.random.default_rng(2)
    w, xs = rng.normal(size=(4, 3)).astype(dtype), rng.normal(size=(3, 4)).astype(dtype)
    want = jax.grad(jax_twin(F).gates)(w, xs)
    for off, present in (("", False), ("matmul,signs", True)):
        monkeypatch.setenv("S2S_PASSES_OFF", off)
        g = s2s.grad(F.gates)
        for _ in range(3):
            got = g(w, xs)
            assert got.dtype == dtype
            np.testing.assert_allclose(got, np.asarray(want), rtol=1e-5 if dtype ==
                                       np.float32 else 1e-12, atol=1e-6)
        body = g.specialized_source.split("def ", 1)[1]
        assert ("matmul_rhs_bar(" in body) is present, body
        assert ("-(-" in body) is present, body


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_row_sum_of_one_pick_per_row_is_not_done(dtype, monkeypatch) -> None:
    """Integer-label cross-entropy (``logp[np.arange(n), y]``): the sum over each row
    of the picked cotangent is the picked value, so the specialized code does not sum
    it (and does with the accumulate pass off); JAX's values at calls 1-3 with labels
    repeated across rows and negative (wrapping), float64 and float32."""
    jax = pytest.importorskip("jax")
    from support import jax_twin

    rng = np.random.default_rng(4)
    logits = (rng.normal(size=(6, 4)) * 3).astype(dtype)
    for y in (np.array([0, 3, 3, -1, 2, -4]), np.array([1, 1, 1, 1, 1, 1])):
        want = jax.grad(jax_twin(F).picked_rows)(logits, y)
        for off, summed in (("products", False), ("accumulate,products", True)):
            monkeypatch.setenv("S2S_PASSES_OFF", off)
            g = s2s.grad(F.picked_rows)
            for _ in range(3):
                got = g(logits, y)
                assert got.dtype == dtype
                np.testing.assert_allclose(got, np.asarray(want), rtol=1e-5 if dtype ==
                                           np.float32 else 1e-12, atol=1e-6)
            body = g.specialized_source.split("def ", 1)[1]
            assert ("logp_bar.sum(" in body) is summed, body


def _mlp_loss(w1, w2, x, y):  # one example
    h = np.tanh(x @ w1)
    return 0.5 * np.sum((h @ w2 - y) ** 2)


@pytest.mark.slow
def test_a_vmapped_gradients_matrix_vector_products_are_one_product() -> None:
    """Per-example gradients of an MLP: the hidden layer's cotangent is one matrix
    product (``g @ w2.T``), not a stack of matrix-vector products; the values are the
    hand-written per-example gradients', 1st, 3rd and 10th call."""
    rng = np.random.default_rng(15)
    w1, w2 = rng.normal(size=(5, 6)), rng.normal(size=(6, 3))
    xs, ys = rng.normal(size=(7, 5)), rng.normal(size=(7, 3))
    h = np.tanh(xs @ w1)
    r = h @ w2 - ys
    gh = (r @ w2.T) * (1.0 - h * h)
    want = (xs[:, :, None] * gh[:, None, :], h[:, :, None] * r[:, None, :])
    fn = s2s.vmap(s2s.grad(_mlp_loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))
    for k in range(10):
        got = fn(w1, w2, xs, ys)
        if k in (0, 2, 9):
            for a, b in zip(got, want):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    text = fn.specialized_source
    # (spelled .dot(w2.T) since the products pass's last spelling: a plain float product)
    assert ("@ w2.T" in text or ".dot(w2.T)" in text) and "[..., None])[..., 0]" not in text, \
        text
