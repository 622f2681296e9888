"""Dicts changed by a key only the call gives (``del d[name]``, ``d.pop(name)`` of a
string argument ``name``, on a dict argument or one the function built) and dicts
made from a dict argument spread into a call (``p = {**params, "shift": 1.0}``,
``p = dict(params, shift=0.5)``, then ``f(x, **p)``): issue 23, item 4.  The
transform is made per call's key string and dict keys (as ``jax.jit`` needs a string
static).  Expected values from JAX on the same source (tests/frontend/
runtime_key_fns.py), float64 and float32, over calls whose key and values change
(the 1st, 3rd and 10th compared)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import runtime_key_fns as F  # (pytest puts this directory on sys.path)
from support import HAVE_JAX, assert_close_to, central_grad, compiled, jax_twin

import s2s
from s2s.errors import TransformError

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2])
close = partial(assert_close_to, f64=1e-9, f32=3e-4)
COMPARED = (0, 2, 9)
KEYED = ["drops_from_a_copy", "drops_from_the_argument", "pops_from_the_argument",
         "drops_from_a_copy_in_a_callee"]
SPREAD = ["spreads_a_merged_dict", "spreads_a_dict_call", "calls_a_spreading_function"]


def _params(dtype, k):
    return {"a": (X + 1 + 0.1 * k).astype(dtype), "b": (2 * X - 0.05 * k).astype(dtype),
            "c": X[::-1].astype(dtype)}


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", KEYED)
def test_a_key_the_call_gives_against_jax(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    grad = s2s.grad(ours, argnums=(0, 1))
    for k in range(10):
        x, key = (X * (1 + 0.2 * k)).astype(dtype), "abc"[k % 3]
        params = _params(dtype, k)
        got = grad(x, params, key)
        assert sorted(params) == ["a", "b", "c"]  # (the caller's dict is not changed)
        if k in COMPARED:
            close(got, jax.grad(theirs, argnums=(0, 1))(x, dict(params), key), dtype)
    p = _params(dtype, 1)
    q = lambda: dict(p)  # noqa: E731  (JAX hands a dict not differentiated on as it is,
    # and the function deletes from it: each JAX call gets its own)
    close(s2s.value_and_grad(ours)(x, p, "c"), jax.value_and_grad(theirs)(x, q(), "c"),
          dtype)
    close(s2s.hessian(ours)(x, p, "a"), jax.hessian(theirs)(x, q(), "a"), dtype)
    close(s2s.jacfwd(ours)(x, p, "b"), jax.jacfwd(theirs)(x, q(), "b"), dtype)
    close(s2s.jacrev(ours)(x, p, "b"), jax.jacrev(theirs)(x, q(), "b"), dtype)
    batch = np.stack([x, 0.5 * x, -x])
    close(s2s.vmap(s2s.grad(ours), in_axes=(0, None, None))(batch, p, "a"),
          jax.vmap(jax.grad(theirs), in_axes=(0, None, None))(batch, q(), "a"), dtype)
    close(s2s.jit(s2s.grad(ours))(x, p, "c"), jax.grad(theirs)(x, q(), "c"), dtype)
    close(s2s.jit(s2s.grad(ours), backend="jax", static_argnums=2)(x, p, "c"),
          jax.grad(theirs)(x, q(), "c"), dtype)
    assert sorted(p) == ["a", "b", "c"]  # (s2s changed no dict of the caller's)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["pops_from_a_built_dict", "drops_from_a_built_dict",
                                  "pops_from_a_built_dict_in_a_callee"])
def test_a_built_dict_by_a_key_the_call_gives_against_jax(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    grad = s2s.grad(ours)
    for k in range(10):
        x, key = (X * (1 + 0.2 * k)).astype(dtype), "cab"[k % 3]
        got = grad(x, key)
        if k in COMPARED:
            close(got, jax.grad(theirs)(x, key), dtype)
    close(s2s.hessian(ours)(x, "b"), jax.hessian(theirs)(x, "b"), dtype)
    close(s2s.jvp(partial(ours, name="a"), (x,), (X.astype(dtype),)),
          jax.jvp(partial(theirs, name="a"), (x,), (X.astype(dtype),)), dtype)
    close(s2s.vmap(s2s.grad(ours), in_axes=(0, None))(np.stack([x, -x]), "c"),
          jax.vmap(jax.grad(theirs), in_axes=(0, None))(np.stack([x, -x]), "c"), dtype)
    close(s2s.jit(s2s.grad(ours), backend="jax", static_argnums=1)(x, "a"),
          jax.grad(theirs)(x, "a"), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", SPREAD)
def test_a_dict_made_from_an_argument_spread_against_jax(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    grad = s2s.grad(ours, argnums=(0, 1))
    for k in range(10):
        x = (X * (1 + 0.2 * k)).astype(dtype)
        params = [{"w": x[::-1]}, {"w": x + 1, "scale": dtype(2.0)},
                  {"shift": dtype(-1.0), "w": x}][k % 3]
        got = grad(x, params)
        if k in COMPARED:
            close(got, jax.grad(theirs, argnums=(0, 1))(x, params), dtype)
    p = {"w": (X + 0.5).astype(dtype), "scale": dtype(3.0)}
    v = (X[::-1]).astype(dtype)
    close(s2s.jvp(ours, (x, p), (v, {"w": v, "scale": dtype(1.0)})),
          jax.jvp(theirs, (x, p), (v, {"w": v, "scale": dtype(1.0)})), dtype)
    close(s2s.hessian(ours)(x, p), jax.hessian(theirs)(x, p), dtype)
    close(s2s.jacrev(ours)(x, p), jax.jacrev(theirs)(x, p), dtype)
    batch = np.stack([x, 0.5 * x])
    close(s2s.vmap(s2s.grad(ours), in_axes=(0, None))(batch, p),
          jax.vmap(jax.grad(theirs), in_axes=(0, None))(batch, p), dtype)
    close(s2s.jit(s2s.grad(ours))(x, p), jax.grad(theirs)(x, p), dtype)
    close(s2s.jit(s2s.grad(ours), backend="jax")(x, p), compiled(jax.grad(theirs))(x, p),
          dtype)


def test_default_tier_against_central_differences():
    """The default tier's share: a pop by the call's key (two keys: two transforms)
    and a merged dict spread, against central differences of the NumPy function
    (which must not change the caller's dict)."""
    grad = s2s.grad(F.pops_from_the_argument)
    for k, key in enumerate("ca"):
        x, p = X * (1 + 0.2 * k), _params(np.float64, k)
        want = central_grad(lambda t: F.pops_from_the_argument(t, dict(p), key), x)
        np.testing.assert_allclose(grad(x, p, key), want, rtol=1e-6, atol=1e-8)
        assert sorted(p) == ["a", "b", "c"]
    p = {"w": X, "scale": 2.0}
    np.testing.assert_allclose(s2s.grad(F.spreads_a_merged_dict)(X, p), central_grad(
        lambda t: F.spreads_a_merged_dict(t, p), X), rtol=1e-6, atol=1e-8)


def test_what_stays_refused_is_located():
    """A callee deleting from its dict parameter in place (Python changes the
    caller's dict, and s2s runs the callee as it is in the forward pass), a key of
    another type than str, a key the dict does not hold (Python's KeyError)."""
    x, p = X, _params(np.float64, 0)
    with pytest.raises(TransformError, match="deletes items from its dict parameter") as err:
        s2s.grad(F.calls_a_popping_function)(x, p, "b")
    assert err.value.loc.file == F.__file__ and "pops_from_the_argument(" in err.value.loc.text
    assert "Instead" in str(err.value) and "dict(params)" in str(err.value)
    with pytest.raises(TransformError, match="no key 'z'") as err:
        s2s.grad(F.pops_from_the_argument)(x, p, "z")
    assert err.value.loc.file == F.__file__ and "params.pop(name)" in err.value.loc.text
    with pytest.raises(TransformError) as err:
        s2s.grad(F.pops_from_the_argument)(x, {0: x, 1: x}, 1)
    assert err.value.loc.file == F.__file__ and "params.pop(name)" in err.value.loc.text
    assert sorted(p) == ["a", "b", "c"]
