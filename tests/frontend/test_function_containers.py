"""Tuples, lists and dicts of functions (issue 23, item 3): a ``for`` loop or a
comprehension over them is unrolled when the function is transformed, an item read
with a constant key is that function; a module-level container is read again when it
changes.  Every expected value comes from JAX on the same source (``jax_twin``),
float64 and float32."""

from __future__ import annotations

from functools import partial

import function_container_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

CONSTRUCTS = ["local_list_loop", "literal_tuple_loop", "module_tuple_loop",
              "enumerate_and_after", "zip_with_scales", "dict_by_config",
              "local_dict_and_lambda", "comprehension_over_local", "nested_loops",
              "calls_a_container_user"]
# (the default tier samples them; -m slow runs every one everywhere)
CHEAP = {"local_list_loop", "enumerate_and_after", "dict_by_config",
         "comprehension_over_local"}
SAMPLED = [n if n in CHEAP else pytest.param(n, marks=pytest.mark.slow) for n in CONSTRUCTS]

X = np.array([0.3, -0.7, 1.2])
V = np.array([1.0, -2.0, 0.5])
BATCH = np.array([[0.3, -0.7, 1.2], [0.1, 0.4, -0.9]])


close = partial(assert_close_to, f64=1e-9, f32=2e-4)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", CONSTRUCTS)
def test_grad_value_and_grad_and_vjp(name, dtype) -> None:
    x = X.astype(dtype)
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.grad(ours)(x), compiled(jax.grad(theirs))(x), dtype)
    close(s2s.value_and_grad(ours)(x), compiled(jax.value_and_grad(theirs))(x), dtype)
    out, pullback = s2s.vjp(ours, x)
    their_out, their_pullback = jax.vjp(theirs, x)
    close(out, their_out, dtype)
    close(pullback(np.ones_like(out)), their_pullback(np.ones_like(their_out)), dtype)


@pytest.mark.parametrize("name", SAMPLED)
def test_jvp_jacobians_vmap_and_jit(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.jvp(ours, (X,), (V,)), jax.jvp(theirs, (X,), (V,)), np.float64)
    close(s2s.jacfwd(ours)(X), compiled(jax.jacfwd(theirs))(X), np.float64)
    close(s2s.hessian(ours)(X), compiled(jax.hessian(theirs))(X), np.float64)
    close(s2s.vmap(s2s.grad(ours))(BATCH), compiled(jax.vmap(jax.grad(theirs)))(BATCH),
          np.float64)
    close(s2s.jit(s2s.grad(ours))(X), compiled(jax.grad(theirs))(X), np.float64)


@pytest.mark.parametrize("name", ["local_list_loop", pytest.param(
    "dict_by_config", marks=pytest.mark.slow)])
def test_jit_on_the_jax_backend(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.jit(s2s.grad(ours), backend="jax")(X), compiled(jax.grad(theirs))(X),
          np.float64)


def test_module_containers_changed_between_calls() -> None:
    """Rebinding an item of a module-level list or dict, the config key that picks
    one, or the list's length: the next call generates again (calls 1, 3 and 10)."""
    saved = (list(F.LAYERS), dict(F.ACTIVATIONS), dict(F.CONFIG))
    grads = {n: s2s.grad(getattr(F, n)) for n in ("zip_with_scales", "dict_by_config",
                                                   "nested_loops")}
    changes = [lambda: None,
               lambda: F.LAYERS.__setitem__(0, np.cos),
               lambda: F.ACTIVATIONS.__setitem__("softplus", np.sin),
               lambda: F.CONFIG.__setitem__("act", "tanh"),
               lambda: F.LAYERS.append(np.tanh)]
    try:
        for call in range(10):
            changes[call % len(changes)]()
            J.LAYERS[:] = [getattr(jax.numpy, f.__name__) if f.__name__ != "softplus"
                           else J.softplus for f in F.LAYERS]
            J.ACTIVATIONS.update({k: getattr(jax.numpy, f.__name__)
                                  if f.__name__ != "softplus" else J.softplus
                                  for k, f in F.ACTIVATIONS.items()})
            J.CONFIG.update(F.CONFIG)
            x = X * (1.0 + 0.1 * call)
            for name, grad in grads.items():
                close(grad(x), jax.grad(getattr(J, name))(x), np.float64)
    finally:
        F.LAYERS[:], J.LAYERS[:] = saved[0], [jax.numpy.sin, J.softplus]
        F.ACTIVATIONS.clear(), F.ACTIVATIONS.update(saved[1])
        J.ACTIVATIONS.update(tanh=jax.numpy.tanh, softplus=J.softplus)
        F.CONFIG.update(saved[2]), J.CONFIG.update(saved[2])


def test_the_emitted_code_calls_each_function_in_turn() -> None:
    """One copy of the body per function, in the loop's order, each call spelled
    as the function it is (``softplus(h)``, then ``np.tanh(h_2)``)."""
    text = s2s.source(s2s.grad(F.literal_tuple_loop))
    forward = text.split("literal_tuple_loop_bar = ")[0].split("def literal_tuple_loop_grad")[1]
    assert forward.index("softplus(h)") < forward.index("np.tanh(h_2)"), text
    compile(text, "<grad>", "exec")


def _refused(fn) -> str:
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)(X)
    return str(info.value)


def test_what_stays_refused_is_located() -> None:
    def as_a_value(x):  # (passed to a function of yours it runs: test_function_lists.py)
        fs = [np.tanh, F.relu]
        return F.module_tuple_loop(x) + np.sum(np.stack(fs) * x)

    def breaks(x):
        for g in (np.tanh, np.sin):
            if g is np.sin:
                break
            x = g(x)
        return np.sum(x)

    def missing(x):
        fs = (np.tanh, np.sin)
        return np.sum(fs[2](x))

    message = _refused(as_a_value)
    assert "holds functions" in message and "np.stack(fs)" in message
    assert "has no item 2" in _refused(missing)
    # (a `break` on a test known once the item is in place: unrolled and stopped
    # there since iter14, s2s/frontend/static_loops.py; refused before)
    x = np.array([0.3, -0.7])
    np.testing.assert_allclose(s2s.grad(breaks)(x), 1.0 - np.tanh(x) ** 2)
