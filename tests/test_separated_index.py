"""vmap (and so jacrev, hessian, vmap of grad) of an index whose array items are
separated by a slice or ``None``, where an int next to a slice counts as an array
item once an array is there: NumPy puts the arrays' axes first, and the batched
index ``x[:, i, :, 1]`` puts them before the batch axis.  The batched read is now
``np.moveaxis(x[:, ...], k, 0)`` and a write lines its value up the same way
(``primitives.batching.separated_lead``).  Before, ``a[idx, :, 1]`` and ``a[1, :,
idx]`` under vmap read the batch axis as an array axis (14.1 off NumPy's values, a
wrong number, and 3.0 off under vmap of grad), ``b[idx, :, 1] = W`` wrote across
examples (45 off), and the separated forms with two arrays were refused.  Against
JAX (reads: float64, float32, in_axes 0 and 2) and central differences (writes)."""

from __future__ import annotations

import numpy as np
import pytest
import separated_index_fns as F
import separated_index_write_fns as WF
from support import HAVE_JAX, central_grad, jax, jax_twin

import s2s

A = np.random.default_rng(31).normal(size=(3, 3, 3))
BATCH = np.random.default_rng(32).normal(size=(4, 3, 3, 3))
READS = ["arr_slice_int", "int_slice_arr", "arr_int_arr", "arr_slice_arr",
         "mask_slice_int", "none_between"]
WRITES = ["set_batched_value", "set_constant_rows", "add_into"]


@pytest.mark.every_case
@pytest.mark.parametrize("name", READS + WRITES)
def test_vmap_is_the_loop_over_examples(name) -> None:
    f = getattr(F if name in READS else WF, name)
    v = s2s.vmap(f)
    for call in range(3):
        xs = BATCH * (1.0 + 0.5 * call)
        np.testing.assert_allclose(v(xs), [f(x) for x in xs], rtol=1e-12, atol=1e-12)


@pytest.mark.every_case
@pytest.mark.parametrize("name", WRITES)
def test_writes_under_vmap_of_grad_and_jacrev(name) -> None:
    f = getattr(WF, name)
    got = s2s.vmap(s2s.grad(f))(BATCH[:2])
    for x, g in zip(BATCH[:2], got):
        np.testing.assert_allclose(g, central_grad(f, x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(s2s.jacrev(f)(A), central_grad(f, A), rtol=1e-6, atol=1e-6)


@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.every_case
@pytest.mark.parametrize("name", READS)
def test_reads_match_jax(name) -> None:
    ours, theirs = getattr(F, name), getattr(jax_twin(F), name)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(ours))(BATCH),
                               jax.vmap(jax.grad(theirs))(BATCH), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s2s.hessian(ours)(A), jax.hessian(theirs)(A), rtol=1e-10,
                               atol=1e-12)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("name", READS)
def test_reads_float32_other_axes_and_the_jax_backend(name) -> None:
    ours, theirs = getattr(F, name), getattr(jax_twin(F), name)
    b32 = BATCH.astype(np.float32)
    got = s2s.vmap(s2s.grad(ours))(b32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, jax.vmap(jax.grad(theirs))(b32), rtol=2e-5, atol=1e-6)
    square = BATCH[:3]  # (an example is (3, 3, 3) along any axis)
    for ax in (1, 3):
        np.testing.assert_allclose(
            s2s.vmap(s2s.grad(ours), in_axes=ax, out_axes=ax)(square),
            jax.vmap(jax.grad(theirs), in_axes=ax, out_axes=ax)(square), rtol=1e-12,
            atol=1e-12)
    jj = s2s.jit(s2s.vmap(s2s.grad(ours)), backend="jax")
    for call in range(3):
        np.testing.assert_allclose(jj(BATCH + call), jax.vmap(jax.grad(theirs))(BATCH + call),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", WRITES)
def test_writes_hessian_and_the_jax_backend(name) -> None:
    f = getattr(WF, name)
    g = s2s.grad(f)
    cols = [(g(A + e) - g(A - e)) / 2e-5 for e in np.eye(A.size).reshape((-1,) + A.shape) * 1e-5]
    np.testing.assert_allclose(s2s.hessian(f)(A), np.stack(cols, -1).reshape(A.shape * 2),
                               rtol=1e-5, atol=1e-5)
    if HAVE_JAX:
        jj = s2s.jit(s2s.vmap(s2s.grad(f)), backend="jax")
        np.testing.assert_allclose(jj(BATCH), s2s.vmap(s2s.grad(f))(BATCH), rtol=1e-12,
                                   atol=1e-12)
