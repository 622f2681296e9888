"""stop_gradient, linearize, linear_transpose, eval_shape, allow_int, holomorphic,
jit's donate_argnums and remat, against JAX on the same inputs (float64, float32)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import pytree_fns as F
import s2s
from support import jax_twin

J = jax_twin(F)
DTYPES = [np.float64, np.float32]


def close(got, want, dtype):
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), **tol)


def x_of(dtype, seed=0, shape=(4,)):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_stop_gradient_grad_jvp_vmap_and_second_order(dtype):
    x = x_of(dtype)
    close(s2s.grad(F.stopped)(x), jax.grad(J.stopped)(x), dtype)
    for got, want in zip(s2s.jvp(F.stopped_vector, (x,), (x_of(dtype, 1),)),
                         jax.jvp(J.stopped_vector, (x,), (x_of(dtype, 1),))):
        close(got, want, dtype)
    xs = x_of(dtype, 2, (3, 4))
    close(s2s.vmap(s2s.grad(F.stopped))(xs), jax.vmap(jax.grad(J.stopped))(xs), dtype)
    close(s2s.hessian(F.stopped)(x), jax.hessian(J.stopped)(x), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_linearize(dtype):
    x, t = x_of(dtype), x_of(dtype, 1)
    out, f_jvp = s2s.linearize(F.stopped_vector, x)
    jout, jf_jvp = jax.linearize(J.stopped_vector, x)
    close(out, jout, dtype)
    for call in range(3):
        t = x_of(dtype, call + 3)
        close(f_jvp(t), jf_jvp(t), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_transpose(dtype):
    x, y, ct = x_of(dtype, 0, (3,)), x_of(dtype, 1, (2,)), x_of(dtype, 2, (3,))
    got = s2s.linear_transpose(F.linear_map, x, y)(ct)
    want = jax.linear_transpose(J.linear_map, x, y)(ct)
    for g, w in zip(got, want):
        close(g, w, dtype)
    spec = (s2s.ShapeDtypeStruct((3,), dtype), s2s.ShapeDtypeStruct((2,), dtype))
    for g, w in zip(s2s.linear_transpose(F.linear_map, *spec)(ct), want):
        close(g, w, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eval_shape(dtype):
    p = F.Params(s2s.ShapeDtypeStruct((3, 2), dtype), s2s.ShapeDtypeStruct((2,), dtype))
    jp = J.Params(jax.ShapeDtypeStruct((3, 2), dtype), jax.ShapeDtypeStruct((2,), dtype))
    x = np.zeros((5, 3), dtype)
    got, want = s2s.eval_shape(F.params_out, p, x), jax.eval_shape(J.params_out, jp, x)
    assert got.shape == want.shape and got.dtype == want.dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_allow_int_gives_float0_zeros(dtype):
    x = x_of(dtype)
    got = s2s.grad(F.int_scaled, argnums=(0, 1), allow_int=True)(x, 3)
    want = jax.grad(J.int_scaled, argnums=(0, 1), allow_int=True)(x, 3)
    close(got[0], want[0], dtype)
    assert got[1].dtype == s2s.api.float0 and np.shape(got[1]) == np.shape(want[1])
    assert want[1].dtype == jax.dtypes.float0
    v, g = s2s.value_and_grad(F.int_scaled, argnums=1, allow_int=True)(x, 3)
    jv, jg = jax.value_and_grad(J.int_scaled, argnums=1, allow_int=True)(x, 3)
    close(v, jv, dtype)
    assert g.dtype == s2s.api.float0
    with pytest.raises(TypeError, match="allow_int"):  # without it: JAX's refusal
        s2s.grad(F.int_scaled, argnums=1)(x, 3)


def test_holomorphic_grad_matches_jax():
    z = np.array([0.5 + 1.0j, -1.0 + 0.25j])
    for fn in (s2s.grad, s2s.value_and_grad):
        got = fn(F.stopped, holomorphic=True)(z)
        want = getattr(jax, fn.__name__)(J.stopped, holomorphic=True)(z)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_jit_donate_argnums_and_remat(dtype):
    x = x_of(dtype)
    f = s2s.jit(s2s.grad(F.stopped), donate_argnums=0)
    close(f(x), jax.jit(jax.grad(J.stopped), donate_argnums=0)(x), dtype)
    assert s2s.remat is s2s.checkpoint
