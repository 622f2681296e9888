"""Float32 inputs meeting float64 module constants, through every composition with a
gradient, against JAX: JAX gives a gradient (and a reverse-mode Jacobian) its input's
dtype; forward mode keeps the output's.  s2s cast the gradient in the API, outside
the code it emits, so transforms of that code (and jacrev) returned float64
(``s2s/api/dtypes_down.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

LABELS = np.eye(3)[[0, 2, 1, 1]]  # float64, read by the function at each call
SCALE = np.array([0.5, 2.0, 1.5])  # float64


def xent(logits):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(LABELS * logp, axis=1))


def xent_jax(logits):
    shifted = logits - jnp.max(logits, axis=1, keepdims=True)
    logp = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=1, keepdims=True))
    return -jnp.mean(jnp.sum(LABELS * logp, axis=1))


def scaled(w, x):
    return np.sum(np.tanh(x @ w * SCALE[0]) ** 2) + np.sum(w * w)


def scaled_jax(w, x):
    return jnp.sum(jnp.tanh(x @ w * SCALE[0]) ** 2) + jnp.sum(w * w)


def cases(dtype):
    r = np.random.default_rng(3)
    a = r.normal(size=(4, 3)).astype(dtype)
    batch = np.stack([a, a * 0.5])
    w, x = r.normal(size=3).astype(dtype), r.normal(size=(5, 3)).astype(dtype)
    return [
        ("jacrev", lambda: s2s.jacrev(xent)(a), lambda: jax.jacrev(xent_jax)(a)),
        ("jacfwd", lambda: s2s.jacfwd(xent)(a), lambda: jax.jacfwd(xent_jax)(a)),
        ("hessian", lambda: s2s.hessian(xent)(a), lambda: jax.hessian(xent_jax)(a)),
        ("vmap of grad", lambda: s2s.vmap(s2s.grad(xent))(batch),
         lambda: jax.vmap(jax.grad(xent_jax))(batch)),
        ("vmap of value_and_grad", lambda: s2s.vmap(s2s.value_and_grad(xent))(batch),
         lambda: jax.vmap(jax.value_and_grad(xent_jax))(batch)),
        ("jvp of grad", lambda: s2s.jvp(s2s.grad(xent), (a,), (a,)),
         lambda: jax.jvp(jax.grad(xent_jax), (a,), (a,))),
        ("jacfwd of grad", lambda: s2s.jacfwd(s2s.grad(xent))(a),
         lambda: jax.jacfwd(jax.grad(xent_jax))(a)),
        ("jacrev of grad", lambda: s2s.jacrev(s2s.grad(xent))(a),
         lambda: jax.jacrev(jax.grad(xent_jax))(a)),
        ("jvp of jacrev", lambda: s2s.jvp(s2s.jacrev(xent), (a,), (a,)),
         lambda: jax.jvp(jax.jacrev(xent_jax), (a,), (a,))),
        ("hessian of two arguments", lambda: s2s.hessian(scaled, argnums=(0, 1))(w, x),
         lambda: jax.hessian(scaled_jax, argnums=(0, 1))(w, x)),
        ("jvp of grad, two arguments",
         lambda: s2s.jvp(s2s.grad(scaled, argnums=(0, 1)), (w, x), (w, x)),
         lambda: jax.jvp(jax.grad(scaled_jax, argnums=(0, 1)), (w, x), (w, x))),
    ]


@pytest.mark.every_case
@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=pytest.mark.slow)])
def test_dtypes_and_values_are_jaxs(dtype) -> None:
    tol = dict(rtol=2e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    for name, ours, theirs in cases(dtype):
        for call in range(3):  # the third call runs specialized code
            got, want = jax.tree_util.tree_leaves(ours()), jax.tree_util.tree_leaves(theirs())
            assert [np.asarray(g).dtype for g in got] == [np.asarray(w).dtype for w in want], \
                (name, call)
            for g, w in zip(got, want):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), **tol,
                                           err_msg=name)
