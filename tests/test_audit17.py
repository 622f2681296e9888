"""An audit of rules on square (3, 3, 3) inputs, axis tuples and integer-valued
inputs with ties, against JAX.  np.median over an axis tuple was a NumPy TypeError
inside its derivative (the rule read ``np.shape(a)[axis]``; it now moves the axes
last and merges them to rank the elements), and vmap of np.average with
``weights=None`` written out was a TypeError in the batch rule (the explicit None
was taken for weights)."""

from __future__ import annotations

import audit17_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, central_grad, jax, jax_twin

import s2s

NAMES = ["median_axes_02", "median_axes_neg_keep", "median_axis_1",
         "average_weights_none"]
A = np.random.default_rng(17).normal(size=(3, 3, 3))
TIES = np.random.default_rng(18).integers(-2, 3, size=(3, 3, 3)).astype(float)
T = np.cos(np.arange(27.0) * 1.3).reshape(3, 3, 3)


@pytest.mark.every_case
@pytest.mark.parametrize("name", NAMES)
def test_grad_and_vmap_of_grad_against_central_differences(name) -> None:
    f = getattr(F, name)
    want = central_grad(f, A)
    np.testing.assert_allclose(s2s.grad(f)(A), want, rtol=1e-6, atol=1e-6)
    got = s2s.vmap(s2s.grad(f), in_axes=2)(np.stack([A, -A], axis=2))
    np.testing.assert_allclose(got[0], want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[1], central_grad(f, -A), rtol=1e-6, atol=1e-6)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("x", [A, TIES], ids=["random", "ties"])
@pytest.mark.parametrize("name", NAMES)
def test_against_jax(name, x, dtype) -> None:
    f, fj = getattr(F, name), getattr(jax_twin(F), name)
    tol = 1e-10 if dtype == np.float64 else 1e-4
    x, t = x.astype(dtype), T.astype(dtype)
    batch = np.stack([x, -x, 0.5 * x])
    if True:  # (JAX keeps float32 inputs float32)
        pairs = [
            (s2s.grad(f)(x), jax.grad(fj)(x)),
            (s2s.jvp(f, (x,), (t,))[1], jax.jvp(fj, (x,), (t,))[1]),
            (s2s.vmap(s2s.grad(f))(batch), jax.vmap(jax.grad(fj))(batch)),
            (s2s.vmap(s2s.grad(f), in_axes=1, out_axes=1)(np.moveaxis(batch, 0, 1)),
             np.moveaxis(np.asarray(jax.vmap(jax.grad(fj))(batch)), 0, 1)),
            (s2s.vmap(lambda y: s2s.jvp(f, (y,), (t,))[1])(batch),
             jax.vmap(lambda y: jax.jvp(fj, (y,), (t,))[1])(batch)),
            (s2s.hessian(f)(x), jax.hessian(fj)(x)),
        ]
        for got, want in pairs:
            np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float),
                                       rtol=tol, atol=tol)


@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.every_case
@pytest.mark.parametrize("name", ["median_axis_1", "median_axes_02"])
def test_median_rules_on_the_jax_backend(name) -> None:
    """The median rules' axes are Python's (sorted ints), not arrays: under jax.jit
    an array of axes is traced, and np.moveaxis needs them static (the first form of
    the tuple-axis fix made every median a TracedValueError on the JAX backend, an
    int axis too)."""
    ours, theirs = getattr(F, name), getattr(jax_twin(F), name)
    jj = s2s.jit(s2s.grad(ours), backend="jax")
    for call in range(3):
        x = A * (1.0 + 0.4 * call)
        np.testing.assert_allclose(jj(x), jax.grad(theirs)(x), rtol=1e-10, atol=1e-12)


@pytest.mark.every_case
@pytest.mark.parametrize("name", ["percentile_axes", "quantile_axes_positional",
                                  "nanquantile_axes", "nanpercentile_axes"])
def test_quantiles_over_an_axis_tuple_are_refused_at_the_call(name) -> None:
    """np.quantile, np.percentile and their NaN-skipping forms over an axis tuple:
    their rules sort along one axis (a NumPy ValueError from np.moveaxis inside the
    derivative before): refused at the user's call, located."""
    f = getattr(F, name)
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(f)(A)
    message = str(info.value)
    assert "axis` tuple" in message and "audit17_fns.py" in message and "<s2s" not in message
