"""Loops and comprehensions over a dict argument (the optimizer idiom: ``for k, p in
params.items()``), unrolled per call from the dict's keys, against JAX on the same
source (dict_loop_fns.py through ``jax_twin``): grad, jvp, vmap(in_axes=(None, 0)),
jit, float64 and float32; a call whose dict has other keys generates again."""

from __future__ import annotations

import dict_loop_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

P = {"w": np.array([0.3, -0.2, 0.5]), "b": np.array([0.1, 0.4, -0.3])}
X = np.array([1.0, 2.0, 0.5])
XS = np.array([[1.0, 2.0, 0.5], [-0.4, 0.3, 0.9]])
NAMES = ["items_loop", "keys_loop", "keys_method_loop", "values_loop", "sorted_keys_loop",
         "sorted_items_loop", "dict_comp", "dict_comp_chain", "list_comp_values",
         "sum_gen_items", "sgd_step", "key_in_body"]
DTYPES = [np.float64, np.float32]


def _tol(dtype):
    return dict(rtol=1e-9, atol=1e-10) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)


def _cast(tree, dtype):
    return {k: v.astype(dtype) for k, v in tree.items()}


def _close(got, want, dtype):
    if isinstance(want, dict):
        assert sorted(got) == sorted(want)  # (JAX returns its dicts key-sorted)
        for k in want:
            np.testing.assert_allclose(got[k], np.asarray(want[k]), **_tol(dtype))
    else:
        np.testing.assert_allclose(got, np.asarray(want), **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", NAMES)
def test_grad(name, dtype) -> None:
    p, x = _jax_ordered(name, _cast(P, dtype)), X.astype(dtype)
    got = s2s.grad(getattr(F, name))(p, x)
    assert list(got) == list(p)  # the gradient dict: the same keys, in order
    _close(got, jax.grad(getattr(J, name))(p, x), dtype)


def _jax_ordered(name: str, p: dict) -> dict:
    """jax.grad and jax.jvp rebuild a dict argument with its keys sorted: for a function
    whose value depends on the walk's order, the dict is passed in that order, so JAX's
    walk and Python's (s2s's) are the same; test_insertion_order checks the other order."""
    return dict(sorted(p.items())) if name in ORDER_DEPENDENT else p


ORDER_DEPENDENT = {"list_comp_values"}


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_insertion_order_is_pythons(dtype) -> None:
    """s2s walks a dict argument as it was passed, as Python does (JAX sorts its keys):
    the value and the gradient against the Python function and finite differences."""
    p, x = _cast(P, dtype), X.astype(dtype)
    assert list(p) != sorted(p)
    f = F.list_comp_values
    np.testing.assert_allclose(s2s.jit(f)(p, x), f(p, x), rtol=1e-6)
    g = s2s.grad(f)(p, x)
    for k in p:  # d/dp[k] of parts[0] + 2 parts[1]: x for the first key, 2x the second
        want = (1.0 if k == list(p)[0] else 2.0) * x
        np.testing.assert_allclose(g[k], want, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", NAMES)
def test_jvp(name, dtype) -> None:
    p, x = _jax_ordered(name, _cast(P, dtype)), X.astype(dtype)
    tp = {k: (np.ones_like(v) * 0.5 + v) for k, v in p.items()}
    tx = np.full_like(x, 0.25)
    out, tan = s2s.jvp(getattr(F, name), (p, x), (tp, tx))
    want, wtan = jax.jvp(getattr(J, name), (p, x), (tp, tx))
    _close(out, want, dtype)
    _close(tan, wtan, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", NAMES + ["sgd_update"])
def test_vmap_and_jit(name, dtype) -> None:
    # The oracle is JAX run eagerly on each example: jax.vmap and jax.jit rebuild a dict
    # argument with its keys sorted, so `params.values()` there walks b before w, where
    # Python (and s2s) walk the dict as it was passed (list_comp_values tells them apart)
    p, xs = _cast(P, dtype), XS.astype(dtype)
    got = s2s.vmap(getattr(F, name), in_axes=(None, 0))(p, xs)
    want = [getattr(J, name)(p, x) for x in xs]
    _close(got, jax.tree_util.tree_map(lambda *r: np.stack(r), *want), dtype)
    _close(s2s.jit(getattr(F, name))(p, xs[0]), getattr(J, name)(p, xs[0]), dtype)


def test_the_gradient_of_an_update_is_keyed_like_the_parameters() -> None:
    f = lambda p, x: np.sum(F.sgd_update(p, x)["w"]) + 3.0 * np.sum(F.sgd_update(p, x)["b"])
    g = lambda p, x: jax.numpy.sum(J.sgd_update(p, x)["w"]) + 3.0 * jax.numpy.sum(
        J.sgd_update(p, x)["b"])
    _close(s2s.grad(f)(P, X), jax.grad(g)(P, X), np.float64)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["items_loop", "sorted_items_loop", "dict_comp_chain",
                                  "sgd_step"])
def test_keys_changed_between_calls_generate_again(name) -> None:
    g = s2s.grad(getattr(F, name))
    three = {"w": P["w"], "b": P["b"], "a": 2.0 * P["b"]}
    ten = {f"k{i}": P["w"] * (i + 1) for i in range(10)}
    ten["w"], ten["b"] = P["w"], P["b"]  # (dict_comp reads "w" and "b")
    for p in (P, {"b": P["b"], "w": P["w"]}, three, P, ten, three):
        for calls in (1, 3, 10):
            for _ in range(calls):
                got = g(p, X)
            _close(got, jax.grad(getattr(J, name))(p, X), np.float64)


def test_a_dict_comprehension_over_an_arrays_rows_is_refused_at_its_line() -> None:
    def rows(x):
        d = {i: r for i, r in enumerate(x)}
        return np.sum(d[0])

    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(rows)(XS)
    assert "dict comprehension" in str(info.value)
    assert "{i: r" in info.value.loc.text


def test_sorted_over_a_dicts_values_is_refused_at_its_line() -> None:
    def f(params):
        t = 0.0
        for v in sorted(params.values()):
            t = t + np.sum(v)
        return t

    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(f)(P)
    assert "sorted()" in str(info.value) and "sorted(params" in info.value.loc.text


def test_a_dict_comprehension_keyed_by_run_time_values_is_refused_at_its_line() -> None:
    """Its keys are an array's values: the unroller must not take the lists the loop
    appends to for the empty lists they start as (it made the dict {} and crashed)."""
    import inspect

    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(F.comp_over_array_rows)(np.ones(3))
    lines, first = inspect.getsourcelines(F.comp_over_array_rows)
    assert f"line {first + 1}, column 9" in str(info.value)
    assert "{k: x[k] * 2.0 for k in x}" in str(info.value)
