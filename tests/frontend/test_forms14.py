"""The functions people actually write (issue 23, forms14; functions in forms14_fns.py).

1. ``match`` with capture, sequence, mapping, built-in class and guard patterns on a
   value known when the code is generated (a module dict or tuple, a dict or tuple
   made in the function, a str, dict or tuple argument: its string, keys or length
   per call, a dict argument's values compared where the code runs): refused before
   ("a capture, sequence, mapping or class pattern is not"); a match on an array stays
   a located refusal.
2. ``jacfwd``/``jacrev``/``hessian`` with respect to a registered dataclass with meta
   fields (``range(p.n_layers)``): "the dict has no key 'n_layers'" before; the
   Jacobian of its gradient by ``jacrev`` is now an object of its class, as JAX's.
3. A constant slice of a tuple or list argument (``sum(t[1:])``, ``t[::-1][:2]``,
   ``for v in t[::-2]``) and ``first, *rest = t`` of one: refused before ("can only
   be indexed with a constant key").

Oracles: central differences of the NumPy function (default tier), JAX on the same
source (``jax_twin``; slow tier, float64 and float32)."""

from __future__ import annotations

import forms14_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, central_grad, jax_twin

import s2s

W = np.array([0.3, -0.7, 0.45, 1.2])
X2 = np.array([0.3, -0.7])


def _fd(f, x, *rest):
    return central_grad(lambda v: f(v, *rest), x)


# ---- 1. match ----------------------------------------------------------------------------

MATCHES = [("match_module_dict", ()), ("match_module_tuple", ()), ("match_local_spec", ()),
           ("match_str_param", ()), ("match_str_param", ("square",)),
           ("match_dict_param", ()), ("match_dict_param", ({"kind": "l1", "weight": 2.0},)),
           ("match_dict_param", ({"kind": "sq", "weight": 3.0, "x": 1},)),
           ("match_dict_param", ({"kind": "zz"},)), ("match_tuple_param", ()),
           ("match_tuple_param", ((3,),)), ("match_tuple_param", ((1, 2, 3, 4),))]


def test_a_match_on_a_static_value_picks_its_case() -> None:
    """Two representative cases' gradients against central differences (every case,
    through every transform: the slow tier)."""
    for name, rest in (MATCHES[0], MATCHES[6]):
        f = getattr(F, name)
        np.testing.assert_allclose(s2s.grad(f)(W, *rest), _fd(f, W, *rest), rtol=1e-6,
                                   atol=1e-7, err_msg=name)


@pytest.mark.slow
def test_a_module_dict_matched_is_read_again_when_it_changes() -> None:
    """Calls 1, 3 and 10: the kind switched at the 3rd, the scale changed at the 10th:
    each call takes the case the dict chooses then (never the first call's)."""
    g, j = s2s.grad(F.match_module_dict), s2s.jit(s2s.grad(F.match_module_dict))
    saved = dict(F.CFG)
    try:
        for call in range(1, 11):
            if call == 3:
                F.CFG["kind"] = "relu"
            if call == 10:
                F.CFG.update(kind="tanh", scale=-1.5)
            x = W * (1 + 0.1 * call)
            want = _fd(F.match_module_dict, x)
            for got in (g(x), j(x)):
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=call)
    finally:
        F.CFG.clear()
        F.CFG.update(saved)


@pytest.mark.slow
def test_a_dict_argument_matched_per_call_keys_and_values() -> None:
    """One transform, the dict's keys and values changing between calls (its keys
    make the code again, its values are compared where the code runs); the result
    never shares memory with the argument."""
    g = s2s.grad(F.match_dict_param)
    for call, cfg in enumerate([{"kind": "l2", "weight": 0.5}, {"kind": "l1", "weight": 2.0},
                                {"kind": "l2", "weight": 4.0}, {"kind": "none"},
                                {"kind": "sq", "weight": 1.0, "a": 2}, {"kind": "l1"}] * 2):
        x = W * (1 + 0.1 * call)
        got = g(x, cfg)
        np.testing.assert_allclose(got, _fd(F.match_dict_param, x, cfg), rtol=1e-6,
                                   atol=1e-7, err_msg=str(cfg))
        assert not np.shares_memory(got, x)
    for w in (np.zeros(0), np.array([0.4])):  # (size 0 and size 1)
        np.testing.assert_allclose(g(w, {"kind": "sq", "weight": 2.0}), 4.0 * w)


@pytest.mark.slow
@pytest.mark.parametrize("which", range(len(MATCHES)))
def test_every_match_case_against_central_differences(which) -> None:
    name, rest = MATCHES[which]
    f = getattr(F, name)
    np.testing.assert_allclose(s2s.grad(f)(W, *rest), _fd(f, W, *rest), rtol=1e-6, atol=1e-7)


def test_a_match_on_an_array_is_refused_at_the_users_line() -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.match_on_array)(W)
    text = str(info.value)
    assert "this `match` tests `w`" in text and "forms14_fns.py" in text
    assert "match w:" in text and "<s2s" not in text


# ---- 2. Jacobians of a registered dataclass with meta fields ------------------------------


def _stack(call: int, dtype=np.float64, cls=None):
    x = (X2 * (1 + 0.1 * call)).astype(dtype)
    return (cls or F.Stack)(x[::-1] * 0.5, x * 0.1, 1 + call % 3,
                            "mlp" if call % 2 else "other")


@pytest.mark.slow
def test_the_hessian_of_a_dataclass_with_meta_fields() -> None:
    """``hessian`` (and ``jacfwd``/``jacrev`` of its gradient) with respect to the
    object: its blocks against central differences of the gradient, an object of
    its class carrying the call's meta fields at each level."""
    p, x = _stack(3), X2

    def flat_grad(z):
        q = F.Stack(z[:2], z[2:], p.n_layers, p.name)
        g = s2s.grad(F.stacked)(q, x)
        return np.concatenate([g.w, g.b])

    z = np.concatenate([p.w, p.b])
    want = np.stack([(flat_grad(z + 1e-6 * e) - flat_grad(z - 1e-6 * e)) / 2e-6
                     for e in np.eye(4)], axis=-1)
    for make in (s2s.hessian, lambda f: s2s.jacrev(s2s.grad(f))):
        h = make(F.stacked)(p, x)
        assert type(h) is F.Stack and type(h.w) is F.Stack and h.n_layers == p.n_layers
        got = np.block([[h.w.w, h.w.b], [h.b.w, h.b.b]])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


# ---- 3. slices and starred unpacking of a tuple or list argument ------------------------

T = (X2, 2 * X2 + 0.1, 3 * X2 - 0.2)
SLICED = ["tail_sum", "reversed_pair", "first_and_rest", "every_other_back"]


def test_first_and_rest_of_a_tuple_argument() -> None:
    g = s2s.grad(F.first_and_rest)(T)
    for k in range(3):
        want = central_grad(lambda v: F.first_and_rest(T[:k] + (v,) + T[k + 1:]), T[k])
        np.testing.assert_allclose(g[k], want, rtol=1e-6, atol=1e-7)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLICED)
def test_a_slice_of_a_tuple_argument(name) -> None:
    """Each item's gradient against central differences, for tuples and lists of
    lengths 3, 2 (and 1 where Python's function runs), the gradient in the
    argument's type; its leaves never share memory with the argument's."""
    f = getattr(F, name)
    for t in (T, list(T), T[:2]) + ((T[:1],) if name in ("first_and_rest",
                                                         "every_other_back") else ()):
        g = s2s.grad(f)(t)
        assert type(g) is type(t) and len(g) == len(t)
        for k in range(len(t)):
            want = central_grad(lambda v: f(t[:k] + type(t)([v]) + t[k + 1:]), t[k])
            np.testing.assert_allclose(g[k], want, rtol=1e-6, atol=1e-7, err_msg=f"{k}")
            assert not any(np.shares_memory(g[k], a) for a in t)


@pytest.mark.slow
def test_starred_unpacking_of_an_array() -> None:
    f = F.head_and_rest_of_array
    for x in (W, W[:2]):
        np.testing.assert_allclose(s2s.grad(f)(x), central_grad(f, x), rtol=1e-6, atol=1e-7)


# ---- -m slow: against JAX on the same source --------------------------------------------

DTYPES = [np.float64, np.float32]


@pytest.fixture(scope="module")
def J():
    return jax_twin(F)


def _close(got, want, dtype) -> None:
    assert_close_to(got, want, dtype, f64=1e-8, f32=5e-4, dtype_of="expected-arrays",
                    scale_atol=True)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_matches_against_jax(dtype, J) -> None:
    import jax

    for name, rest in MATCHES:
        f, g = getattr(F, name), getattr(J, name)
        x = W.astype(dtype)
        want = jax.grad(g)(x, *rest)
        _close(s2s.grad(f)(x, *rest), want, dtype)
        _close(s2s.value_and_grad(f)(x, *rest), jax.value_and_grad(g)(x, *rest), dtype)
        _close(s2s.jit(s2s.grad(f))(x, *rest), want, dtype)
        _close(s2s.hessian(f)(x, *rest), jax.hessian(g)(x, *rest), dtype)
        v = (x[::-1] * 0.5).astype(dtype)
        if not rest:  # (a partial's or a closure's dict is not read per call: refused)
            _close(s2s.jvp(f, (x,), (v,)), jax.jvp(g, (x,), (v,)), dtype)
        batch = np.stack([x, 0.5 * x]).astype(dtype)
        _close(s2s.vmap(s2s.grad(f), in_axes=(0,) + (None,) * len(rest))(batch, *rest),
               jax.vmap(jax.grad(g), in_axes=(0,) + (None,) * len(rest))(batch, *rest), dtype)
    x = W.astype(dtype)
    _close(s2s.jit(s2s.grad(F.match_module_dict), backend="jax")(x),
           jax.grad(J.match_module_dict)(x), dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_dataclass_meta_jacobians_against_jax(dtype, J) -> None:
    import jax

    for cls in (F.Stack, J.Stack):  # (the twin's class for JAX's own calls)
        try:
            jax.tree_util.register_dataclass(cls, data_fields=["w", "b"],
                                             meta_fields=["n_layers", "name"])
        except ValueError:  # (registered already)
            pass
    for call in (1, 3, 10):
        p, q = _stack(call, dtype), _stack(call, dtype, J.Stack)
        x = (X2 * (1 - 0.05 * call)).astype(dtype)
        pairs = [(s2s.hessian, jax.hessian), (s2s.jacfwd, jax.jacfwd), (s2s.jacrev, jax.jacrev),
                 (lambda f, **k: s2s.jacfwd(s2s.grad(f, **k), **k),
                  lambda f, **k: jax.jacfwd(jax.grad(f, **k), **k)),
                 (lambda f, **k: s2s.jacrev(s2s.grad(f, **k), **k),
                  lambda f, **k: jax.jacrev(jax.grad(f, **k), **k))]
        for mine, theirs in pairs:
            for kw in ({}, {"argnums": (0, 1)}):
                got, want = mine(F.stacked, **kw)(p, x), theirs(J.stacked, **kw)(q, x)
                g_leaves, g_tree = jax.tree_util.tree_flatten(got)
                w_leaves, w_tree = jax.tree_util.tree_flatten(want)
                assert str(g_tree) == str(w_tree).replace(J.__name__, F.__name__)
                _close(g_leaves, w_leaves, dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", SLICED)
def test_slices_against_jax(name, dtype, J) -> None:
    import jax

    f, g = getattr(F, name), getattr(J, name)
    t = tuple(a.astype(dtype) for a in T)
    _close(s2s.grad(f)(t), jax.grad(g)(t), dtype)
    _close(s2s.jit(s2s.grad(f))(t), jax.grad(g)(t), dtype)
    _close(s2s.hessian(f)(t), jax.hessian(g)(t), dtype)
    _close(s2s.jvp(f, (t,), (t[::-1],)), jax.jvp(g, (t,), (t[::-1],)), dtype)
    batch = tuple(np.stack([a, 0.5 * a]) for a in t)
    _close(s2s.vmap(s2s.grad(f))(batch), jax.vmap(jax.grad(g))(batch), dtype)


# ---- 4. dicts a callee returned, merged ----------------------------------------------------


def test_merging_dicts_a_callee_returned() -> None:
    """``step(...) | {...}``, ``out |= {...}``, ``{**step(...), **{...}}`` (refused
    before: "`|` of a dict and a value that is not a dict in this call")."""
    f = F.merged_step_dicts
    x = np.array([0.2, -0.1])
    np.testing.assert_allclose(s2s.grad(f)(x), central_grad(f, x), rtol=1e-6, atol=1e-8)


def test_merging_into_a_dict_a_callee_hands_back_stays_refused() -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.merged_into_a_handed_dict)(X2)
    assert "out |=" in str(info.value) and "forms14_fns.py" in str(info.value)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_merged_dicts_against_jax(dtype, J) -> None:
    import jax

    f, g = F.merged_step_dicts, J.merged_step_dicts
    for call in (1, 3, 10):
        x = (np.array([0.2, -0.1]) * (1 + 0.3 * call) - 0.05 * call).astype(dtype)
        want = jax.grad(g)(x)
        for got in (s2s.grad(f)(x), s2s.jit(s2s.grad(f))(x),
                    s2s.jit(s2s.grad(f), backend="jax")(x)):
            _close(got, want, dtype)
            assert not np.shares_memory(got, x)
        _close(s2s.value_and_grad(f)(x), jax.value_and_grad(g)(x), dtype)
        _close(s2s.hessian(f)(x), jax.hessian(g)(x), dtype)
        _close(s2s.jvp(f, (x,), (x[::-1],)), jax.jvp(g, (x,), (x[::-1],)), dtype)
        batch = np.stack([x, 0.5 * x, np.zeros_like(x)])
        _close(s2s.vmap(s2s.grad(f))(batch), jax.vmap(jax.grad(g))(batch), dtype)


# ---- 5. d["k"] += v where other names hold the item ---------------------------------------


def test_an_item_add_rebinds_every_plain_name_holding_it() -> None:
    x = np.array([0.3, -0.7, 1.1])
    for name in ("item_alias_chain", "item_added_then_scaled"):
        f = getattr(F, name)
        np.testing.assert_allclose(s2s.grad(f)(x), central_grad(lambda v: f(v.copy()), x),
                                   rtol=1e-6, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("name", ["item_of_an_argument", "item_with_a_view"])
def test_an_item_add_an_argument_or_view_shares_stays_refused(name) -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(getattr(F, name))(np.array([0.3, -0.7, 1.1]))
    assert 'state["acc"] += ' in str(info.value) and "forms14_fns.py" in str(info.value)
