"""Loops (issue 23, loops14): ``for c in np.unique(labels)`` over labels that are not
differentiated runs (``np.unique`` a primitive with no derivative rule: a run-time loop
over its values, the loop's length known only when the code runs).

The default tier checks against a Python loop and central differences, with label sets
whose number of distinct values changes between calls; the slow tier against JAX on
the same source (``newcomer_harness.twin``), float64 and float32."""

from __future__ import annotations

import loops14_fns as F
import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX

import s2s

R = np.random.default_rng(14)


def unique_means_grad(x, labels):
    """The gradient of ``unique_means`` by a Python loop over the labels' groups."""
    g = np.zeros_like(x)
    for c in sorted(set(labels.tolist())):
        m = labels == c
        g[m] = 2.0 * np.mean(x[m]) / np.sum(m)
    return g


LABELS = [np.array([0, 2, 0, 1, 2, 2]), np.array([3, 3, 3]), np.array([5, 1, 4, 0, 2]),
          np.array([7]), np.zeros(0, dtype=int)]


def test_a_loop_over_np_unique_of_labels_runs() -> None:
    """Calls whose labels have 3, 1, 5, 1 and 0 distinct values (the loop's length read
    at each call, never a stale one), float64 and float32, against a Python loop."""
    g = s2s.grad(F.unique_means)
    for dtype in (np.float64, np.float32):
        for labels in LABELS + LABELS[:1]:
            x = R.normal(size=labels.size).astype(dtype)
            got = g(x, labels)
            assert got.dtype == dtype
            np.testing.assert_allclose(got, unique_means_grad(x, labels),
                                       rtol=1e-5 if dtype == np.float32 else 1e-12)
            assert not np.shares_memory(got, x)
    x = R.normal(size=6)
    labels = LABELS[0]
    np.testing.assert_allclose(s2s.grad(F.unique_weighted)(x, labels),
                               H.fd_grad(F.unique_weighted, (x, labels), 1e-6), rtol=1e-6)


def test_a_derivative_through_np_unique_is_refused_located() -> None:
    """Float labels differentiated: ``np.unique`` has no derivative rule (JAX's is a
    gather of the first occurrences), refused at the user's line, not taken as 0; and
    vmap over the labels (a different count per example)."""
    x, labels = R.normal(size=6), LABELS[0]
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.unique_means, argnums=1)(x, labels.astype(float))
    assert "for c in np.unique(labels):" in str(info.value), str(info.value)
    assert "`unique` has no derivative rule in `ar`" in str(info.value)
    with pytest.raises(s2s.TransformError) as info:
        s2s.vmap(s2s.grad(F.unique_means))(np.stack([x, x]), np.stack([labels, labels]))
    assert "for c in np.unique(labels):" in str(info.value), str(info.value)
    assert "np.unique of a batched array" in str(info.value)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("name", ["unique_means", "unique_weighted"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_np_unique_loops_against_jax(name, dtype) -> None:
    import jax

    J = H.twin(F)
    ours, theirs = getattr(F, name), getattr(J, name)
    rtol = 2e-5 if dtype == np.float32 else 1e-10
    for labels in LABELS[:4]:
        x = R.normal(size=labels.size).astype(dtype)
        t = np.cos(np.arange(labels.size) + 1.0).astype(dtype)
        np.testing.assert_allclose(s2s.grad(ours)(x, labels),
                                   jax.grad(theirs)(x, labels), rtol=rtol, atol=rtol)
        _, tan = s2s.jvp(lambda v: ours(v, labels), (x,), (t,))
        _, jtan = jax.jvp(lambda v: theirs(v, labels), (x,), (t,))
        np.testing.assert_allclose(tan, jtan, rtol=rtol, atol=rtol)
        xs = np.stack([x, 2 * x])
        np.testing.assert_allclose(
            s2s.vmap(s2s.grad(ours), in_axes=(0, None))(xs, labels),
            jax.vmap(jax.grad(theirs), in_axes=(0, None))(xs, labels), rtol=rtol, atol=rtol)
        np.testing.assert_allclose(s2s.hessian(ours)(x, labels),
                                   jax.hessian(theirs)(x, labels), rtol=rtol, atol=rtol)
        np.testing.assert_allclose(s2s.jit(s2s.grad(ours))(x, labels),
                                   jax.grad(theirs)(x, labels), rtol=rtol, atol=rtol)
    with pytest.raises(s2s.TransformError):  # (jax.jit refuses the traced length too)
        s2s.jit(ours, backend="jax")(x, labels)
