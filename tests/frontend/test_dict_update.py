"""``d.update({"k": v}, j=w)`` and ``d.update(e)`` on a dict the function built: the
writes ``d["k"] = v`` it makes, every value computed first (issue 23; it was refused as
"an expression statement is evaluated only for its side effect").  On a dict another
name shares, on an argument, or with keys known only at run time, refused, located.
Oracle: JAX on the same source, float64 and float32; vmap against a Python loop."""

from __future__ import annotations

import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

import dict_update_fns as F  # noqa: E402

if HAVE_JAX:
    import jax

    J = jax_twin(F)

NAMES = ["literal_and_keywords", "swaps_keys", "from_another_dict", "repeated_key",
         "in_a_loop", "in_a_branch"]
X = np.array([0.3, -0.7, 1.1])


def _close(got, want, dtype) -> None:
    tol = dict(rtol=1e-9, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), **tol)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", NAMES)
def test_transforms_against_jax(name, dtype) -> None:
    f, jf = getattr(F, name), getattr(J, name)
    g = s2s.grad(f)
    for call in (1, 2, 3, 10):  # values and signs change; the third call is specialized
        x = (X * (-1.0) ** call * (1 + call / 10)).astype(dtype)
        _close(g(x), jax.grad(jf)(x), dtype)
    x = X.astype(dtype)
    _close(s2s.value_and_grad(f)(x), jax.value_and_grad(jf)(x), dtype)
    _close(s2s.jvp(f, (x,), (x[::-1].copy(),)), jax.jvp(jf, (x,), (x[::-1],)), dtype)
    _close(s2s.hessian(f)(x), jax.hessian(jf)(x), dtype)
    xs = np.stack([x, -x, 0.5 * x])
    _close(s2s.vmap(s2s.grad(f))(xs), np.stack([jax.grad(jf)(r) for r in xs]), dtype)
    for backend in ("numpy", "jax"):
        _close(s2s.jit(s2s.grad(f), backend=backend)(x), jax.grad(jf)(x), dtype)


def test_a_dict_returned_after_update_and_the_callers_array_untouched() -> None:
    x = X.copy()
    value, d = s2s.jit(F.dict_returned)(x)
    assert set(d) == {"a", "b"}
    _close(s2s.grad(F.dict_returned, has_aux=True)(x), jax.grad(J.dict_returned,
                                                                has_aux=True)(x), np.float64)
    for _ in range(3):
        grad, _ = s2s.grad(F.dict_returned, has_aux=True)(x)
        grad[0] = 99.0  # writing into the gradient must not reach the caller's array
    np.testing.assert_array_equal(x, X)


@pytest.mark.parametrize("extra", [{"b": X * 2.0}, {"a": X * 3.0}], ids=["new_key", "same_key"])
def test_an_update_from_a_dict_argument_is_jaxs(extra) -> None:
    """``d.update(extra)`` of a dict argument: its keys are the call's (it was refused as
    keys unknown at transform time), so d["a"] is x or extra["a"]; gradients w.r.t. both
    arguments against JAX on the same source, float64 and float32."""
    for dtype in (np.float64, np.float32):
        x = X.astype(dtype)
        e = {k: v.astype(dtype) for k, v in extra.items()}
        got = s2s.grad(F.unknown_keys, argnums=(0, 1))(x, e)
        want = jax.grad(J.unknown_keys, argnums=(0, 1))(x, e)
        np.testing.assert_allclose(got[0], want[0])
        assert got[0].dtype == dtype and got[1].keys() == want[1].keys()
        for k in e:
            np.testing.assert_allclose(got[1][k], want[1][k])
            assert got[1][k].dtype == dtype


@pytest.mark.parametrize("name, words, line", [
    ("shared_then_updated", "would change it for another name", "d.update(a=2.0 * x)"),
    ("key_from_values", "a key here is not a string literal", "str(np.argmax(x)): x"),
    ("argument_updated", "a method changes its object", "d.update(a=2.0 * d[\"a\"])"),
])
def test_refusals_are_located(name, words, line) -> None:
    fn = getattr(F, name)
    args = ({"a": X},) if name == "argument_updated" else (X,) if name != "unknown_keys" \
        else (X, {"b": X})
    with pytest.raises(s2s.errors.UnsupportedSyntaxError) as info:
        s2s.grad(fn)(*args)
    text = str(info.value)
    assert words in text and "dict_update_fns.py" in text and line in text, text
    assert "<s2s" not in text
