"""A loop over a module's dict (``for k, w in CONFIG.items():``, ``sorted(LAYERS)``,
``enumerate(LAYERS.values())``...) is unrolled over the dict's keys, each value read
where the code runs (``CONFIG["a"]``): values changed in place are read by the next
call, keys added or removed generate the code again (refused before: "a tuple, list
or dict argument can only be indexed with a constant key").  Oracles: closed forms
and central differences of the NumPy function (default tier), JAX on the same source
(slow tier, float64 and float32)."""

from __future__ import annotations

import module_dict_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

X = np.array([0.3, -0.7, 1.1])
NAMES = ["items_sum", "keys_read", "sorted_layers", "enumerate_values", "reversed_items",
         "key_after_loop", "nothing_walked", "helper_walks"]


def _central(f, x, h=1e-6):
    e = np.eye(x.size)
    return np.array([(f(x + h * e[i]) - f(x - h * e[i])) / (2 * h) for i in range(x.size)])


@pytest.mark.parametrize("name", NAMES)
def test_every_transform_walks_the_keys(name) -> None:
    f = getattr(F, name)
    want = _central(f, X)
    np.testing.assert_allclose(s2s.grad(f)(X), want, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(X), want, rtol=1e-7, atol=1e-8)
    v = np.array([0.2, -1.0, 0.5])
    np.testing.assert_allclose(s2s.jvp(f, (X,), (v,))[1], want @ v, rtol=1e-7, atol=1e-8)
    batch = np.stack([X, 0.5 * X])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(batch)[1], _central(f, 0.5 * X),
                               rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("transform", ["grad", pytest.param("jit", marks=pytest.mark.slow),
                                       pytest.param("hessian", marks=pytest.mark.slow),
                                       pytest.param("jvp", marks=pytest.mark.slow)])
def test_values_and_keys_changed_in_place_between_calls(transform) -> None:
    """Ten calls; a value changed at the 3rd, a key added at the 5th, one removed at
    the 8th: each call walks the dict as it is then (closed form: the sum of the
    weights times cos(x))."""
    made = {"grad": s2s.grad, "jit": lambda f: s2s.jit(s2s.grad(f)),
            "hessian": s2s.hessian,
            "jvp": lambda f: lambda x: s2s.jvp(f, (x,), (np.ones(3),))}[transform](
        F.items_sum)
    saved = dict(F.WEIGHTS)
    try:
        for call in range(10):
            if call == 2:
                F.WEIGHTS["a"] = 3.0
            if call == 4:
                F.WEIGHTS["c"] = -2.0
            if call == 7:
                del F.WEIGHTS["b"]
            x = X * (1 + 0.1 * call)
            total = sum(F.WEIGHTS.values())
            want = {"hessian": np.diag(-total * np.sin(x)),
                    "jvp": (total * np.sum(np.sin(x)), total * np.sum(np.cos(x)))}.get(
                transform, total * np.cos(x))
            got = made(x)
            for g, w in zip(got if transform == "jvp" else (got,),
                            want if transform == "jvp" else (want,)):
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)
    finally:
        F.WEIGHTS.clear()
        F.WEIGHTS.update(saved)


def test_an_array_value_changed_in_place_is_read() -> None:
    grad = s2s.grad(F.sorted_layers)
    saved = {k: v.copy() for k, v in F.LAYERS.items()}
    try:
        for call in range(3):
            F.LAYERS["w1"][0] = 1.0 + call
            np.testing.assert_allclose(grad(X), _central(F.sorted_layers, X), rtol=1e-7,
                                       atol=1e-8)
    finally:
        for k, v in saved.items():
            F.LAYERS[k][...] = v


def test_the_code_reads_each_value_by_its_key() -> None:
    text = s2s.source(s2s.grad(F.sorted_layers))
    assert 'LAYERS["w1"]' in text and 'LAYERS["w2"]' in text
    assert "for " not in text.split("def ")[1]  # (unrolled: no loop left)
    assert text.index('LAYERS["w1"]') < text.index('LAYERS["w2"]')  # (sorted)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", NAMES)
def test_against_jax(name, dtype) -> None:
    import jax

    J = jax_twin(F)
    f, g = getattr(F, name), getattr(J, name)
    x = X.astype(dtype)
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-6)
    want = np.asarray(jax.grad(g)(x))
    for got in (s2s.grad(f)(x), s2s.jit(s2s.grad(f))(x),
                s2s.jit(s2s.grad(f), backend="jax")(x)):
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_allclose(got, want, **tol)
    np.testing.assert_allclose(s2s.hessian(f)(x), jax.hessian(g)(x), **tol)
    batch = np.stack([x, 0.5 * x])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(batch), jax.vmap(jax.grad(g))(batch),
                               **tol)


def test_a_value_changed_in_place_does_not_generate_again(monkeypatch) -> None:
    """The code depends on the keys, not the values (read where it runs): a changed
    value is read without lowering the function again; an added key lowers it."""
    import s2s.api.transformed as transformed

    lowered = []
    real = transformed.pipeline.lower
    monkeypatch.setattr(transformed.pipeline, "lower",
                        lambda fn, **kw: lowered.append(fn) or real(fn, **kw))
    grad = s2s.grad(F.keys_read)
    saved = dict(F.WEIGHTS)
    try:
        grad(X)
        first = len(lowered)
        F.WEIGHTS["a"] = 7.0
        np.testing.assert_allclose(grad(X), _central(F.keys_read, X), rtol=1e-7, atol=1e-8)
        assert len(lowered) == first
        F.WEIGHTS["new"] = 1.0
        np.testing.assert_allclose(grad(X), _central(F.keys_read, X), rtol=1e-7, atol=1e-8)
        assert len(lowered) == first + 1
    finally:
        F.WEIGHTS.clear()
        F.WEIGHTS.update(saved)


@pytest.mark.parametrize("name, words", [
    ("object_keys", "indexed with a constant key"),
])
def test_what_is_not_unrolled_is_refused_at_the_users_line(name, words) -> None:
    """Keys with no literal (an internal ParserSyntaxError before): a located
    refusal.  (A loop that leaves early, refused here before, is unrolled since
    iter14: ``test_a_loop_that_leaves_early_stops_at_its_key``.)"""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(getattr(F, name))(X)
    text = str(info.value)
    assert words in text and "module_dict_fns.py" in text and "<s2s" not in text


def test_a_loop_that_leaves_early_stops_at_its_key() -> None:
    """``for k, w in WEIGHTS.items(): if k == "b": break`` (s2s/frontend/static_loops.py):
    the keys before ``"b"``, against central differences."""
    np.testing.assert_allclose(s2s.grad(F.leaves_early)(X), _central(F.leaves_early, X),
                               rtol=1e-7, atol=1e-8)
