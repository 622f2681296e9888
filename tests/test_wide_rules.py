"""Rewrites for code the optimizer was not tuned for, against JAX's gradients in
float64 and float32 at the 1st, 3rd and 10th call: the ``ties`` pass
(s2s/optimize/ties.py: a maximum's or minimum's share spelled with one comparison of
its operands) where the operands tie (also -0.0 against 0.0) and meet NaN and inf;
power-of-two factors and divisors positive by construction moved out of sums
(s2s/optimize/scales.py) on layer norms (a constant row: the variance 0) and a mixture
likelihood; and ``returns_fresh`` (s2s/optimize/fresh.py), which lets a call skip
looking for shared memory, on loops, aliases and writes into arrays."""

from __future__ import annotations

import numpy as np
import pytest
import wide_rules_fns as F

import s2s
from s2s.optimize.fresh import returns_fresh

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)


@pytest.fixture(scope="module")
def twin():
    from support import jax_twin

    return jax_twin(F)


def _tie_args(name: str, dtype, special: bool) -> tuple:
    r = np.random.default_rng(7)
    few = [-1.0, -0.0, 0.0, 1.0] + ([np.inf, -np.inf, np.nan] if special else [])
    if name == "relu_layer":
        x = r.choice([-1.0, 0.0, 1.0], size=(5, 3))
        w = r.choice([-1.0, 0.0, 1.0, 2.0], size=(3, 4))
        if special:
            x[0, 0] = np.nan
            w[1, 1] = np.inf
        out = (x, w)
    elif name == "number_first":
        out = (r.choice(few, size=(6,)),)
    elif name == "broadcast_maximum":
        out = (r.choice(few, size=(3, 1)), r.choice(few, size=(4,)))
    else:
        out = (r.choice(few, size=(3, 4)), r.choice(few, size=(3, 4)))
    return tuple(np.asarray(a, dtype=dtype) for a in out)


TIES = ["relu_layer", "number_first", "both_maximum", "both_minimum",
        "broadcast_maximum", "rebound_operand", "in_a_loop"]


@pytest.mark.parametrize("special", [False, True], ids=["finite", "nan-inf"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", TIES)
def test_shares_are_jaxs_where_operands_tie(name, dtype, special, twin) -> None:
    args = _tie_args(name, dtype, special)
    argnums = (0,) if name == "number_first" else (0, 1)
    want = jax.grad(getattr(twin, name), argnums=argnums)(*args)
    g = s2s.grad(getattr(F, name), argnums=argnums)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    with np.errstate(all="ignore"):
        for call in range(10):
            got = g(*args)
            if call in (0, 2, 9):
                for a, b in zip(got, want):
                    assert a.dtype == dtype and a.shape == np.shape(b)
                    np.testing.assert_allclose(a, np.asarray(b), rtol=tol, atol=tol,
                                               equal_nan=True, err_msg=f"call {call + 1}")


def test_the_relu_share_is_one_comparison() -> None:
    g = s2s.grad(F.relu_layer)
    args = _tie_args("relu_layer", np.float64, False)
    for _ in range(3):
        g(*args)
    text = g.specialized_source
    # (0.0 beside a float64 array is the 0-d constant c0_0: literals.numbers_as_arrays)
    assert "np.where(x_at_w == c0_0, 0.5, x_at_w > c0_0)" in text, text
    assert "== h" not in text, text


# ---- factors out of sums ------------------------------------------------------------

def _rows_args(name: str, dtype, special: bool) -> tuple:
    r = np.random.default_rng(9)
    if name == "mixture":
        out = (r.normal(size=4), r.normal(size=7) * 2, np.log(np.full(4, 0.25)))
        if special:
            out[1][2] = np.nan
    elif name == "attention":
        out = tuple(r.normal(size=(5, 3)) for _ in range(3))
        if special:
            out[0][1, 1] = np.inf  # a row of scores with an infinity: NaN
    elif name == "unshifted":
        out = (r.normal(size=(3, 4)), r.normal(size=(3, 4)))
        if special:
            out[0][1] = -800.0  # exp underflows to 0 in the whole row: 0 / 0
    elif name == "not_positive":
        out = (r.normal(size=(3, 4)), np.abs(r.normal(size=(3, 1))))
        if special:
            out[1][1, 0] = 0.0
    else:
        x = r.normal(size=(4, 6))
        x[1] = 0.75  # a constant row: variance 0, the divisor sqrt(1e-5)
        if special:
            x[2, 3] = np.nan
        out = (x, r.normal(size=6), r.normal(size=(4, 6)))
    return tuple(np.asarray(a, dtype=dtype) for a in out)


@pytest.mark.parametrize("special", [False, True], ids=["finite", "nan"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["layer_norm", "layer_norm_var", "mixture", "not_positive",
                                  "attention", "unshifted"])
def test_factors_out_of_sums_keep_jaxs_gradients(name, dtype, special, twin) -> None:
    args = _rows_args(name, dtype, special)
    want = jax.grad(getattr(twin, name))(*args)
    g = s2s.grad(getattr(F, name))
    tol = 2e-4 if dtype == np.float32 else 1e-10
    with np.errstate(all="ignore"):
        for call in range(10):
            got = g(*args)
            if call in (0, 2, 9):
                assert got.dtype == dtype
                np.testing.assert_allclose(got, np.asarray(want), rtol=tol, atol=tol,
                                           equal_nan=True, err_msg=f"call {call + 1}")


def test_np_var_is_spelled_out_and_its_centred_value_shared(monkeypatch) -> None:
    """A layer norm written with ``np.var``: the variance is NumPy's own steps, so the
    centred ``x`` its cotangent reads is computed once (not three times); with the
    shapes pass off ``np.var`` is back."""
    args = _rows_args("layer_norm_var", np.float64, False)
    for off, spelled in (("products", True), ("shapes,products", False)):
        monkeypatch.setenv("S2S_PASSES_OFF", off)
        g = s2s.grad(F.layer_norm_var)
        for _ in range(3):
            g(*args)
        body = "\n".join(line for line in g.specialized_source.split("def ", 1)[1]
                         .splitlines() if not line.lstrip().startswith("#"))
        assert ("np.var(" not in body) is spelled, body
        assert (body.count("x - x.mean(axis=-1, keepdims=True)") == 1) is spelled, body


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("call", ["np.var(x, axis=1)", "np.var(x, axis=(0, 2), keepdims=True)",
                                  "x.var()", "x.var(axis=-1, ddof=0)", "np.var(x)",
                                  "x.var(keepdims=True)"])
def test_a_spelled_variance_is_numpys_bit_for_bit(call, dtype) -> None:
    """``spell_var``'s spelling of each form against NumPy's ``var`` (NaN and inf among
    the values, a size-1 axis); forms it must refuse are left alone."""
    import ast

    from s2s.optimize.spelled import spell_var

    x = np.random.default_rng(1).normal(size=(3, 1, 5)).astype(dtype) * 3
    x[2, 0, 1] = np.inf if "keepdims" in call else np.nan
    node = ast.parse(call, mode="eval").body

    def fact(n):
        if isinstance(n, ast.Name) and n.id == "x":
            return (x.shape, x.dtype)
        if n is node:
            return (np.shape(eval(call)), x.dtype)
        return None

    new = spell_var(node, fact, lambda *_: None)
    assert new is not None, call
    with np.errstate(all="ignore"):
        want, got = eval(call), eval(ast.unparse(new))
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == dtype
    np.testing.assert_array_equal(got, want)
    for refused in ("np.var(x, ddof=1)", "np.var(x, axis=k)", "np.var(2 * x)",
                    "x.var(axis=1, dtype=np.float64)"):
        assert spell_var(ast.parse(refused, mode="eval").body, fact, lambda *_: None) is None


def _lse_oracle(name: str):
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    if name == "lse_xent":
        return lambda logits, labels: -jnp.mean(jnp.sum(
            labels * (logits - logsumexp(logits, axis=1, keepdims=True)), axis=1))
    return lambda x, w: logsumexp(x) * 2.0 + jnp.sum(w * x)


@pytest.mark.parametrize("special", [False, True], ids=["finite", "inf-nan"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["lse_xent", "lse_vector"])
@pytest.mark.parametrize("value", [False, True], ids=["grad", "value_and_grad"])
def test_a_logsumexps_exponential_is_a_softmax(name, dtype, special, value,
                                               monkeypatch) -> None:
    """``scipy.special.logsumexp``'s derivative reads ``exp(x - lse)``: specialized, it
    is a softmax of the finite-made row maximum and SciPy is not called (it is, with
    the ``fixups`` pass off), for a one-hot cross-entropy over rows and a vector's
    log-sum-exp (keepdims False, every axis); values and dtypes are JAX's
    (``jax.scipy.special.logsumexp``) at calls 1, 3 and 10, rows with +inf, -inf and
    NaN included; ``value_and_grad`` still computes the log-sum-exp for the value."""
    r = np.random.default_rng(4)
    if name == "lse_xent":
        x, other = r.normal(size=(5, 4)) * 3, np.eye(4)[[0, 3, 1, 1, 2]]
        if special:
            x[1, 2], x[3, 0], x[4, 1] = np.inf, -np.inf, np.nan
    else:
        x, other = r.normal(size=7) * 3, r.normal(size=7)
        if special:
            x[2] = np.inf
    args = (x.astype(dtype), other.astype(dtype))
    oracle = (jax.value_and_grad if value else jax.grad)(_lse_oracle(name))
    want = oracle(*args)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for off, called in (("", value), ("fixups", True)):
        monkeypatch.setenv("S2S_PASSES_OFF", off)
        g = (s2s.value_and_grad if value else s2s.grad)(getattr(F, name))
        with np.errstate(all="ignore"):
            for call in range(10):
                got = g(*args)
                if call in (0, 2, 9):
                    for a, b in zip(*(v if value else (v,) for v in (got, want))):
                        assert np.asarray(a).dtype == dtype, (call, off)
                        np.testing.assert_allclose(a, np.asarray(b), rtol=tol, atol=tol,
                                                   equal_nan=True, err_msg=f"{call} {off}")
        body = "\n".join(line for line in g.specialized_source.split("def ", 1)[1]
                         .splitlines() if not line.lstrip().startswith("#"))
        assert ("special_logsumexp(" in body) is called, body


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scipys_softmax_is_spelled_out(dtype, monkeypatch) -> None:
    """``scipy.special.softmax`` in specialized code is its own NumPy steps (SciPy is
    not called; it is with the shapes pass off): the gradient is JAX's
    (``jax.nn.softmax``) at calls 1, 3 and 10, a row with -inf included."""
    import jax.numpy as jnp

    r = np.random.default_rng(8)
    x, labels = r.normal(size=(5, 4)) * 3, np.eye(4)[[0, 3, 1, 1, 2]]
    x[2, 1] = -np.inf
    args = (x.astype(dtype), labels.astype(dtype))
    want = jax.grad(lambda a, b: -jnp.mean(jnp.sum(
        b * jnp.log(jax.nn.softmax(a, axis=1)), axis=1)))(*args)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for off, called in (("", False), ("shapes", True)):
        monkeypatch.setenv("S2S_PASSES_OFF", off)
        g = s2s.grad(F.softmax_xent)
        with np.errstate(all="ignore"):
            for call in range(10):
                got = g(*args)
                if call in (0, 2, 9):
                    assert got.dtype == dtype
                    np.testing.assert_allclose(got, np.asarray(want), rtol=tol, atol=tol,
                                               equal_nan=True, err_msg=f"{call} {off}")
        body = "\n".join(line for line in g.specialized_source.split("def ", 1)[1]
                         .splitlines() if not line.lstrip().startswith("#"))
        assert ("special_softmax(" in body) is called, body


def test_a_logsumexps_exponential_is_left_where_its_operand_may_change() -> None:
    """The softmax rewrite's guards: ``a`` (or a view of it) written into, or rebound,
    between the log-sum-exp and its exponential, weights ``b``, an axis not literal:
    the code stays as it is; the plain case is rewritten."""
    import ast
    import textwrap

    from s2s.optimize.softmax import softmax_of_logsumexp

    def fact(node):
        if isinstance(node, ast.Name) and node.id in ("a", "v", "g"):
            return ((4, 3), np.dtype(np.float64))
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "exp":
            return ((4, 3), np.dtype(np.float64))
        return None

    plain = """
        def f(a, g):
            lse = special_logsumexp(a, axis=1, keepdims=True)
            return g * np.exp(a - lse)
        """
    for src, rewritten in ((plain, True), (plain.replace("            return", (
            "            v = a[1:]\n            v[0] += 1.0\n            return")), False),
            (plain.replace("            return", "            a[0] = 0.0\n            return"),
             False), (plain.replace("keepdims=True)", "keepdims=True, b=g)"), False),
            (plain.replace("axis=1", "axis=k"), False),
            (plain.replace("            return", "            a = a * 2.0\n            return"),
             False)):
        fn = ast.parse(textwrap.dedent(src)).body[0]
        assert bool(softmax_of_logsumexp(fn, fact)) is rewritten, src
        assert ("np.minimum(a.max(axis=1, keepdims=True)" in ast.unparse(fn)) is rewritten


def test_the_layer_norm_sum_divides_rows_once(monkeypatch) -> None:
    monkeypatch.setenv("S2S_PASSES_OFF", "products")  # (the sums spelled as sums)
    g = s2s.grad(F.layer_norm)
    args = _rows_args("layer_norm", np.float64, False)
    for _ in range(3):
        g(*args)
    text = g.specialized_source
    assert "(ratio_bar * x_minus_mu).sum(axis=(1,), keepdims=True)" in text, text
    g = s2s.grad(F.not_positive)
    args = _rows_args("not_positive", np.float64, False)
    for _ in range(3):
        g(*args)
    assert "/ q / q).sum(" in g.specialized_source or "/ q / q, axis" in \
        g.specialized_source, g.specialized_source
    g = s2s.grad(F.attention)
    args = _rows_args("attention", np.float64, False)
    for _ in range(3):
        g(*args)
    assert "(a_2_bar * a_2).sum(axis=(1,), keepdims=True) / sum_a" in g.specialized_source, \
        g.specialized_source


# ---- returns_fresh ------------------------------------------------------------------

def _fn(body: str) -> str:
    lines = "\n".join("    " + ln for ln in body.strip().splitlines())
    return f"import numpy as np\n\n\ndef f(x, y):\n{lines}\n"


@pytest.mark.parametrize("body, fresh", [
    ("z = np.zeros(3)\nnp.add.at(z, y, 1.0)\nreturn z", True),
    ("z = np.zeros(3)\nfor t in range(3):\n    z = z + x[t]\nreturn {'a': z}", True),
    ("z = x * 1\nw = z\nreturn {'a': z, 'b': w}", False),
    ("z = x * 1\nfor t in range(2):\n    w = z\nreturn (z, w)", False),
    ("z = x * 1\nw = x * 2\nfor t in range(2):\n    z = w\n    w = z + 1\nreturn (z, w)",
     True),
    ("z = x * 1\nw = x * 2\nfor t in range(2):\n    w = z + 1\n    z = w\nreturn (z, w)",
     False),
    ("z = x * 1\nfor t in range(2):\n    z = y\nreturn z", False),
    ("z = x * 1\nfor t in range(2):\n    (a, b) = y.pop()\n    z = z + a\nreturn z", True),
    ("z = x * 1\nfor t in range(2):\n    (z, b) = y.pop()\nreturn z", False),
    ("z = x * 1\nz += 1.0\nreturn z", True),
    ("z = x.T\nreturn z", False),
    ("z = np.imag(x)\nreturn z", False),  # (views of an argument)
    ("z = np.fliplr(x)\nfor t in range(2):\n    w = z + 1\nreturn z", False),
    ("z = np.ascontiguousarray(x)\nreturn {'a': z}", False),
    ("z = x * 1\nif y:\n    z = x\nreturn z", False),
    ("return x", False),
])
def test_returns_fresh_on_loops_aliases_and_writes(body, fresh) -> None:
    assert returns_fresh(_fn(body), "f") is fresh


def _writes_into_results(g, args) -> None:
    before = [np.array(a, copy=True) for a in s2s.tree_util.tree_leaves(args)]
    first = g(*args)
    for _ in range(9):
        got = g(*args)
        leaves = s2s.tree_util.tree_leaves(got)
        for i, a in enumerate(leaves):
            for b in leaves[i + 1:]:
                assert not np.may_share_memory(a, b)
            for b in s2s.tree_util.tree_leaves(args):
                assert not np.may_share_memory(a, b)
        for leaf in leaves:
            leaf[...] = 1e9  # the caller writes into what it got
    for a, b in zip(s2s.tree_util.tree_leaves(g(*args)), s2s.tree_util.tree_leaves(first)):
        assert not np.all(a == 1e9)
    for a, b in zip(before, s2s.tree_util.tree_leaves(args)):
        np.testing.assert_array_equal(a, b)


def test_a_loop_gradient_is_fresh_and_right(twin) -> None:
    r = np.random.default_rng(3)
    params = {"wx": r.normal(size=(2, 4)), "wh": r.normal(size=(4, 4)), "b": r.normal(size=4)}
    xs = r.normal(size=(3, 2))
    g = s2s.grad(F.rnn_dict)
    want = jax.grad(twin.rnn_dict)(params, xs)
    for _ in range(3):
        got = g(params, xs)
    for k in params:
        np.testing.assert_allclose(got[k], np.asarray(want[k]), rtol=1e-12, atol=1e-12)
    assert all(e.fresh for e in g._by_signature.values())
    _writes_into_results(g, (params, xs))


def test_one_cotangent_for_two_leaves_is_two_arrays() -> None:
    r = np.random.default_rng(4)
    params = {"a": r.normal(size=3), "b": r.normal(size=3)}
    _writes_into_results(s2s.grad(F.same_cotangent), (params, r.normal(size=3)))
