"""Dict keys built from string arguments (``d[f"w{name}"]``, ``d["w" + name]``), an
item of a dict argument of functions called by a string argument (``cfg[key](x)``), a
dict of functions passed to a callee, NamedTuples under vmap of a hessian and under
jvp, partials binding a dict or a NamedTuple, dataclass fields with defaults (issue 23,
items 3 to 5).  Expected values from JAX on the same source (tests/frontend/
objects11_fns.py), float64 and float32, over calls whose strings and values change
(the 1st, 3rd and 10th compared); the default tier against central differences."""

from __future__ import annotations

from functools import partial

import numpy as np
import objects11_fns as F  # (pytest puts this directory on sys.path)
import pytest
from support import HAVE_JAX, assert_close_to, central_grad, compiled, jax_twin

import s2s
from s2s.errors import TransformError

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    import jax.numpy as jnp

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2])
close = partial(assert_close_to, f64=1e-9, f32=3e-4)
COMPARED = (0, 2, 9)


def _keyed(dtype, k):
    x = (X * (1 + 0.15 * k)).astype(dtype)
    d = {name: v.astype(dtype) for name, v in F._params(X + 0.05 * k).items()}
    d.update({"a1": (X + 2.0).astype(dtype), "b1": (X - 0.5 * k).astype(dtype),
              "a_1": (X * 3.0).astype(dtype), "b_1": np.cos(X + k).astype(dtype)})
    return x, d


# ---- keys built from string arguments ---------------------------------------------


def test_keys_built_from_a_string_argument_against_central_differences():
    """Each call's string picks its items (two strings, one transform object, the
    emitted code reading the call's keys), the caller's dict unchanged."""
    grad = s2s.grad(F.plus_key)
    for k, key in enumerate("ab"):
        x, d = _keyed(np.float64, k)
        want = central_grad(lambda t: F.plus_key(t, d, key), x)
        np.testing.assert_allclose(grad(x, d, key), want, rtol=1e-6, atol=1e-8)
        assert len(d) == 8
    text = s2s.source(grad)
    assert 'd["wb"]' in text and 'd["bb"]' in text


@pytest.mark.slow
def test_more_keys_built_against_central_differences():
    """An f-string key, the string handed to a callee, a callee given a constant
    string, a key of two strings."""
    for name in ("fstring_key", "hands_the_name_on"):
        grad = s2s.grad(getattr(F, name))
        for k, key in enumerate("aba"):
            x, d = _keyed(np.float64, k)
            want = central_grad(lambda t: getattr(F, name)(t, d, key), x)
            np.testing.assert_allclose(grad(x, d, key), want, rtol=1e-6, atol=1e-8)
    x, d = _keyed(np.float64, 1)
    got = s2s.grad(F.calls_a_keyed_function)(x, d)
    np.testing.assert_allclose(got, central_grad(lambda t: F.calls_a_keyed_function(t, d), x),
                               rtol=1e-6, atol=1e-8)
    got = s2s.grad(F.two_part_key)(x, d, "1", "b")
    np.testing.assert_allclose(got, central_grad(lambda t: F.two_part_key(t, d, "1", "b"), x),
                               rtol=1e-6, atol=1e-8)


def test_a_key_the_dict_lacks_is_located():
    x, d = _keyed(np.float64, 0)
    with pytest.raises(TransformError, match="no key 'wz'") as err:
        s2s.grad(F.fstring_key)(x, d, "z")
    assert "objects11_fns.py" in str(err.value) and 'd[f"w{name}"]' in str(err.value)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["fstring_key", "plus_key", "hands_the_name_on"])
def test_keys_built_from_a_string_argument_against_jax(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    grad = s2s.grad(ours, argnums=(0, 1))
    for k in range(10):
        x, d = _keyed(dtype, k)
        key = "ab"[k % 2]
        got = grad(x, d, key)
        if k in COMPARED:
            close(got, jax.grad(theirs, argnums=(0, 1))(x, d, key), dtype)
    close(s2s.value_and_grad(ours)(x, d, "a"), jax.value_and_grad(theirs)(x, d, "a"), dtype)
    close(s2s.jvp(partial(ours, d=d, name="b"), (x,), (X[::-1].astype(dtype),)),
          jax.jvp(partial(theirs, d=d, name="b"), (x,), (X[::-1].astype(dtype),)), dtype)
    close(s2s.jacfwd(ours)(x, d, "a"), jax.jacfwd(theirs)(x, d, "a"), dtype)
    close(s2s.jacrev(ours, argnums=1)(x, d, "b"), jax.jacrev(theirs, argnums=1)(x, d, "b"),
          dtype)
    close(s2s.hessian(ours)(x, d, "b"), jax.hessian(theirs)(x, d, "b"), dtype)
    batch = np.stack([x, 0.5 * x, -x])
    close(s2s.vmap(ours, in_axes=(0, None, None))(batch, d, "a"),
          jax.vmap(theirs, in_axes=(0, None, None))(batch, d, "a"), dtype)
    close(s2s.vmap(s2s.grad(ours), in_axes=(0, None, None))(batch, d, "b"),
          jax.vmap(jax.grad(theirs), in_axes=(0, None, None))(batch, d, "b"), dtype)
    close(s2s.jit(s2s.grad(ours))(x, d, "a"), jax.grad(theirs)(x, d, "a"), dtype)
    jitted = s2s.jit(s2s.grad(ours), backend="jax", static_argnums=2)
    for key in "aba":
        close(jitted(x, d, key), jax.grad(theirs)(x, d, key), dtype)
    close(s2s.jit(ours, backend="jax", static_argnums=2)(x, d, "b"), theirs(x, d, "b"),
          dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_keys_built_in_a_callee_and_of_two_strings_against_jax(dtype):
    x, d = _keyed(dtype, 2)
    ours, theirs = F.calls_a_keyed_function, J.calls_a_keyed_function
    close(s2s.grad(ours, argnums=(0, 1))(x, d), jax.grad(theirs, argnums=(0, 1))(x, d),
          dtype)
    close(s2s.jvp(ours, (x, d), (x, d)), jax.jvp(theirs, (x, d), (x, d)), dtype)
    close(s2s.hessian(ours)(x, d), jax.hessian(theirs)(x, d), dtype)
    close(s2s.jit(s2s.grad(ours), backend="jax")(x, d), jax.grad(theirs)(x, d), dtype)
    grad = s2s.grad(F.two_part_key)
    for k, (layer, kind) in enumerate([("1", "a"), ("1", "b"), ("1", "a")]):
        close(grad(x, d, layer, kind), jax.grad(J.two_part_key)(x, d, layer, kind), dtype)


# ---- dicts of functions chosen by a string ----------------------------------------


def _cfg(ns):
    return {"tanh": ns.tanh, "relu": F.relu if ns is np else J.relu, "sin": ns.sin,
            "scale": 2.0}


def test_an_item_of_a_dict_argument_called_by_a_string_argument():
    grad = s2s.grad(F.argument_acts)
    for key in ("tanh", "sin"):
        want = central_grad(lambda t: F.argument_acts(t, _cfg(np), key), X)
        np.testing.assert_allclose(grad(X, _cfg(np), key), want, rtol=1e-6, atol=1e-8)
    want = central_grad(F.passes_a_function_dict, X)
    grad = s2s.grad(F.passes_a_function_dict)
    np.testing.assert_allclose(grad(X), want, rtol=1e-6, atol=1e-8)
    assert '{"f": np.sin, "g": relu}' in s2s.source(grad)


@pytest.mark.slow
def test_more_dicts_of_functions_against_central_differences():
    grad = s2s.grad(F.argument_acts)
    for key in ("relu", "tanh"):
        want = central_grad(lambda t: F.argument_acts(t, _cfg(np), key), X)
        np.testing.assert_allclose(grad(X, _cfg(np), key), want, rtol=1e-6, atol=1e-8)
    want = central_grad(lambda t: F.argument_acts(t, _cfg(np), "sin"), X)
    np.testing.assert_allclose(s2s.grad(partial(F.argument_acts, cfg=_cfg(np), key="sin"))(X),
                               want, rtol=1e-6, atol=1e-8)
    want = central_grad(F.passes_a_built_function_dict, X)
    np.testing.assert_allclose(s2s.grad(F.passes_a_built_function_dict)(X), want, rtol=1e-6,
                               atol=1e-8)


def test_a_chosen_function_in_a_dict_passed_on_stays_refused_located():
    with pytest.raises(TransformError, match="holds functions") as err:
        s2s.grad(F.passes_a_chosen_function_dict)(X, "tanh")
    assert "objects11_fns.py" in str(err.value) and "apply_pair(fs, x)" in str(err.value)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_functions_chosen_by_a_string_against_jax(dtype):
    grad = s2s.grad(F.argument_acts)
    for k in range(10):
        x, key = (X * (1 + 0.2 * k)).astype(dtype), ("tanh", "sin", "relu")[k % 3]
        got = grad(x, _cfg(np), key)
        if k in COMPARED:
            close(got, jax.grad(J.argument_acts)(x, _cfg(jnp), key), dtype)
    ours, theirs = F.argument_acts, J.argument_acts
    close(s2s.value_and_grad(ours)(x, _cfg(np), "sin"),
          jax.value_and_grad(theirs)(x, _cfg(jnp), "sin"), dtype)
    close(s2s.jvp(partial(ours, cfg=_cfg(np), key="sin"), (x,), (x,)),
          jax.jvp(partial(theirs, cfg=_cfg(jnp), key="sin"), (x,), (x,)), dtype)
    close(s2s.hessian(ours)(x, _cfg(np), "tanh"), jax.hessian(theirs)(x, _cfg(jnp), "tanh"),
          dtype)
    close(s2s.jacfwd(ours)(x, _cfg(np), "sin"), jax.jacfwd(theirs)(x, _cfg(jnp), "sin"),
          dtype)
    batch = np.stack([x, -x])
    close(s2s.vmap(s2s.grad(ours), in_axes=(0, None, None))(batch, _cfg(np), "tanh"),
          jax.vmap(jax.grad(theirs), in_axes=(0, None, None))(batch, _cfg(jnp), "tanh"),
          dtype)
    close(s2s.jit(s2s.grad(ours))(x, _cfg(np), "relu"),
          jax.grad(theirs)(x, _cfg(jnp), "relu"), dtype)
    for name in ("module_acts", "built_acts"):
        ours, theirs = getattr(F, name), getattr(J, name)
        close(s2s.hessian(ours)(x, "sin"), jax.hessian(theirs)(x, "sin"), dtype)
        close(s2s.jit(s2s.grad(ours), backend="jax", static_argnums=1)(x, "tanh"),
              jax.grad(theirs)(x, "tanh"), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["passes_a_function_dict", "passes_a_built_function_dict"])
def test_a_dict_of_functions_passed_on_against_jax(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    grad = s2s.grad(ours)
    for k in range(10):
        x = (X * (1 - 0.3 * k)).astype(dtype)
        got = grad(x)
        if k in COMPARED:
            close(got, jax.grad(theirs)(x), dtype)
    close(s2s.value_and_grad(ours)(x), jax.value_and_grad(theirs)(x), dtype)
    close(s2s.jvp(ours, (x,), (X.astype(dtype),)), jax.jvp(theirs, (x,), (X.astype(dtype),)),
          dtype)
    close(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)
    close(s2s.jacrev(ours)(x), jax.jacrev(theirs)(x), dtype)
    batch = np.stack([x, 0.5 * x])
    close(s2s.vmap(ours)(batch), jax.vmap(theirs)(batch), dtype)
    close(s2s.vmap(s2s.grad(ours))(batch), jax.vmap(jax.grad(theirs))(batch), dtype)
    close(s2s.jit(s2s.grad(ours))(x), jax.grad(theirs)(x), dtype)
    close(s2s.jit(s2s.grad(ours), backend="jax")(x), compiled(jax.grad(theirs))(x), dtype)
    close(s2s.jit(ours, backend="jax")(x), theirs(x), dtype)


# ---- NamedTuples: vmap of a hessian, jvp's tangent ----------------------------------


def _affine(ns, dtype, k):
    cls = F.Affine if ns is np else J.Affine
    return cls((X + 1.0 + 0.1 * k).astype(dtype), (0.5 * X - 0.05 * k).astype(dtype))


@pytest.mark.slow  # (1.6 s and 3.2 s of CPU: the vmap of a Hessian's code)
def test_vmap_of_a_hessian_of_a_function_calling_a_namedtuples_methods():
    """Refused before at the method's line (`.w` is not an attribute of NumPy arrays):
    the Jacobian's text called the gradient made for arrays.  Against the Python loop
    of s2s.hessian (itself checked against JAX in the slow tier)."""
    p, batch = _affine(np, np.float64, 0), np.stack([X, 0.5 * X, -X])
    got = s2s.vmap(s2s.hessian(F.affine_loss), in_axes=(0, None))(batch, p)
    want = np.stack([s2s.hessian(F.affine_loss)(row, p) for row in batch])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_jvp_of_a_function_returning_its_namedtuple_gives_namedtuples():
    p, t = _affine(np, np.float64, 0), _affine(np, np.float64, 3)
    out, out_dot = s2s.jvp(F.returns_it, (p,), (t,))
    assert type(out) is F.Affine and type(out_dot) is F.Affine
    np.testing.assert_array_equal(out_dot.w, t.w)
    assert out_dot.w is not t.w  # (a result never shares memory with an argument)
    (out, y), (out_dot, y_dot) = s2s.jvp(F.returns_it_and_more, (p, X), (t, X))
    assert type(out_dot) is F.Affine and type(y_dot) is np.ndarray


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["affine_loss", "affine_loss_in_a_callee"])
def test_vmap_of_a_hessian_with_a_namedtuple_against_jax(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    hess = s2s.vmap(s2s.hessian(ours), in_axes=(0, None))
    for k in range(10):
        x = (X * (1 + 0.2 * k)).astype(dtype)
        batch = np.stack([x, 0.5 * x, -x])
        got = hess(batch, _affine(np, dtype, k))
        if k in COMPARED:
            close(got, jax.vmap(jax.hessian(theirs), in_axes=(0, None))(
                batch, _affine(jnp, dtype, k)), dtype)
    p, q = _affine(np, dtype, 1), _affine(jnp, dtype, 1)
    close(s2s.jit(hess)(batch, p), jax.vmap(jax.hessian(theirs), in_axes=(0, None))(
        batch, q), dtype)
    close(s2s.jit(hess, backend="jax")(batch, p), jax.vmap(jax.hessian(theirs), in_axes=(
        0, None))(batch, q), dtype)
    if name == "affine_loss":  # (through a callee: jacfwd and jacrev stay refused)
        for make in (jax.jacfwd, jax.jacrev):
            ours_made = getattr(s2s, make.__name__)
            close(s2s.vmap(ours_made(ours), in_axes=(0, None))(batch, p),
                  jax.vmap(make(theirs), in_axes=(0, None))(batch, q), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["returns_it", "builds_one", "returns_it_through_a_callee"])
def test_jvp_of_a_function_returning_a_namedtuple_against_jax(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    for k in range(10):
        p, t = _affine(np, dtype, k), _affine(np, dtype, k + 5)
        got = s2s.jvp(ours, (p,), (t,))
        assert type(got[0]) is F.Affine and type(got[1]) is F.Affine
        if k in COMPARED:
            close(got, jax.jvp(theirs, (_affine(jnp, dtype, k),), (_affine(jnp, dtype, k + 5),)),
                  dtype)
    got = s2s.jvp(s2s.jit(ours), (p,), (t,))
    assert type(got[1]) is F.Affine
    close(got, jax.jvp(theirs, (_affine(jnp, dtype, 9),), (_affine(jnp, dtype, 14),)), dtype)
    lin = s2s.linearize(ours, p)[1](t)
    assert type(lin) is F.Affine


# ---- a callee deleting from its dict parameter; partials; dataclass defaults --------


def test_a_callee_deleting_from_the_dict_it_is_given_is_refused_at_its_line():
    """Python deletes the key from the caller's dict (`len(d)` after the call is 1):
    refused at the callee's `del`, saying so; the copy the hint writes runs."""
    with pytest.raises(TransformError, match="deletes it from the dict the caller passed"
                       ) as err:
        s2s.grad(F.calls_drop)(X)
    text = str(err.value)
    assert "objects11_fns.py" in text and 'del d["b"]' in text and "d = dict(d)" in text
    np.testing.assert_allclose(s2s.grad(F.calls_drop_a_copy)(X), central_grad(
        F.calls_drop_a_copy, X), rtol=1e-6, atol=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_partial_binding_a_dict_against_jax(dtype):
    x, batch = X.astype(dtype), np.stack([X, -2.0 * X]).astype(dtype)
    for k in range(3):
        cfg = {"a": dtype(2.0 + k), "b": (X[::-1] + k).astype(dtype)}
        ours, theirs = partial(F.partial_dict, cfg=cfg), partial(J.partial_dict, cfg=cfg)
        close(s2s.jvp(ours, (x,), (x,)), jax.jvp(theirs, (x,), (x,)), dtype)
        close(s2s.vmap(ours)(batch), jax.vmap(theirs)(batch), dtype)
        close(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)
        close(s2s.vmap(s2s.hessian(ours))(batch), jax.vmap(jax.hessian(theirs))(batch), dtype)
        close(s2s.jit(s2s.grad(ours))(x), jax.grad(theirs)(x), dtype)
        close(s2s.jit(s2s.grad(ours), backend="jax")(x), jax.grad(theirs)(x), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["scaled_loss", "scaled_loss_in_a_callee"])
def test_a_dataclass_with_a_default_field_not_differentiated_against_jax(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    grad, value_and_grad = s2s.grad(ours, argnums=1), s2s.value_and_grad(ours, argnums=1)
    jitted = s2s.jit(s2s.grad(ours, argnums=1))
    for k in range(10):
        x, w = (X * (1 + 0.2 * k)).astype(dtype), (X + 1.0 - 0.1 * k).astype(dtype)
        cls = ("Scaled", "FrozenScaled")[k % 2]
        args = () if k % 3 == 0 else (dtype(0.25 * k),)  # (the default, or given)
        c, cj = getattr(F, cls)(w, *args), getattr(J, cls)(w, *args)
        got = (grad(c, x), value_and_grad(c, x), jitted(c, x))
        if k in COMPARED:
            want = jax.grad(theirs, argnums=1)(cj, x)
            close(got, (want, jax.value_and_grad(theirs, argnums=1)(cj, x), want), dtype)


@pytest.mark.slow  # (1.6 s and 3.2 s of CPU: the vmap of a Hessian's code)
def test_vmap_of_a_jacobian_with_respect_to_a_namedtuple_gives_its_type():
    """It gave the dict of the fields (of dicts, for a Hessian), where JAX gives the
    NamedTuple (of NamedTuples); values against the Python loop of vmap of grad."""
    p, batch = _affine(np, np.float64, 0), np.stack([X, -X])
    for make in (s2s.jacfwd, s2s.jacrev):
        got = s2s.vmap(make(F.affine_loss, argnums=1), in_axes=(0, None))(batch, p)
        want = s2s.vmap(s2s.grad(F.affine_loss, argnums=1), in_axes=(0, None))(batch, p)
        assert type(got) is F.Affine
        np.testing.assert_allclose(got.w, want.w, rtol=1e-12)
    got = s2s.vmap(s2s.hessian(F.affine_loss, argnums=1), in_axes=(0, None))(batch, p)
    assert type(got) is F.Affine and type(got.w) is F.Affine and got.w.b.shape == (2, 3, 3)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_vmap_of_a_jacobian_with_respect_to_a_namedtuple_against_jax(dtype):
    x = X.astype(dtype)
    batch = np.stack([x, 0.5 * x, -x])
    p, q = _affine(np, dtype, 2), _affine(jnp, dtype, 2)
    for ours, theirs in ((s2s.jacfwd, jax.jacfwd), (s2s.jacrev, jax.jacrev),
                         (s2s.hessian, jax.hessian)):
        got = s2s.vmap(ours(F.affine_loss, argnums=1), in_axes=(0, None))(batch, p)
        want = jax.vmap(theirs(J.affine_loss, argnums=1), in_axes=(0, None))(batch, q)
        assert str(jax.tree_util.tree_structure(got)).replace("objects11_fns_jax", "") == str(
            jax.tree_util.tree_structure(want)).replace("objects11_fns_jax", "")
        close(got, want, dtype)
