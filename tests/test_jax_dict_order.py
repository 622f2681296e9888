"""``s2s.jit(..., backend="jax")`` walks a dict argument in the caller's key order, as
the NumPy backend and Python do (jax.jit alone would hand the function a dict rebuilt
with its keys sorted), and returns dicts in the order the function builds them.

Every case is checked against the NumPy backend (values and key order) and against
JAX on the same source given a dict rebuilt in the caller's order inside the traced
function (``jax.grad(lambda vals: f_jax(rebuild(arg, vals)))``: what a correct
answer is, leaf by leaf), in float64 and float32, over ten calls whose values change
at every call and whose key order changes between calls (three orders: each is a
signature of its own, compiled once)."""

from __future__ import annotations

import numpy as np
import pytest

import dict_order_fns as F
import s2s
from support import HAVE_JAX, jax, jax_twin

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="needs JAX")

_TWIN = []


def twin(name: str):
    if not _TWIN:
        _TWIN.append(jax_twin(F))
    return getattr(_TWIN[0], name)


# ---- trees with dicts, flattened and rebuilt in their own key order -------------------


def ordered_leaves(tree) -> list:
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in ordered_leaves(t)]
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in ordered_leaves(v)]
    return [tree]


def rebuild(template, leaves):
    """``template``'s structure (its dicts in their key order) holding ``leaves``."""
    it = iter(leaves)

    def build(t):
        if isinstance(t, (tuple, list)):
            return type(t)(build(v) for v in t)
        if isinstance(t, dict):
            return {k: build(v) for k, v in t.items()}
        return next(it)

    return build(template)


def structure(tree):
    """Containers and dict keys, in order (what the results must agree on)."""
    if isinstance(tree, (tuple, list)):
        return (type(tree).__name__,) + tuple(structure(v) for v in tree)
    if isinstance(tree, dict):
        return ("dict",) + tuple((k, structure(v)) for k, v in tree.items())
    return "leaf"


def assert_same(got, expected, dtype, what: str) -> None:
    assert structure(got) == structure(expected), f"{what}: {got!r} vs {expected!r}"
    rtol = 1e-10 if dtype == np.float64 else 2e-5
    for g, e in zip(ordered_leaves(got), ordered_leaves(expected)):
        assert np.asarray(g).dtype == np.asarray(e).dtype, what
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=rtol, atol=rtol,
                                   err_msg=what)


# ---- arguments: the same keys in three orders -----------------------------------------


def _flat(keys, rng, dtype):
    return {k: rng.normal(size=3).astype(dtype) for k in keys}


def _perm(keys, order):
    return [keys[i] for i in ((0, 1, 2), (1, 2, 0), (2, 0, 1))[order][:len(keys)]] \
        if len(keys) == 3 else (list(keys) if order % 2 == 0 else list(keys)[::-1])


ARGS = {
    "flat3": lambda o, r, d: _flat(_perm(("c", "a", "b"), o), r, d),
    "flat2": lambda o, r, d: _flat(_perm(("c", "a"), o), r, d),
    "tuple": lambda o, r, d: (r.normal(size=3).astype(d), _flat(_perm(("c", "a", "b"), o), r, d)),
    "list": lambda o, r, d: [_flat(_perm(("c", "a"), o), r, d), r.normal(size=3).astype(d)],
    "nested": lambda o, r, d: {k: _flat(_perm(inner, o), r, d) for k, inner in zip(
        _perm(("z", "y"), o), (("c", "a"), ("b", "a")))},
}

TRANSFORMABLE = {  # function: its argument
    "weighted_items": "flat3", "doubling": "flat3", "comprehension": "flat3",
    "list_comprehension": "flat2", "callee": "flat3", "in_tuple": "tuple",
    "in_list": "list", "in_dict": "nested",
}
PLAIN_ONLY = {  # s2s's transforms refuse these forms; jit of the function runs them
    "values_list": "flat3", "stacked": "flat3", "key_tuple": "flat2", "rebuilt": "flat3",
}
ORDERS = (0, 0, 1, 0, 1, 2, 2, 0, 1, 2)  # the key order of calls 1..10
NUMPY_AT = (1, 3, 6, 10)  # (calls checked against the NumPy backend too: each order's
# first, and the last; its second call of a signature specializes, at a cost)

DICT_OUT = {"scaled_items": "flat3"}  # (returns a dict built in the argument's order)
CASES = ([(f, a, "call") for f, a in {**TRANSFORMABLE, **PLAIN_ONLY, **DICT_OUT}.items()]
         + [(f, a, m) for f, a in TRANSFORMABLE.items()
            for m in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian")]
         + [(f, a, m) for f, a in DICT_OUT.items() for m in ("jacfwd", "jacrev")])


def _jax_oracle(name: str, mode: str):
    fj = twin(name)

    def on_leaves(template):
        return lambda vals: fj(rebuild(template, vals))

    def run(arg):
        leaves = ordered_leaves(arg)
        f = on_leaves(arg)
        if mode == "call":  # (op by op: its compiles are shared by the three orders)
            return f(leaves)
        if mode == "grad":
            return rebuild(arg, jax.grad(f)(leaves))
        if mode == "value_and_grad":
            value, grads = jax.value_and_grad(f)(leaves)
            return value, rebuild(arg, grads)
        jac = getattr(jax, mode)(f)(leaves)
        if mode == "hessian":  # (a tree of the argument's of trees of it)
            return rebuild(arg, [rebuild(arg, row) for row in jac])
        if isinstance(jac, dict):  # (JAX's own dict is sorted: the function's order)
            return {k: rebuild(arg, jac[k]) for k in arg}
        return rebuild(arg, jac)

    return run


def _make(fn, mode: str, backend: str):
    wrapped = fn if mode == "call" else getattr(s2s, mode)(fn)
    return s2s.jit(wrapped, backend=backend)


def run_case(name: str, argkind: str, mode: str, dtype) -> None:
    fn = getattr(F, name)
    on_jax, on_numpy = _make(fn, mode, "jax"), _make(fn, mode, "numpy")
    oracle = _jax_oracle(name, mode)
    rng = np.random.default_rng(7)
    orders = set()
    for call, order in enumerate(ORDERS, 1):
        arg = ARGS[argkind](order, rng, dtype)
        orders.add(structure(arg))
        before = ordered_leaves(arg)
        got = on_jax(arg)
        what = f"{name} {mode} {np.dtype(dtype).name} call {call} order {list(arg)}"
        if call in NUMPY_AT:
            assert_same(got, on_numpy(arg), dtype, what + " vs the NumPy backend")
        if mode == "call" and name not in TRANSFORMABLE:
            assert_same(got, fn(arg), dtype, what + " vs Python")
        else:
            assert_same(got, oracle(arg), dtype, what + " vs JAX")
        assert all(a is b for a, b in zip(before, ordered_leaves(arg)))  # (untouched)
    assert on_jax.cache_info().compilations == len(orders)  # (one per key order)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name,argkind,mode", CASES, ids=[f"{f}-{m}" for f, _, m in CASES])
def test_dict_order_sweep(name, argkind, mode, dtype):
    run_case(name, argkind, mode, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_grad_of_a_walk_over_items_keeps_the_callers_order(dtype):
    """The reported case: grad of a loop weighting a dict's items by their place."""
    run_case("weighted_items", "flat3", "grad", dtype)


def _mixed(x, q):
    """Arrays in one call, a dict (or a tuple holding one) in the next."""
    total = np.sum(x)
    if isinstance(q, tuple):
        q = q[0]
    if isinstance(q, dict):
        for i, v in enumerate(q.values()):
            total = total * 2.0 + (i + 1) * np.sum(v**2)
        return total, {k: v * total for k, v in q.items()}
    return total + np.sum(q), {"z": x, "y": q}


def test_a_dict_after_calls_of_arrays_is_walked_in_its_order():
    """The guard holds at every call: a jit that ran arrays only (straight to JAX's
    dispatch) walks a dict given later, bare, in a tuple or by keyword, in the
    caller's order, and returns dicts in the order the function built them."""
    f = s2s.jit(_mixed, backend="jax")
    x = np.array([1.0, 2.0])
    for _ in range(3):
        assert_same(f(x, np.ones(2)), _mixed(x, np.ones(2)), np.float64, "arrays")
    for q in ({"c": x + 1.0, "a": x - 3.0}, {"a": x - 3.0, "c": x + 1.0}):
        for call in (f(x, q), f(x, (q,)), f(x, q=q), f(x=x, q=q)):
            assert_same(call, _mixed(x, q), np.float64, f"order {list(q)}")
    assert_same(f(x, np.ones(2)), _mixed(x, np.ones(2)), np.float64, "arrays again")


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("mode", ["vmap", "vmap_grad"])
def test_vmap_walks_each_order_as_given(mode, dtype):
    """jit of vmap and of vmap of grad: per example as the NumPy backend, and as
    jax.vmap of JAX's function given the dict in the caller's order."""
    fj = twin("weighted_items")
    rng = np.random.default_rng(3)
    inner = F.weighted_items if mode == "vmap" else s2s.grad(F.weighted_items)
    on_jax = s2s.jit(s2s.vmap(inner), backend="jax")
    on_numpy = s2s.jit(s2s.vmap(inner), backend="numpy")
    for call, order in enumerate((0, 1, 0, 1), 1):
        keys = _perm(("c", "a", "b"), order)
        batch = {k: rng.normal(size=(4, 2)).astype(dtype) for k in keys}

        def one(vals, keys=keys):
            return fj(dict(zip(keys, vals)))

        per = jax.vmap(one if mode == "vmap" else jax.grad(one))(list(batch.values()))
        expected = per if mode == "vmap" else dict(zip(keys, per))
        got = on_jax(batch)
        what = f"{mode} call {call} order {keys}"
        assert_same(got, on_numpy(batch), dtype, what + " vs the NumPy backend")
        assert_same(got, expected, dtype, what + " vs JAX")


def by_key(tree):
    """``tree`` with its dicts' keys sorted (to compare values only)."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(by_key(v) for v in tree)
    if isinstance(tree, dict):
        return {k: by_key(tree[k]) for k in sorted(tree)}
    return tree


@pytest.mark.slow  # (the default tier's budget: ~0.8 s)
@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_a_dict_returned_through_a_traced_if_keeps_its_values(mode):
    """A dict the function returns from a traced ``if`` (lowered to lax.cond, which
    rebuilds it sorted) under jacfwd/jacrev, its leaves of different sizes: each
    block under its own keys, as the NumPy backend and JAX give them (the order of
    such a dict's keys is JAX's sorted one: docs/backends.md)."""
    fj = twin("branch_scaled")
    on_jax = s2s.jit(getattr(s2s, mode)(F.branch_scaled), backend="jax")
    rng = np.random.default_rng(5)
    for call, sign in enumerate((1.0, -1.0), 1):
        p = {"z": sign * np.abs(rng.normal(size=2)), "a": rng.normal(size=3)}
        got = on_jax(p)
        keys = list(p)
        jac = getattr(jax, mode)(lambda vals: fj(dict(zip(keys, vals))))(list(p.values()))
        expected = {k: dict(zip(keys, jac[k])) for k in keys}
        assert_same(by_key(got), by_key(getattr(s2s, mode)(F.branch_scaled)(p)), np.float64,
                    f"{mode} call {call} vs the NumPy backend")
        assert_same(by_key(got), by_key(expected), np.float64, f"{mode} call {call} vs JAX")


def _node_walk(p):
    total = np.sum(p.w**2)
    for i, (k, v) in enumerate(p.extra.items()):
        total = total * 3.0 + (i + 1) * np.sum(v**2)
    return total, {k: v * total for k, v in p.extra.items()}


def test_a_dict_inside_a_registered_node_is_walked_in_its_order():
    """A dict held by a node registered with JAX (``jax.tree_util.register_dataclass``)
    and by a NamedTuple: walked and returned in the caller's order, as in Python."""
    import dataclasses
    from typing import NamedTuple

    @dataclasses.dataclass
    class Node:
        w: object
        extra: object

    jax.tree_util.register_dataclass(Node, data_fields=["w", "extra"], meta_fields=[])

    class Pair(NamedTuple):
        w: object
        extra: object

    f = s2s.jit(_node_walk, backend="jax")
    x = np.array([1.0, 2.0])
    for make in (Node, Pair):
        for extra in ({"c": x, "a": 3 * x}, {"a": 3 * x, "c": x}, {"c": x + 1, "a": x}):
            p = make(x, extra)
            assert_same(f(p), _node_walk(p), np.float64, f"{make.__name__} {list(extra)}")


# ---- results: a dict already in sorted key order leaves jax.jit as it is -------------


def _result_dicts(x, flip):
    """Dicts the function builds: sorted outer, an inner one sorted or not by a static
    flag, and one with keys Python cannot order."""
    inner = {"b": x * 2.0, "a": np.sin(x)} if flip else {"a": np.sin(x), "b": x * 2.0}
    return {"grads": inner, "loss": np.sum(x ** 2), "z": {1: x, "one": x + 1.0}}


def _key_paths(tree, path=()):
    if isinstance(tree, dict):
        return [(path, tuple(tree))] + [p for k, v in tree.items()
                                         for p in _key_paths(v, path + (k,))]
    return []


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_result_dicts_keep_the_order_the_function_built(dtype):
    """Sorted results come back as JAX rebuilds them (no ``Keyed`` round trip); the
    unsorted inner dict and the one with unorderable keys keep their order; the flag
    changes between calls (two signatures), the values at every call, and a caller
    writing into a returned dict changes nothing later."""
    fn = s2s.jit(_result_dicts, backend="jax", static_argnums=1)
    r = np.random.default_rng(0)
    for call in range(10):
        x = r.normal(size=3).astype(dtype)
        flip = call % 3 == 1
        got = fn(x, flip)
        want = _result_dicts(x, flip)
        assert _key_paths(got) == _key_paths(want), call
        for a, b in zip(ordered_leaves(got), ordered_leaves(want)):
            assert np.asarray(a).dtype == np.asarray(b).dtype
            np.testing.assert_allclose(a, b, rtol=1e-6 if dtype == np.float32 else 1e-12)
        got["grads"]["a"] = None
        got["loss"] = None


def _sorted_only(x):
    return {"a": np.sum(np.sin(x)), "b": x * 3.0}


def test_a_sorted_result_dict_keeps_the_bare_path_and_its_values():
    """Array arguments and a result dict in sorted order: the call stays on the bare
    path (no trace raised ``Unkeyed``), and later calls with other values are right."""
    fn = s2s.jit(_sorted_only, backend="jax")
    for k in range(4):
        x = np.arange(3.0) + k
        got = fn(x)
        assert list(got) == ["a", "b"]
        np.testing.assert_allclose(got["a"], np.sum(np.sin(x)), rtol=1e-12)
        np.testing.assert_allclose(got["b"], x * 3.0, rtol=1e-12)
    assert not fn._dict_out
