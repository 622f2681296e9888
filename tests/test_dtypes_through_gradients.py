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
    """``(name, s2s function, JAX function, arguments)``."""
    r = np.random.default_rng(3)
    a = r.normal(size=(4, 3)).astype(dtype)
    batch = np.stack([a, a * 0.5])
    w, x = r.normal(size=3).astype(dtype), r.normal(size=(5, 3)).astype(dtype)
    return [
        ("jacrev", s2s.jacrev(xent), jax.jacrev(xent_jax), (a,)),
        ("jacfwd", s2s.jacfwd(xent), jax.jacfwd(xent_jax), (a,)),
        ("hessian", s2s.hessian(xent), jax.hessian(xent_jax), (a,)),
        ("vmap of grad", s2s.vmap(s2s.grad(xent)), jax.vmap(jax.grad(xent_jax)), (batch,)),
        ("vmap of value_and_grad", s2s.vmap(s2s.value_and_grad(xent)),
         jax.vmap(jax.value_and_grad(xent_jax)), (batch,)),
        ("jvp of grad", lambda a: s2s.jvp(s2s.grad(xent), (a,), (a,)),
         lambda a: jax.jvp(jax.grad(xent_jax), (a,), (a,)), (a,)),
        ("jacfwd of grad", s2s.jacfwd(s2s.grad(xent)), jax.jacfwd(jax.grad(xent_jax)), (a,)),
        ("jacrev of grad", s2s.jacrev(s2s.grad(xent)), jax.jacrev(jax.grad(xent_jax)), (a,)),
        ("jvp of jacrev", lambda a: s2s.jvp(s2s.jacrev(xent), (a,), (a,)),
         lambda a: jax.jvp(jax.jacrev(xent_jax), (a,), (a,)), (a,)),
        ("hessian of two arguments", s2s.hessian(scaled, argnums=(0, 1)),
         jax.hessian(scaled_jax, argnums=(0, 1)), (w, x)),
        ("jvp of grad, two arguments",
         lambda w, x: s2s.jvp(s2s.grad(scaled, argnums=(0, 1)), (w, x), (w, x)),
         lambda w, x: jax.jvp(jax.grad(scaled_jax, argnums=(0, 1)), (w, x), (w, x)), (w, x)),
        ("vmap of grad, one argument batched",
         s2s.vmap(s2s.grad(scaled), in_axes=(0, None)),
         jax.vmap(jax.grad(scaled_jax), in_axes=(0, None)), (np.stack([w, -w]), x)),
    ]


def check(ours, theirs, args, dtype, name) -> None:
    tol = dict(rtol=2e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    want = jax.tree_util.tree_leaves(jax.jit(theirs)(*args))  # (JAX, once, compiled)
    for call in range(3):  # the third call runs specialized code
        got = jax.tree_util.tree_leaves(ours(*args))
        assert [np.asarray(g).dtype for g in got] == [np.asarray(w).dtype for w in want], \
            (name, call)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), **tol, err_msg=name)


# (JAX's eager transforms cost most of this test: the default tier runs four of the
# compositions in float32, every one in both dtypes under -m slow)
_DEFAULT = ("jacrev", "vmap of grad", "jvp of grad", "jacrev of grad")


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.parametrize("case, dtype", [
    pytest.param(name, dtype, marks=() if name in _DEFAULT and dtype == np.float32
                 else pytest.mark.slow, id=f"{name}-{np.dtype(dtype).name}")
    for name, *_ in cases(np.float64) for dtype in (np.float32, np.float64)])
def test_dtypes_and_values_are_jaxs(case, dtype) -> None:
    for name, ours, theirs, args in cases(dtype):
        if name == case:
            check(ours, theirs, args, dtype, name)


# (each case compiles with XLA: the default tier runs the compositions that came back
# float64 on the JAX backend, in float32; every case and float64 under -m slow)
_JAX_DEFAULT = ("vmap of grad", "jvp of grad", "hessian")
_JAX_CASES = [pytest.param(name, dtype, marks=() if name in _JAX_DEFAULT and
                           dtype == np.float32 else pytest.mark.slow,
                           id=f"{name}-{np.dtype(dtype).name}")
              for name, *_ in cases(np.float64) for dtype in (np.float32, np.float64)]


@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", _JAX_CASES)
def test_on_the_jax_backend(name, dtype) -> None:
    """The same compositions under ``s2s.jit(..., backend="jax")`` against ``jax.jit``:
    the emitted code runs on JAX values, with the NumPy backend's casts (a vmapped
    gradient, a jvp or jacfwd of one and a Hessian came back float64; a jvp of a
    jacrev in traced code was refused)."""
    ours, theirs, args = next(c[1:] for c in cases(dtype) if c[0] == name)
    check(s2s.jit(ours, backend="jax"), jax.jit(theirs), args, dtype, name)
