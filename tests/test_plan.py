"""A transform's ``plan`` (the emitted code a call runs, without running it) is what
jit compiles: it holds after the transform was called on NumPy, specialized, and
called again, and jit's results match JAX's own grad and vmap."""

from __future__ import annotations

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def jloss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def row(x):
    return np.sum(np.sin(x) * x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("numpy_calls", [0, 1, 2, 3, 10])
def test_jit_of_a_grad_already_called_and_specialized_on_numpy(dtype, numpy_calls) -> None:
    """Before: after two NumPy calls with one signature the grad went straight to its
    specialized code, and jit on JAX raised 'ran without generating code'."""
    rng = np.random.default_rng(numpy_calls)
    w = rng.normal(size=3).astype(dtype)
    x = rng.normal(size=(4, 3)).astype(dtype)
    g = s2s.grad(loss)
    for _ in range(numpy_calls):
        g(w, x)
    jitted = s2s.jit(g, backend="jax")
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for k in range(3):  # new values each call, one signature
        w_k, x_k = (w + k).astype(dtype), (x * (k + 1)).astype(dtype)
        want = np.asarray(jax.grad(jloss)(jnp.asarray(w_k), jnp.asarray(x_k)))
        got = np.asarray(jitted(w_k, x_k))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
        np.testing.assert_allclose(g(w_k, x_k), want, rtol=tol, atol=tol)  # NumPy, still


def test_plan_returns_the_code_a_call_runs_without_running_it() -> None:
    g = s2s.grad(loss)
    w, x = np.ones(3), np.ones((2, 3))
    text, fn = g.plan((w, x))
    assert text.startswith("import numpy as np") and "def loss" in text
    np.testing.assert_allclose(fn(w, x), g(w, x))
    g(w, x)
    assert g.plan((w, x))[0] == text  # after a specialization: the same emitted code


def test_jit_of_a_vmap_already_called_on_numpy() -> None:
    v = s2s.vmap(row)
    xs = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    v(xs), v(xs), v(xs)
    got = np.asarray(s2s.jit(v, backend="jax")(xs + 0.5))
    want = np.asarray(jax.vmap(lambda r: jnp.sum(jnp.sin(r) * r))(jnp.asarray(xs + 0.5)))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def scaled(x, s=2.0):
    return np.sum(np.sin(x) * s)


def jscaled(x, s=2.0):
    return jnp.sum(jnp.sin(x) * s)


@pytest.mark.slow
def test_the_call_arguments_travel_as_arguments_not_as_state_on_the_transform() -> None:
    """The call's arguments reach the inner transform as parameters of the code
    request, so nothing of one call stays on the object for the next: a jvp of a grad
    called with one primal, then two, then one again (the inner grad resolving its
    argnums against each call), and a grad of a vmap alternating batch ranks, each
    against JAX."""
    rng = np.random.default_rng(0)
    x, tx = rng.normal(size=3), rng.normal(size=3)
    g, jg = s2s.grad(scaled), jax.grad(jscaled)
    for primals, tangents in [((x,), (tx,)), ((x, 3.0), (tx, 0.5)), ((x,), (tx,))]:
        out, out_dot = s2s.jvp(g, primals, tangents)
        jout, jdot = jax.jvp(jg, primals, tangents)
        np.testing.assert_allclose(out, jout, rtol=1e-12)
        np.testing.assert_allclose(out_dot, jdot, rtol=1e-12)
    v, jv = s2s.vmap(row), jax.vmap(lambda r: jnp.sum(jnp.sin(r) * r))
    for shape in [(4, 3), (4,), (2, 3), (5,)]:
        xs, ct = rng.normal(size=shape), rng.normal(size=shape[:1])
        out, pullback = s2s.vjp(v, xs)
        jout, jpullback = jax.vjp(jv, xs)
        np.testing.assert_allclose(out, jout, rtol=1e-12)
        np.testing.assert_allclose(pullback(ct)[0], jpullback(ct)[0], rtol=1e-12)
        tx = rng.normal(size=shape)  # (one JVP object per function: its code per rank)
        np.testing.assert_allclose(s2s.jvp(v, (xs,), (tx,))[1], jax.jvp(jv, (xs,), (tx,))[1],
                                   rtol=1e-12)
    assert not {"_call_args", "_call_nargs", "_outer_args"} & set(vars(g))
