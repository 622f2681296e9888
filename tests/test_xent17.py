"""Matrix products of the specialized code spelled ``a.dot(b)`` (s2s/optimize/dots.py):
the values stay the hand-written gradient's and JAX's (float64 and float32, calls whose
values change, size-1 axes, NaN and inf), the spelling appears only where both
operands are plain float arrays of one or two axes, and the rule's two sides agree
bit for bit on contiguous and transposed operands."""

from __future__ import annotations

import types

import numpy as np
import pytest

import s2s


def mlp_dict(params, x, y):
    h = np.maximum(x @ params["w1"] + params["b1"], 0.0)
    out = h @ params["w2"] + params["b2"]
    return np.mean((out - y) ** 2)


def mlp_dict_hand(params, x, y):  # (no pre-activation exactly zero in the data below)
    pre = x @ params["w1"] + params["b1"]
    h = np.maximum(pre, 0.0)
    g = 2.0 / y.size * (h @ params["w2"] + params["b2"] - y)
    gh = (g @ params["w2"].T) * (pre > 0)
    return {"w1": x.T @ gh, "b1": gh.sum(axis=0), "w2": h.T @ g, "b2": g.sum(axis=0)}


def xent_onehot(logits, labels):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * logp, axis=1))


def xent_onehot_hand(logits, labels):  # (rows of labels of any sum)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return (labels.sum(axis=1, keepdims=True) * p - labels) / logits.shape[0]


def chain(a, v, w):  # vector @ matrix, matrix @ vector, vector @ vector, a strided view
    return np.tanh(v @ a) @ w + (a @ w) @ (a @ w) + np.sum(a[:, ::2] @ w[::2])


def chain_hand(a, v, w):
    t = np.tanh(v @ a)
    aw = a @ w
    ga = np.outer(v, (1 - t**2) * w) + 2 * np.outer(aw, w)
    ga[:, ::2] += np.outer(np.ones(a.shape[0]), w[::2])
    return ga


W_PLAIN = np.linspace(-1.0, 1.0, 12).reshape(3, 4)


class Tagged(np.ndarray):
    pass


W_TAGGED = W_PLAIN.view(Tagged)


def free_plain(x):
    return np.sum(np.tanh(x @ W_PLAIN))


def free_tagged(x):
    return np.sum(np.tanh(x @ W_TAGGED))


def _mlp_args(rng, dtype=np.float64, n=4, d=3, h=5, k=2):
    params = {"w1": rng.normal(size=(d, h)), "b1": rng.normal(size=h) * 0.1,
              "w2": rng.normal(size=(h, k)), "b2": rng.normal(size=k)}
    params = {key: v.astype(dtype) for key, v in params.items()}
    return params, rng.normal(size=(n, d)).astype(dtype), rng.normal(size=(n, k)).astype(dtype)


def _code(text: str) -> str:
    """The specialized function's lines, without the quoted user lines."""
    body = text.split("def ", 1)[1]
    return "\n".join(ln for ln in body.splitlines() if not ln.strip().startswith("#"))


def _close(got, want, dtype) -> None:
    tol = 2e-4 if dtype == np.float32 else 1e-12
    if isinstance(want, dict):
        assert sorted(got) == sorted(want)
        for k in want:
            assert got[k].dtype == dtype and got[k].shape == want[k].shape, k
            np.testing.assert_allclose(got[k], want[k], rtol=tol, atol=tol, err_msg=k)
        return
    got = np.asarray(got)
    assert got.dtype == dtype and got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)])
def test_an_mlps_products_are_dot_calls_and_its_gradient_holds(dtype) -> None:
    rng = np.random.default_rng(0)
    g, generic = s2s.grad(mlp_dict), s2s.grad(mlp_dict)
    generic.specialize = False
    for call in range(10):  # (new values every call: the 1st, 3rd and 10th among them)
        args = _mlp_args(rng, dtype)
        got = g(*args)
        _close(got, mlp_dict_hand(*args), dtype)
        for v in got.values():  # (the caller writes into a result: no later call sees it)
            v[...] = np.nan
    for call, bad in enumerate((np.nan, np.inf, -np.inf)):  # (the generic code's values)
        params, x, y = _mlp_args(rng, dtype)
        x[call, call] = bad
        with np.errstate(all="ignore"):
            got, want = g(params, x, y), generic(params, x, y)
        for k in want:
            np.testing.assert_array_equal(np.isnan(got[k]), np.isnan(want[k]), k)
            finite = np.isfinite(want[k])
            _close({k: got[k][finite]}, {k: want[k][finite]}, dtype)
    code = _code(g.specialized_source)
    assert code.count(".dot(") == 7 and " @ " not in code, g.specialized_source


@pytest.mark.slow
def test_size_one_axes_and_a_onehot_cross_entropy() -> None:
    rng = np.random.default_rng(1)
    g = s2s.grad(mlp_dict)
    for _ in range(3):
        args = _mlp_args(rng, n=1, d=1, h=1, k=1)
        _close(g(*args), mlp_dict_hand(*args), np.float64)
    x = s2s.grad(xent_onehot)
    for call in range(4):
        logits = rng.normal(size=(4, 3)) * 3
        labels = rng.uniform(size=(4, 3)) if call % 2 else np.eye(3)[[0, 2, 1, 1]]
        _close(x(logits, labels), xent_onehot_hand(logits, labels), np.float64)
    assert ".dot(ones" in _code(x.specialized_source), x.specialized_source


@pytest.mark.slow
def test_vectors_and_a_strided_view() -> None:
    rng = np.random.default_rng(2)
    g = s2s.grad(chain)
    for _ in range(3):
        a, v, w = rng.normal(size=(3, 4)), rng.normal(size=3), rng.normal(size=4)
        _close(g(a, v, w), chain_hand(a, v, w), np.float64)
    assert " @ " not in _code(g.specialized_source), g.specialized_source


def test_only_plain_arrays_are_spelled_dot() -> None:
    x = np.linspace(0.0, 1.0, 6).reshape(2, 3)
    plain, tagged = s2s.grad(free_plain), s2s.grad(free_tagged)
    for _ in range(3):
        want = (1 - np.tanh(x @ W_PLAIN) ** 2) @ W_PLAIN.T
        _close(plain(x), want, np.float64)
        np.testing.assert_allclose(np.asarray(tagged(x)), want, rtol=1e-12)
    assert "x.dot(W_PLAIN)" in plain.specialized_source
    assert ".dot(W_TAGGED)" not in (tagged.specialized_source or "")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dot_and_matmul_agree_bit_for_bit_on_contiguous_operands(dtype) -> None:
    rng = np.random.default_rng(4)
    shapes = [((4, 3), (3, 1)), ((4, 3), (3,)), ((3,), (3, 4)), ((3,), (3,)),
              ((0, 3), (3, 2)), ((2, 0), (0, 2)), ((1, 1), (1, 1)), ((33, 17), (17, 9))]
    for sa, sb in shapes:
        for layout in range(3):
            a = rng.normal(size=sa).astype(dtype)
            b = rng.normal(size=sb).astype(dtype)
            if layout == 1 and a.ndim == 2:  # (a transposed operand: BLAS's flag)
                a = np.ascontiguousarray(a.T).T
            if layout == 2 and a.size:
                a.flat[0], b.flat[-1] = np.nan, np.inf
            with np.errstate(all="ignore"):
                left, right = a @ b, a.dot(b)
            assert type(left) is type(right) and np.asarray(left).dtype == dtype
            np.testing.assert_array_equal(left, right)


def _jax_twin(fn):
    jnp = pytest.importorskip("jax.numpy")
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp}, fn.__name__)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["mlp_dict", "xent_onehot", "chain"])
def test_against_jax_grad(name, dtype) -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    fn = globals()[name]
    want_fn = jax.grad(_jax_twin(fn))
    g = s2s.grad(fn)
    rng = np.random.default_rng(5)
    for call in range(10):
        if name == "mlp_dict":
            args = _mlp_args(rng, dtype, n=1 if call == 2 else 4)
        elif name == "xent_onehot":
            args = ((rng.normal(size=(4, 3)) * 3).astype(dtype),
                    np.eye(3, dtype=dtype)[rng.integers(0, 3, 4)])
        else:
            args = tuple(rng.normal(size=s).astype(dtype) for s in ((3, 4), (3,), (4,)))
        got, want = g(*args), want_fn(*args)
        if call in (0, 2, 9):
            want = {k: np.asarray(v) for k, v in want.items()} if isinstance(want, dict) \
                else np.asarray(want)
            _close(got, want, dtype)
    assert ".dot(" in g.specialized_source
