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


@pytest.mark.slow  # (the default tier's budget)
def test_a_derivative_through_np_unique_is_refused_located() -> None:
    """(And ``unique_weighted`` against central differences.)  Float labels
    differentiated: ``np.unique`` has no derivative rule (JAX's is a
    gather of the first occurrences), refused at the user's line, not taken as 0; and
    vmap over the labels (a different count per example)."""
    x, labels = R.normal(size=6), LABELS[0]
    np.testing.assert_allclose(s2s.grad(F.unique_weighted)(x, labels),
                               H.fd_grad(F.unique_weighted, (x, labels), 1e-6), rtol=1e-6)
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


# ---- a tuple or list read by a key known only when the code runs ----------------------

X = np.array([0.3, -0.7, 0.45])


def test_a_list_read_by_a_run_time_key_runs() -> None:
    """``params[i]`` through ``__getitem__`` (probe 8's getitem_len_container), a
    helper ``pick(xs, i)``, ``xs[i - 1]`` of a list grown by ``append``, a ``while``'s
    counter: refused before ("can only be indexed with a constant key"), now
    ``np.stack(xs)[i]``, against central differences (the other two: the slow tier,
    against JAX); the helper's list has 3, then 1 item (code made again for each
    length, never a stale one)."""
    np.testing.assert_allclose(s2s.grad(F.container_loop)(X),
                               H.fd_grad(F.container_loop, (X,), 1e-6), rtol=1e-6, atol=1e-8)
    g = s2s.grad(F.helper_loop)
    for n in (3, 1):
        ws = [np.full(3, k + 1.0) for k in range(n)]
        got = g(X, ws)
        np.testing.assert_allclose(got, H.fd_grad(lambda v: F.helper_loop(v, ws), (X,), 1e-6),
                                   rtol=1e-6, atol=1e-8, err_msg=str(n))
        assert not np.shares_memory(got, X)


@pytest.mark.slow  # (the default tier's budget)
def test_items_of_different_shapes_read_by_a_run_time_key_are_refused_located() -> None:
    """``xs = (x, np.sum(x))`` read as ``xs[i]``: NumPy's stack refuses the shapes, at
    the user's line (not a line of emitted code)."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.mixed_shapes)(X)
    assert "total = total + np.sum(xs[i])" in str(info.value), str(info.value)
    assert "different shapes" in str(info.value)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("name", ["container_loop", "shifted_loop", "while_counter"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_run_time_keys_against_jax(name, dtype) -> None:
    import jax

    J = H.twin(F)
    ours, theirs = getattr(F, name), getattr(J, name)
    rtol = 2e-5 if dtype == np.float32 else 1e-10
    for k in (1, 3, 10):
        x = (X * (1 + 0.1 * k)).astype(dtype)
        np.testing.assert_allclose(s2s.grad(ours)(x), jax.grad(theirs)(x), rtol=rtol, atol=rtol)
    t = np.cos(np.arange(3) + 1.0).astype(dtype)
    np.testing.assert_allclose(s2s.jvp(ours, (x,), (t,))[1], jax.jvp(theirs, (x,), (t,))[1],
                               rtol=rtol, atol=rtol)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(ours))(xs), jax.vmap(jax.grad(theirs))(xs),
                               rtol=rtol, atol=rtol)
    np.testing.assert_allclose(s2s.hessian(ours)(x), jax.hessian(theirs)(x), rtol=rtol, atol=rtol)
    for backend in ("numpy", "jax"):
        np.testing.assert_allclose(s2s.jit(s2s.grad(ours), backend=backend)(x),
                                   jax.jit(jax.grad(theirs))(x), rtol=rtol, atol=rtol)
