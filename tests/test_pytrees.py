"""Pytree arguments (NamedTuples, registered classes and dataclasses, OrderedDict,
defaultdict, None) and objects read inside the function (``p.w``, bound methods),
against JAX on the same inputs (tests/support.py ``jax_twin``), float64 and float32."""

from __future__ import annotations

from collections import OrderedDict, defaultdict

import jax
import numpy as np
import pytest

import s2s
from s2s import tree_util as tu

import pytree_fns as F
from support import jax_twin

J = jax_twin(F)
DTYPES = [np.float64, np.float32]


def tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)


def rng_array(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def node_names(treedef) -> str:
    """A treedef's text with module paths dropped: s2s's classes and the JAX twin's
    are namesakes from two modules."""
    return str(treedef).replace("pytree_fns_jax.", "").replace("pytree_fns.", "")


def assert_same_tree(got, want, dtype):
    """The same structure (node types by name, JAX's leaf order) and close leaves."""
    g_leaves, g_def = tu.tree_flatten(got)
    w_leaves, w_def = jax.tree_util.tree_flatten(want)
    assert len(g_leaves) == len(w_leaves), (g_def, w_def)
    assert g_def.num_nodes == w_def.num_nodes, (g_def, w_def)
    for g, w in zip(g_leaves, w_leaves):
        w = np.asarray(w)
        if w.dtype == jax.dtypes.float0:
            assert np.asarray(g).dtype == s2s.api.float0 and np.shape(g) == w.shape
            continue
        assert np.asarray(g).dtype == w.dtype, (np.asarray(g).dtype, w.dtype)
        np.testing.assert_allclose(np.asarray(g), w, **tol(dtype))


def params(rng, dtype, cls=F.Params, jcls=J.Params):
    w, b = rng_array(rng, (3, 2), dtype), rng_array(rng, (2,), dtype)
    return cls(w, b), jcls(w, b)


def net(rng, dtype, mod):
    l0 = mod.Layer(rng_array(rng, (3, 4), dtype), rng_array(rng, (4,), dtype))
    l1 = mod.Layer(rng_array(rng, (4, 2), dtype), rng_array(rng, (2,), dtype))
    return mod.Net([l0, l1], 2.0)


def twin_net(n):
    return J.Net([J.Layer(layer.w, layer.b) for layer in n.layers], n.scale)


# ---- grad and value_and_grad -----------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["params_loss", "params_loss_inline"])
def test_namedtuple_gradient_is_the_same_namedtuple(name, dtype):
    rng = np.random.default_rng(0)
    x = rng_array(rng, (5, 3), dtype)
    g = s2s.grad(getattr(F, name))
    for call in range(3):  # first, second (specialized) and third calls, new values
        p, jp = params(rng, dtype)
        got = g(p, x)
        assert type(got) is F.Params
        assert_same_tree(got, jax.grad(getattr(J, name))(jp, x), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_value_and_grad_argnums_tuple(dtype):
    rng = np.random.default_rng(1)
    p, jp = params(rng, dtype)
    x = rng_array(rng, (5, 3), dtype)
    got = s2s.value_and_grad(F.params_loss, argnums=(0, 1))(p, x)
    want = jax.value_and_grad(J.params_loss, argnums=(0, 1))(jp, x)
    assert type(got[1][0]) is F.Params
    assert_same_tree(got, want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_registered_class_and_dataclass_through_a_callee(dtype):
    rng = np.random.default_rng(2)
    x = rng_array(rng, (5, 3), dtype)
    g = s2s.grad(F.net_loss)
    for call in range(3):
        n = net(rng, dtype, F)
        got = g(n, x)
        assert type(got) is F.Net and all(type(layer) is F.Layer for layer in got.layers)
        assert got.scale == 2.0  # meta data: as the argument's
        assert_same_tree(got, jax.grad(J.net_loss)(twin_net(n), x), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dataclass_meta_field_read_when_not_differentiated(dtype):
    rng = np.random.default_rng(3)
    n = net(rng, dtype, F)
    x = rng_array(rng, (3, 4), dtype)
    got = s2s.grad(F.net_loss_scaled, argnums=1)(n, x)
    assert_same_tree(got, jax.grad(J.net_loss_scaled, argnums=1)(twin_net(n), x), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_register_pytree_node(dtype):
    rng = np.random.default_rng(4)
    a, b, x = (rng_array(rng, (4,), dtype) for _ in range(3))
    got = s2s.grad(F.pair_loss)(F.Pair(a, b), x)
    assert type(got) is F.Pair
    assert_same_tree(got, jax.grad(J.pair_loss)(J.Pair(a, b), x), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dict_key_order(dtype):
    """JAX flattens dicts in sorted key order; s2s's tree_util does too, and s2s's
    gradient dict keeps the argument's own key order (JAX's comes back sorted)."""
    rng = np.random.default_rng(5)
    d = {"z": rng_array(rng, (3,), dtype), "a": rng_array(rng, (3,), dtype)}
    x = rng_array(rng, (3,), dtype)
    got = s2s.grad(F.dict_loss)(d, x)
    want = jax.grad(J.dict_loss)(d, x)
    assert list(got) == ["z", "a"] and list(want) == ["a", "z"]
    assert_same_tree(got, want, dtype)
    assert [k for k in tu.tree_structure(d).entries()] == ["a", "z"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_ordered_dict_and_defaultdict(dtype):
    rng = np.random.default_rng(6)
    z, a, x = (rng_array(rng, (3,), dtype) for _ in range(3))
    od = OrderedDict(z=z, a=a)
    got = s2s.grad(F.dict_loss)(od, x)
    assert type(got) is OrderedDict and list(got) == ["z", "a"]
    assert_same_tree(got, jax.grad(J.dict_loss)(od, x), dtype)
    dd = defaultdict(list, z=z, a=a)
    got = s2s.grad(F.dict_loss)(dd, x)
    assert type(got) is defaultdict and got.default_factory is list
    assert_same_tree(got, jax.grad(J.dict_loss)(dd, x), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_none_is_an_empty_subtree(dtype):
    rng = np.random.default_rng(7)
    w, c, x = (rng_array(rng, (3,), dtype) for _ in range(3))
    p = (w, None, {"c": c, "d": None})
    got = s2s.grad(F.none_loss)(p, x)
    assert got[1] is None and got[2]["d"] is None
    assert_same_tree(got, jax.grad(J.none_loss)(p, x), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_registered_nodes_inside_a_dict(dtype):
    rng = np.random.default_rng(8)
    w, b, a, pb, x = (rng_array(rng, (3,), dtype) for _ in range(5))
    p = {"layer": F.Layer(w, b), "pair": F.Pair(a, pb)}
    jp = {"layer": J.Layer(w, b), "pair": J.Pair(a, pb)}
    got = s2s.grad(F.nested_loss)(p, x)
    assert type(got["layer"]) is F.Layer and type(got["pair"]) is F.Pair
    assert_same_tree(got, jax.grad(J.nested_loss)(jp, x), dtype)


def test_attribute_of_an_array_is_still_refused():
    with pytest.raises(s2s.UnsupportedSyntaxError, match="not an attribute of NumPy"):
        s2s.grad(F.params_loss)(np.ones((3, 2)), np.ones((5, 3)))


# ---- bound methods ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_bound_method_follows_its_objects_attributes(dtype):
    rng = np.random.default_rng(9)
    x = rng_array(rng, (5, 3), dtype)
    model = F.Model(rng_array(rng, (3, 2), dtype))
    g = s2s.grad(model.loss)
    for call in range(3):
        model.W = rng_array(rng, (3, 2), dtype)  # changes between calls: followed
        assert_same_tree(g(x), jax.grad(J.Model(model.W).loss)(x), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_method_of_a_registered_self(dtype):
    """``grad(Layer.loss)(layer, x)`` differentiates ``self``; ``grad(layer.loss)``
    reads it as a constant, as JAX does."""
    rng = np.random.default_rng(10)
    w, b = rng_array(rng, (3, 2), dtype), rng_array(rng, (2,), dtype)
    x = rng_array(rng, (5, 3), dtype)
    got = s2s.grad(F.Layer.loss)(F.Layer(w, b), x)
    assert type(got) is F.Layer
    assert_same_tree(got, jax.grad(J.Layer.loss)(J.Layer(w, b), x), dtype)
    got = s2s.grad(F.Layer(w, b).loss)(x)
    assert_same_tree(got, jax.grad(J.Layer(w, b).loss)(x), dtype)


# ---- vjp, jvp, vmap, jit ------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_vjp_cotangent_is_the_same_namedtuple(dtype):
    rng = np.random.default_rng(11)
    p, jp = params(rng, dtype)
    x = rng_array(rng, (5, 3), dtype)
    out, vjp_fn = s2s.vjp(F.params_out, p, x)
    jout, jvjp_fn = jax.vjp(J.params_out, jp, x)
    ct = rng_array(rng, np.shape(out), dtype)
    got = vjp_fn(ct)
    assert type(got[0]) is F.Params
    assert_same_tree((out, got), (jout, jvjp_fn(ct)), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_jvp_with_namedtuple_primals_and_tangents(dtype):
    rng = np.random.default_rng(12)
    p, jp = params(rng, dtype)
    t, jt = params(rng, dtype)
    x, tx = rng_array(rng, (5, 3), dtype), rng_array(rng, (5, 3), dtype)
    got = s2s.jvp(F.params_loss, (p, x), (t, tx))
    assert_same_tree(got, jax.jvp(J.params_loss, (jp, x), (jt, tx)), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_vmap_over_a_namedtuple(dtype):
    rng = np.random.default_rng(13)
    w, b = rng_array(rng, (4, 3, 2), dtype), rng_array(rng, (4, 2), dtype)
    x = rng_array(rng, (5, 3), dtype)
    got = s2s.vmap(F.params_loss, in_axes=(0, None))(F.Params(w, b), x)
    want = jax.vmap(J.params_loss, in_axes=(0, None))(J.Params(w, b), x)
    assert_same_tree(got, want, dtype)
    got = s2s.vmap(F.params_loss, in_axes=(F.Params(0, None), None))(
        F.Params(w, b[0]), x)
    want = jax.vmap(J.params_loss, in_axes=(J.Params(0, None), None))(
        J.Params(w, b[0]), x)
    assert_same_tree(got, want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_vmap_of_grad_is_the_arguments_type(dtype):
    """vmap of a gradient with respect to a NamedTuple: the NamedTuple, batched, as
    grad gives it and JAX's vmap does (the batched code returns its dict); calls 1 to
    3 with new values."""
    rng = np.random.default_rng(16)
    xs = rng_array(rng, (4, 5, 3), dtype)  # (4 examples of a (5, 3) batch)
    g = s2s.vmap(s2s.grad(F.params_loss), in_axes=(None, 0))
    for call in range(3):
        p, jp = params(rng, dtype)
        got = g(p, xs)
        assert type(got) is F.Params and got.w.shape == (4, 3, 2)
        assert_same_tree(got, jax.vmap(jax.grad(J.params_loss), in_axes=(None, 0))(jp, xs),
                         dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_vmap_of_grad_is_the_arguments_type_everywhere(dtype):
    """The same for value_and_grad with argnums a tuple, a batched NamedTuple, a
    registered dataclass of registered classes (its meta field kept), a
    register_pytree_node class, and s2s.jit of the vmap on both backends."""
    rng = np.random.default_rng(17)
    xs = rng_array(rng, (4, 5, 3), dtype)
    p, jp = params(rng, dtype)
    vg = s2s.value_and_grad(F.params_loss, argnums=(0, 1))
    want = jax.vmap(jax.value_and_grad(J.params_loss, argnums=(0, 1)), in_axes=(None, 0))(
        jp, xs)
    for fn in (s2s.vmap(vg, in_axes=(None, 0)),
               s2s.jit(s2s.vmap(vg, in_axes=(None, 0))),
               s2s.jit(s2s.vmap(vg, in_axes=(None, 0)), backend="jax")):
        got = fn(p, xs)
        assert type(got[1][0]) is F.Params
        assert_same_tree(got, want, dtype)
    w, b = rng_array(rng, (4, 3, 2), dtype), rng_array(rng, (4, 2), dtype)
    got = s2s.vmap(s2s.grad(F.params_loss), in_axes=(0, None))(F.Params(w, b), xs[0])
    assert type(got) is F.Params and got.w.shape == (4, 3, 2)
    assert_same_tree(got, jax.vmap(jax.grad(J.params_loss), in_axes=(0, None))(
        J.Params(w, b), xs[0]), dtype)
    n = net(rng, dtype, F)
    got = s2s.vmap(s2s.grad(F.net_loss), in_axes=(None, 0))(n, xs)
    assert type(got) is F.Net and all(type(layer) is F.Layer for layer in got.layers)
    assert got.scale == 2.0
    assert_same_tree(got, jax.vmap(jax.grad(J.net_loss), in_axes=(None, 0))(twin_net(n), xs),
                     dtype)
    a, b = rng_array(rng, (3,), dtype), rng_array(rng, (3,), dtype)
    got = s2s.vmap(s2s.grad(F.pair_loss), in_axes=(None, 0))(F.Pair(a, b), xs[:, 0])
    assert type(got) is F.Pair
    assert_same_tree(got, jax.vmap(jax.grad(J.pair_loss), in_axes=(None, 0))(
        J.Pair(a, b), xs[:, 0]), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_jit_of_grad_with_namedtuple(dtype):
    rng = np.random.default_rng(14)
    x = rng_array(rng, (5, 3), dtype)
    f = s2s.jit(s2s.grad(F.params_loss))
    for call in range(2):
        p, jp = params(rng, dtype)
        assert_same_tree(f(p, x), jax.jit(jax.grad(J.params_loss))(jp, x), dtype)


# ---- tree_util ------------------------------------------------------------------------


def test_tree_util_matches_jax():
    rng = np.random.default_rng(15)
    n = net(rng, np.float64, F)
    tree = {"b": (1.0, None, [2.0, 3.0]), "a": OrderedDict(y=4.0, x=5.0),
            "p": F.Params(6.0, 7.0), "n": n}
    jtree = {"b": (1.0, None, [2.0, 3.0]), "a": OrderedDict(y=4.0, x=5.0),
             "p": J.Params(6.0, 7.0), "n": twin_net(n)}
    got, want = tu.tree_leaves(tree), jax.tree_util.tree_leaves(jtree)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    leaves, treedef = tu.tree_flatten(tree)
    back = tu.tree_unflatten(treedef, leaves)
    assert type(back["p"]) is F.Params and type(back["n"]) is F.Net
    doubled = tu.tree_map(lambda v: 2 * v, tree)
    assert doubled["b"][1] is None and doubled["p"].w == 12.0
    assert tu.tree_structure(tree).num_leaves == jax.tree_util.tree_structure(
        jtree).num_leaves


# ---- bound methods under every transform -------------------------------------------


def _method_transforms(model, jmodel):
    """(s2s transform, JAX transform, takes a matrix) of a bound method."""
    return [
        (s2s.vmap(model.predict), jax.vmap(jmodel.predict), True),
        (lambda x: s2s.jvp(model.loss, (x,), (np.ones_like(x),)),
         lambda x: jax.jvp(jmodel.loss, (x,), (np.ones_like(x),)), False),
        (lambda x: s2s.vjp(model.predict, x)[1](np.ones((5, 2), x.dtype)),
         lambda x: jax.vjp(jmodel.predict, x)[1](np.ones((5, 2), x.dtype)), False),
        (s2s.jacfwd(model.predict), jax.jacfwd(jmodel.predict), False),
        (s2s.jacrev(model.predict), jax.jacrev(jmodel.predict), False),
        (s2s.hessian(model.loss), jax.hessian(jmodel.loss), False),
        (s2s.value_and_grad(model.loss_aux, has_aux=True),
         jax.value_and_grad(jmodel.loss_aux, has_aux=True), False),
    ]


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)])
def test_bound_methods_read_self_at_each_call_under_every_transform(dtype):
    """vmap, jvp, vjp, jacfwd, jacrev, hessian and value_and_grad of ``model.f``: the
    object's attributes are constants of each call, as JAX closes over them; W is
    changed between calls 1, 3 and 10 (each transform made once)."""
    rng = np.random.default_rng(20)
    model = F.Model(rng_array(rng, (3, 2), dtype))
    transforms = _method_transforms(model, model)  # (JAX side rebuilt per call)
    for call in range(1, 11):
        if call in (1, 3, 10):
            model.W = rng_array(rng, (3, 2), dtype)
        if call not in (1, 2, 3, 10):
            continue
        jmodel = J.Model(model.W)
        x = rng_array(rng, (5, 3), dtype)
        for (got_fn, _, batched), (_, want_fn, _) in zip(
                transforms, _method_transforms(model, jmodel)):
            xs = rng_array(rng, (4, 5, 3), dtype) if batched else x
            assert_same_tree(got_fn(xs), want_fn(xs), dtype)


def test_a_bound_methods_object_is_never_differentiated_nor_batched():
    model = F.Model(np.ones((3, 2)))
    x = np.ones((5, 3))
    out, back = s2s.vjp(model.loss, x)
    assert len(back(1.0)) == 1  # one cotangent: x's, not self's
    assert s2s.vmap(model.predict, in_axes=(0,))(np.ones((4, 5, 3))).shape == (4, 5, 2)
    assert s2s.jacrev(model.predict, argnums=0)(x).shape == (5, 2, 5, 3)


# ---- objects the function builds and returns ---------------------------------------

BUILDERS = ["make_out", "make_layer", "make_stats", "through_callee", "nested_out"]


def _types(tree):
    """The node types of a pytree by name, in order (s2s's and JAX's are namesakes)."""
    if isinstance(tree, dict):
        return ("dict", tuple((k, _types(v)) for k, v in sorted(tree.items())))
    if isinstance(tree, (tuple, list)):
        return (type(tree).__name__, tuple(_types(c) for c in tree))
    if type(tree).__name__ in ("Layer", "Stats"):
        return (type(tree).__name__, tuple(_types(v) for _, v in sorted(vars(tree).items())))
    return "leaf"


def _same_built(got, want, dtype):
    assert _types(got) == _types(want), (_types(got), _types(want))
    assert_same_tree(got, want, dtype)


@pytest.mark.parametrize("name, dtype", [
    pytest.param(n, d, marks=() if n == "make_out" or d == np.float64 and n in (
        "make_layer", "through_callee") else pytest.mark.slow)
    for n in BUILDERS for d in DTYPES])
def test_built_objects_come_back_in_their_type(name, dtype):
    """vmap, jvp (primal and tangent), vjp (cotangent given in the type), jacfwd,
    jacrev and jit of a function returning a NamedTuple, a registered class or a
    registered dataclass: the user's type, as JAX returns it."""
    rng = np.random.default_rng(21)
    f, jf = getattr(F, name), getattr(J, name)
    v = s2s.vmap(f)
    for call in range(3):  # (the same vmap, new values)
        xs = rng_array(rng, (4, 3), dtype) * (-1) ** call
        _same_built(v(xs), jax.vmap(jf)(xs), dtype)
    x, t = rng_array(rng, (3,), dtype), rng_array(rng, (3,), dtype)
    _same_built(s2s.jvp(f, (x,), (t,)), jax.jvp(jf, (x,), (t,)), dtype)
    out, back = s2s.vjp(f, x)
    jout, jback = jax.vjp(jf, x)
    _same_built(out, jout, dtype)
    ct = jax.tree_util.tree_map(lambda a: np.asarray(a) * 0 + 1.5, jout)
    _same_built(back(out), jback(jout), dtype)
    _same_built(back(F_like(out, ct)), jback(ct), dtype)
    _same_built(s2s.jacfwd(f)(x), jax.jacfwd(jf)(x), dtype)
    _same_built(s2s.jacrev(f)(x), jax.jacrev(jf)(x), dtype)
    _same_built(s2s.jit(f)(x), jax.jit(jf)(x), dtype)


def F_like(out, jtree):
    """``jtree``'s leaves in ``out``'s (s2s-side) structure."""
    leaves = [np.asarray(a) for a in jax.tree_util.tree_leaves(jtree)]
    return tu.tree_unflatten(tu.tree_structure(out), leaves)


@pytest.mark.parametrize("dtype", DTYPES)
def test_an_object_built_on_either_path_of_an_if(dtype):
    """(JAX's vmap and jacfwd cannot run a Python `if` on a traced value; jvp and vjp
    can, as s2s's.)"""
    for sign in (1, -1):
        x = rng_array(np.random.default_rng(24), (3,), dtype) ** 2 * sign
        _same_built(s2s.jvp(F.branch_out, (x,), (x,)), jax.jvp(J.branch_out, (x,), (x,)),
                    dtype)
        out, back = s2s.vjp(F.branch_out, x)
        jout, jback = jax.vjp(J.branch_out, x)
        _same_built(out, jout, dtype)
        _same_built(back(out), jback(jout), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_built_aux_output_comes_back_in_its_type(dtype):
    rng = np.random.default_rng(22)
    vg = s2s.value_and_grad(F.out_aux, has_aux=True)
    g = s2s.grad(F.out_aux, has_aux=True)
    jitted = s2s.jit(s2s.grad(F.out_aux, has_aux=True))
    for call in range(10):  # (the same functions: calls 2-10 take the signature's path)
        x = rng_array(rng, (3,), dtype) * (1 + call / 10)
        _same_built(vg(x), jax.value_and_grad(J.out_aux, has_aux=True)(x), dtype)
        _same_built(g(x), jax.grad(J.out_aux, has_aux=True)(x), dtype)
        _same_built(jitted(x), jax.grad(J.out_aux, has_aux=True)(x), dtype)
        _same_built(s2s.jvp(F.out_aux, (x,), (x,), has_aux=True),
                    jax.jvp(J.out_aux, (x,), (x,), has_aux=True), dtype)
        _same_built(s2s.jvp(F.make_out, (x,), (x,)), jax.jvp(J.make_out, (x,), (x,)),
                    dtype)
    _same_built(s2s.jacfwd(F.make_out, has_aux=False)(x), jax.jacfwd(J.make_out)(x), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_class_whose_constructor_computes_is_built_as_jax_builds_it(dtype):
    """The constructor's body runs in the function (differentiated like the rest);
    the object given back is tree_unflatten of its children, never a second
    __init__ (JAX's rebuild): Scaled's unflatten calls __init__ on children / 2."""
    rng = np.random.default_rng(32)
    for call in range(3):
        x = rng_array(rng, (3,), dtype)
        xs = rng_array(rng, (2, 3), dtype)
        # (JAX's own vmap calls Scaled's unflatten on None, which it cannot take: the
        # oracle is the Python loop over the examples, the function run as it is)
        got = s2s.vmap(F.make_scaled)(xs)
        assert type(got) is F.Scaled and got.w.dtype == dtype
        np.testing.assert_allclose(got.w, np.stack([F.make_scaled(r).w for r in xs]),
                                   **tol(dtype))
        assert_same_tree(s2s.grad(F.uses_scaled)(x), jax.grad(J.uses_scaled)(x), dtype)
        assert_same_tree(s2s.grad(F.uses_normed)(x), jax.grad(J.uses_normed)(x), dtype)
        assert_same_tree(s2s.hessian(F.uses_normed)(x), jax.hessian(J.uses_normed)(x),
                         dtype)
        _same_built(s2s.vmap(F.makes_normed)(xs), jax.vmap(J.makes_normed)(xs), dtype)
        _same_built(s2s.jacrev(F.makes_normed)(x), jax.jacrev(J.makes_normed)(x), dtype)


def test_a_constructor_calling_a_method_is_refused_at_the_call():
    with pytest.raises(s2s.UnsupportedSyntaxError, match="calls a method") as e:
        s2s.vmap(F.makes_checked)(np.ones((2, 3)))
    assert "pytree_fns.py" in str(e.value) and "return Checked(x)" in str(e.value)


# ---- a NamedTuple's fields by position -------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_namedtuple_fields_by_position_and_unpacking(dtype):
    rng = np.random.default_rng(23)
    p, jp = params(rng, dtype)
    x = rng_array(rng, (5, 3), dtype)
    got = s2s.grad(F.by_position)(p, x)
    assert type(got) is F.Params
    assert_same_tree(got, jax.grad(J.by_position)(jp, x), dtype)
    assert_same_tree(s2s.value_and_grad(F.by_position, argnums=(0, 1))(p, x),
                     jax.value_and_grad(J.by_position, argnums=(0, 1))(jp, x), dtype)
    t, jt = params(rng, dtype)
    assert_same_tree(s2s.jvp(F.by_position, (p, x), (t, x)),
                     jax.jvp(J.by_position, (jp, x), (jt, x)), dtype)
    assert_same_tree(s2s.vjp(F.by_position, p, x)[1](dtype(1.5)),
                     jax.vjp(J.by_position, jp, x)[1](dtype(1.5)), dtype)
    w, b = rng_array(rng, (4, 3, 2), dtype), rng_array(rng, (4, 2), dtype)
    assert_same_tree(s2s.vmap(F.by_position, in_axes=(0, None))(F.Params(w, b), x),
                     jax.vmap(J.by_position, in_axes=(0, None))(J.Params(w, b), x), dtype)
    # a NamedTuple the function built, by position and unpacked
    assert_same_tree(s2s.grad(F.built_by_position)(x), jax.grad(J.built_by_position)(x), dtype)
    assert_same_tree(s2s.vmap(F.built_by_position)(x), jax.vmap(J.built_by_position)(x), dtype)


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)])
def test_compositions_give_the_built_type_back(dtype):
    xs = rng_array(np.random.default_rng(25), (4, 3), dtype)
    pairs = [
        (lambda: s2s.jvp(s2s.vmap(F.make_out), (xs,), (xs,)),
         lambda: jax.jvp(jax.vmap(J.make_out), (xs,), (xs,))),
        (lambda: s2s.vmap(s2s.jacfwd(F.make_out))(xs.astype(np.float64)),  # (see below)
         lambda: jax.vmap(jax.jacfwd(J.make_out))(xs.astype(np.float64))),
        (lambda: s2s.jacrev(s2s.vmap(F.make_out))(xs), lambda: jax.jacrev(jax.vmap(J.make_out))(xs)),
        (lambda: s2s.jit(s2s.vmap(F.make_out))(xs), lambda: jax.jit(jax.vmap(J.make_out))(xs)),
        (lambda: s2s.jit(s2s.vmap(F.make_out), backend="jax")(xs),
         lambda: jax.jit(jax.vmap(J.make_out))(xs)),
        (lambda: s2s.jit(s2s.value_and_grad(F.out_aux, has_aux=True), backend="jax")(xs[0]),
         lambda: jax.value_and_grad(J.out_aux, has_aux=True)(xs[0])),
    ]
    for got, want in pairs:
        _same_built(got(), want(), dtype)


TRANSFORMS = {
    "grad": (s2s.grad, jax.grad),
    "jvp": (lambda f: lambda x: s2s.jvp(f, (x,), (np.cos(x),))[1],
            lambda f: lambda x: jax.jvp(f, (x,), (np.cos(x),))[1]),
    "vmap": (s2s.vmap, jax.vmap),
    "jacfwd": (s2s.jacfwd, jax.jacfwd),
    "jacrev": (s2s.jacrev, jax.jacrev),
    "hessian": (s2s.hessian, jax.hessian),
    "vmap_of_grad": (lambda f: s2s.vmap(s2s.grad(f)), lambda f: jax.vmap(jax.grad(f))),
}


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transform", TRANSFORMS)
def test_a_built_namedtuple_is_read_by_position_in_callees(transform, dtype):
    """A NamedTuple the function builds, passed to callees that read it by position
    (``o[0]``, ``o[-1]``), unpack it and read it by name; the same callee given a
    plain tuple too: every transform against JAX, values from 1st, 3rd calls."""
    ours, theirs = TRANSFORMS[transform]
    made, want_made = ours(F.built_to_callees), theirs(J.built_to_callees)
    rng = np.random.default_rng(31)
    for call in range(3):
        x = rng_array(rng, (2, 3) if transform.startswith("vmap") else (3,), dtype)
        assert_same_tree(made(x), want_made(x), dtype)


@pytest.mark.slow
def test_vmap_of_jacfwd_keeps_float32():
    """The Jacobian's emitted loop computes in the dtypes JAX does (its basis in the
    input's, each column in its output's): vmap of it keeps float32, jacrev too."""
    xs = rng_array(np.random.default_rng(26), (4, 3), np.float32)
    got = s2s.vmap(s2s.jacfwd(F.make_out))(xs)
    want = jax.vmap(jax.jacfwd(J.make_out))(xs)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)
    got = s2s.vmap(s2s.jacrev(F.make_out))(xs)
    want = jax.vmap(jax.jacrev(J.make_out))(xs)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)])
def test_a_callable_object_reads_its_attributes_at_each_call(dtype):
    """``s2s.vmap(net)`` for an object with ``__call__``: its attributes are constants of
    each call (changed between calls 1, 3 and 10), as JAX closes over them."""
    rng = np.random.default_rng(27)
    net = F.Net2(rng_array(rng, (3, 2), dtype))
    made = [s2s.vmap(net), s2s.jacrev(net)]
    for call in range(1, 11):
        if call in (1, 3, 10):
            net.W = rng_array(rng, (3, 2), dtype)
        x = rng_array(rng, (5, 3), dtype)
        if call not in (1, 3, 10):
            [got(x) for got in made]  # (the calls between, unchecked)
            continue
        jnet = J.Net2(net.W)
        wants = [jax.vmap(jnet), jax.jacrev(jnet)]
        for got, want in zip(made, wants):
            assert_same_tree(got(x), want(x), dtype)
        assert_same_tree(s2s.jvp(net, (x,), (x,)), jax.jvp(jnet, (x,), (x,)), dtype)
        assert_same_tree(s2s.vjp(net, x)[1](x[:, 0]), jax.vjp(jnet, x)[1](x[:, 0]), dtype)


def test_a_callable_object_called_inside_the_function_reads_its_attributes():
    """``NET2(x)`` in the function (refused before issue 23's third pass): ``self.W`` is
    read at each call; NET2.W changed between calls 1, 3 and 10, against JAX."""
    rng = np.random.default_rng(28)
    saved = F.NET2.W, J.NET2.W
    g = s2s.grad(F.calls_an_object)
    try:
        for call in (1, 2, 3, 10):
            F.NET2.W = J.NET2.W = rng_array(rng, (3, 2), np.float64)
            x = rng_array(rng, (5, 3), np.float64)
            assert_same_tree(g(x), jax.grad(J.calls_an_object)(x), np.float64)
    finally:
        F.NET2.W, J.NET2.W = saved
