"""``s2s.jit(..., backend="jax")``'s call of a dict argument (``api/jit_calls.py``): a
dict passes to ``jax.jit`` as a ``Keyed`` node of its values without a look at them;
the trace refuses a dict among them (``jax.jit`` has rebuilt it sorted), and the jit
then looks at the values of every dict, as before.  A gradient's dict comes back as a
dict in the function's key order without a look at its values, where every trace of
the jit returned one ``Keyed`` of leaves.

Oracle: ``jax.grad`` of a ``jax.numpy`` twin that walks the keys in the caller's
order, written out.  The walks accumulate as ``acc * 1.5 + ...``, so the order
changes the gradient: a dict walked sorted gives other numbers.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import s2s

jax.config.update("jax_enable_x64", True)


def flat(p, x):
    acc = 0.0
    for k, v in p.items():
        acc = acc * 1.5 + np.sum(np.sin(v * x))
    return acc


def nested(p, x):
    acc = 0.0
    for k, sub in p.items():
        for k2, w in sub.items():
            acc = acc * 1.5 + np.sum(np.sin(w * x))
    return acc


def per_example(p, x, y):
    acc = 0.0
    for k, sub in p.items():
        for k2, w in sub.items():
            acc = acc * 1.5 + np.sum(np.tanh(w * x) * y)
    return acc


def twin(order):
    """``flat``/``nested`` on jax.numpy, its keys walked in ``order`` (a list of keys,
    or of ``(key, inner keys)``)."""
    def f(p, x, y=1.0):
        acc = 0.0
        for item in order:
            k, inner = item if isinstance(item, tuple) else (item, None)
            for w in [p[k]] if inner is None else [p[k][k2] for k2 in inner]:
                act = jnp.sin(w * x) if y is None else jnp.tanh(w * x) * y
                acc = acc * 1.5 + jnp.sum(act)
        return acc

    return f


def tol(dtype):
    return dict(rtol=1e-12, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)


def check(got, want, dtype):
    assert type(got) is dict and list(got) == list(want), (list(got), list(want))
    for k in got:
        if isinstance(want[k], dict):
            check(got[k], want[k], dtype)
        else:
            assert np.asarray(got[k]).dtype == dtype
            np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), **tol(dtype))


def _ordered(want, order):
    """JAX's gradient (its dicts sorted) in the caller's key order."""
    out = {}
    for item in order:
        k, inner = item if isinstance(item, tuple) else (item, None)
        out[k] = want[k] if inner is None else {k2: want[k][k2] for k2 in inner}
    return out


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_dict_in_a_dict_keeps_its_order_where_a_flat_one_passes_unlooked_at(dtype):
    rng = np.random.default_rng(0)
    g = s2s.jit(s2s.grad(flat), backend="jax")
    h = s2s.jit(s2s.grad(nested), backend="jax")
    order_flat, order_nested = ["w", "a"], [("w", ["z", "b"]), ("a", ["y", "c"])]
    f_flat = jax.grad(lambda p, x: twin(order_flat)(p, x, None))
    f_nested = jax.grad(lambda p, x: twin(order_nested)(p, x, None))
    for call in range(10):  # values change between calls: the 1st, 3rd, 10th checked
        x = rng.normal(size=3).astype(dtype)
        p = {"w": rng.normal(size=3).astype(dtype), "a": rng.normal(size=3).astype(dtype)}
        q = {"w": {"z": rng.normal(size=3).astype(dtype), "b": rng.normal(size=3).astype(dtype)},
             "a": {"y": rng.normal(size=3).astype(dtype), "c": rng.normal(size=3).astype(dtype)}}
        got_flat, got_nested = g(p, x), h(q, x)
        if call in (0, 2, 9):
            check(got_flat, _ordered(f_flat(p, x), order_flat), dtype)
            check(got_nested, _ordered(f_nested(q, x), order_nested), dtype)
    assert g.cache_info()[:3] == (9, 1, 1) and h.cache_info()[:3] == (9, 1, 1)


def walk(p, x):
    """Each item's running value, in a dict of ``p``'s structure and key order."""
    acc, out = 0.0, {}
    for k, v in p.items():
        if isinstance(v, dict):
            out[k] = {}
            for k2, w in v.items():
                acc = acc * 1.5 + np.sum(np.sin(w * x))
                out[k][k2] = acc * w
        else:
            acc = acc * 1.5 + np.sum(np.sin(v * x))
            out[k] = acc * v
    return out


def test_a_dict_in_a_dict_is_refused_by_the_shallow_call():
    """The default tier's case: a dict in a dict, first given to the jit as a Keyed
    of its values unlooked at, comes back in its order with the right numbers."""
    rng = np.random.default_rng(3)
    g = s2s.jit(walk, backend="jax")
    for call in range(3):
        p = {"w": {"z": rng.normal(size=2), "b": rng.normal(size=2)}, "a": rng.normal(size=2)}
        x = rng.normal(size=2)
        check(g(p, x), walk(p, x), np.float64)
    assert g.cache_info()[:3] == (2, 1, 1)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_same_jit_given_a_flat_dict_then_a_nested_one_and_back(dtype):
    """One jit of a user function meets a flat dict (its values unlooked at), then a
    dict in a dict (the trace refuses it; from then on the values are looked at), then
    flat ones again; oracle: the function run by Python on NumPy."""
    rng = np.random.default_rng(1)
    g = s2s.jit(walk, backend="jax")
    shapes = [{"w": 3, "a": 3}, {"w": 3, "a": 3}, {"w": {"z": 3, "b": 3}, "a": 3},
              {"c": {"y": 3, "b": 3}, "a": {"u": 3}}, {"w": 3, "a": 3}, {"c": 3, "b": 3}]

    def draw(shape):
        return {k: draw(v) if isinstance(v, dict) else rng.normal(size=v).astype(dtype)
                for k, v in shape.items()}

    for shape in shapes:
        for call in range(3):
            p, x = draw(shape), rng.normal(size=3).astype(dtype)
            check(g(p, x), walk(p, x), dtype)
    assert g.cache_info().hits + g.cache_info().misses == 3 * len(shapes)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_per_example_gradients_of_a_nested_dict_keep_its_order(dtype):
    """``vmap(grad)`` (its keyed call, ``jit_calls.vmapped_call``) of a dict in a dict,
    after a flat-dict call of another jit: each example's gradient against JAX's."""
    rng = np.random.default_rng(2)
    order = [("w", ["z", "b"]), ("a", ["y", "c"])]
    g = s2s.jit(s2s.vmap(s2s.grad(per_example), in_axes=(None, 0, 0)), backend="jax")
    want_fn = jax.vmap(jax.grad(twin(order)), in_axes=(None, 0, 0))
    for call in range(10):
        p = {k: {k2: rng.normal(size=3).astype(dtype) for k2 in inner} for k, inner in order}
        x, y = (rng.normal(size=(5, 3)).astype(dtype) for _ in range(2))
        got = g(p, x, y)
        if call in (0, 2, 9):
            check(got, _ordered(want_fn(p, x, y), order), dtype)
            got["w"]["z"] = None  # (a later result must not share it)
    assert g.cache_info().hits + g.cache_info().misses == 10
