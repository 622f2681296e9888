"""Parameters that hold functions: ``def layer(x, act=np.tanh)`` called with its
default, with ``np.sin``, ``relu``, a lambda or a partial, by position or keyword;
``def fit(w, loss_fn)``; ``transform=None`` tested with ``is not None``.  JAX takes
these (``jax.grad(layer)(x, jnp.sin)``); s2s transforms the function once per set of
functions a call passes (api/callables.py).

And a regression: a parameter called as a function that has the name of a
module-level object (``def loss(net, x): return net(x)`` beside a global ``net``) was
read as the global: the forward ran the global object and the gradient was zero,
silently.  It is refused now, located.

Expected values: JAX on the same source (``jax_twin``), float64 and float32, at calls
whose values and functions change."""

from __future__ import annotations

import functools

import function_param_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    import jax.numpy as jnp

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2, 0.05])
DTYPES = [np.float64, np.float32]


def pairs():
    """(name, ours, theirs): the functions each case passes, ours and JAX's."""
    return {
        "default": ((), ()),
        "np.sin": ((np.sin,), (jnp.sin,)),
        "relu": ((F.relu,), (J.relu,)),
        "keyword relu": ({"act": F.relu}, {"act": J.relu}),
        "partial": ((F.PARTIAL,), (J.PARTIAL,)),
    }


def tol(dtype):
    return dict(rtol=1e-8, atol=1e-10) if dtype == np.float64 else dict(rtol=5e-4, atol=5e-5)


def close(got, expected, dtype):
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected)):
        assert np.shape(g) == np.shape(e)
        assert np.asarray(g).dtype == np.asarray(e).dtype, (np.asarray(g).dtype, e.dtype)
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(e, np.float64),
                                   **tol(dtype))


def call(fn, x, passed):
    return fn(x, **passed) if isinstance(passed, dict) else fn(x, *passed)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["layer", "model", "two_functions", "keyword_only",
                                  pytest.param("loop_of_layers", marks=pytest.mark.slow)])
def test_functions_passed_and_defaults(name, dtype) -> None:
    """grad, value_and_grad, hessian, vmap of grad, s2s.jit (NumPy; JAX with the
    function static), alternating functions over ten calls."""
    ours, theirs = getattr(F, name), getattr(J, name)
    cases = pairs()
    if name == "keyword_only":
        cases = {k: v for k, v in cases.items() if k in ("default", "keyword relu")}
    if name == "two_functions":  # (its parameters: inner, outer)
        cases["keyword relu"] = ({"outer": np.tanh, "inner": F.relu},
                                 {"outer": jnp.tanh, "inner": J.relu})
        cases["both"] = ((np.cos, F.PARTIAL), (jnp.cos, J.PARTIAL))
    g, vg, jitted = s2s.grad(ours), s2s.value_and_grad(ours), s2s.jit(s2s.grad(ours))
    for step in range(10):
        label = list(cases)[step % len(cases)]
        mine, jaxs = cases[label]
        x = (X * (1 + 0.1 * step)).astype(dtype)
        expected = compiled(jax.grad(lambda x: call(theirs, x, jaxs)))(x)
        close(call(g, x, mine), expected, dtype)
        close(call(jitted, x, mine), expected, dtype)
        if step < len(cases):
            close(call(vg, x, mine), jax.value_and_grad(lambda x: call(theirs, x, jaxs))(x),
                  dtype)
            if step < 2 and not isinstance(mine, dict):  # (a Jacobian's keywords:
                # positional only, api/jacobians.py)
                close(call(s2s.hessian(ours), x, mine),
                      compiled(jax.hessian(lambda x: call(theirs, x, jaxs)))(x), dtype)
                batch = np.stack([x, -x, 0.5 * x])
                axes = (0,) + (None,) * (len(mine) if not isinstance(mine, dict) else 0)
                close(call(s2s.vmap(g, in_axes=axes), batch, mine),
                      jax.vmap(jax.grad(lambda x: call(theirs, x, jaxs)))(batch), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_required_function_and_none(dtype) -> None:
    """``fit(w, loss_fn)`` with a module function and a lambda; ``transform=None``
    (``is not None`` decided per call) and a function; jvp and the JAX backend."""
    x = X.astype(dtype)
    g = s2s.grad(F.fit)
    close(g(x, F.mse), jax.grad(J.fit)(x, J.mse), dtype)
    close(g(x, F.mse, 3.0), jax.grad(J.fit)(x, J.mse, 3.0), dtype)
    close(g(x, loss_fn=lambda w: np.sum(np.sin(w) * w)),
          jax.grad(lambda w: J.fit(w, lambda v: jnp.sum(jnp.sin(v) * v)))(x), dtype)
    t = s2s.grad(F.optional_transform)
    for _ in range(3):
        close(t(x), jax.grad(J.optional_transform)(x), dtype)
        close(t(x, np.cos), jax.grad(lambda x: J.optional_transform(x, jnp.cos))(x), dtype)
    close(s2s.jvp(F.model, (x,), (x[::-1].copy(),)),
          jax.jvp(J.model, (x,), (x[::-1],)), dtype)
    close(s2s.jvp(functools.partial(F.model, act=np.sin), (x,), (x[::-1].copy(),)),
          jax.jvp(functools.partial(J.model, act=jnp.sin), (x,), (x[::-1],)), dtype)
    on_jax = s2s.jit(s2s.grad(F.layer), backend="jax", static_argnums=1)
    close(on_jax(x, np.sin), jax.grad(J.layer)(x, jnp.sin), dtype)
    close(s2s.jit(s2s.grad(F.layer), backend="jax")(x), jax.grad(J.layer)(x), dtype)


def test_the_emitted_code_calls_the_function_passed() -> None:
    """The parameter denotes the function: its calls are the function's (``relu(x)``,
    ``np.sin(x)``), and the parameter stays in the signature, unread."""
    g = s2s.grad(F.layer)
    g(X, F.relu)
    text = s2s.source(g)
    assert "relu(x)" in text and "def layer_grad(x, act" in text, text
    g(X, np.sin)
    assert "np.sin(x)" in s2s.source(g), s2s.source(g)


def test_defaults_replaced_between_calls() -> None:
    """The defaults are read at each call: replacing them is seen at the next."""
    g = s2s.grad(F.layer)
    saved = F.layer.__defaults__
    try:
        first = g(X)
        F.layer.__defaults__ = (np.sin,)
        np.testing.assert_allclose(g(X), jax.grad(lambda x: J.layer(x, jnp.sin))(X))
    finally:
        F.layer.__defaults__ = saved
    np.testing.assert_allclose(g(X), first)


def test_parameter_named_as_a_global_is_never_the_global() -> None:
    """``net(x)`` of a parameter ``net`` beside a module-level ``net`` (it ran the
    global object, with a zero gradient): the object passed is the one called (its
    class's ``__call__``); an object JAX cannot differentiate is JAX's TypeError, and
    one whose class is no pytree is refused where its method reads a field."""
    w = np.array([1.0, 2.0, -3.0])
    with pytest.raises(TypeError, match="not a valid JAX type"):
        s2s.grad(F.loss_of_net)(F.Net(w), X[:3])
    with pytest.raises(s2s.TransformError) as info:  # (its fields are not a pytree's)
        s2s.grad(F.loss_of_net, argnums=1)(F.Net(w), X[:3])
    message = str(info.value)
    assert "function_param_fns.py" in message and "self.w" in message, message
    assert "register the object's class as a pytree" in message


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_an_arguments_methods(dtype) -> None:
    """``p.apply(x)`` and ``model(x)`` (whose ``__call__`` calls ``self.apply``) of a
    NamedTuple argument: its class's methods, per call's class (two classes
    alternating, values changing over ten calls); the gradient in the argument's type.
    grad with respect to the object and to x, vmap of grad over x."""
    classes = [(F.Affine, J.Affine), (F.Scaled, J.Scaled)]
    for name in ("applied", "called"):
        ours, theirs = getattr(F, name), getattr(J, name)
        g, gx = s2s.grad(ours), s2s.grad(ours, argnums=1)
        for step in range(10):
            mine, jaxs = classes[step % 2]
            w = (np.array([0.5, -0.2, 0.3]) * (1 + 0.1 * step)).astype(dtype)
            b = np.array([0.1, 0.0, -0.3], dtype)
            x = (X[:3] + 0.05 * step).astype(dtype)
            got = g(mine(w, b), x)
            assert type(got) is mine
            close(got, compiled(jax.grad(theirs))(jaxs(w, b), x), dtype)
            close(gx(mine(w, b), x), compiled(jax.grad(theirs, argnums=1))(jaxs(w, b), x),
                  dtype)
            if step < 2:
                batch = np.stack([x, -x])
                close(s2s.vmap(gx, in_axes=(None, 0))(mine(w, b), batch),
                      jax.vmap(jax.grad(theirs, argnums=1), in_axes=(None, 0))(
                          jaxs(w, b), batch), dtype)
