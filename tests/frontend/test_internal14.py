"""Composed transforms of issue 23's internal14 pass (``internal14_fns.py``) that
raised errors from emitted code or gave float64 where NumPy and JAX give float32:
vmap of ``np.polyval(np.polyder(c), t)`` where ``c`` has one coefficient (AxisError
from emitted code: np.polyval of no coefficients is ``np.zeros_like(t)``, which lost
the batch axis).

Expected values: closed forms and central differences in the default tier; JAX on the
same source, float64 and float32, under ``-m slow``."""

from __future__ import annotations

from functools import partial

import internal14_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, jax_twin

import s2s

DTYPES = [np.float64, np.float32]
close = partial(assert_close_to, f64=1e-9, f32=2e-4, scale_atol=True)


# ---- np.polyval of np.polyder of a constant, batched ------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_vmap_of_grad_of_polyval_of_a_constants_derivative(dtype) -> None:
    """AxisError from emitted code before: the batched np.polyval of no coefficients
    (``np.polyder`` of ``[a]``) gave ``t``'s shape without the batch axis.  Closed
    forms: ``sum(0 * t + a ** 2)`` and ``sum(a * t + (a t + b) ** 2)``."""
    t = np.array([0.5, -1.0, 2.0, 0.25], dtype)
    a = np.array([[0.5], [-2.0], [1.5]], dtype)
    got = s2s.vmap(s2s.grad(F.polyder_at), in_axes=(0, None))(a, t)
    assert got.shape == (3, 1) and got.dtype == dtype
    np.testing.assert_allclose(got, 2.0 * a * t.size, rtol=1e-6)
    ab = np.array([[0.5, 1.0], [-2.0, 0.3]], dtype)
    got = s2s.vmap(s2s.grad(F.polyder_at), in_axes=(0, None))(ab, t)
    p = ab[:, :1] * t + ab[:, 1:]
    want = np.stack([np.sum(t + 2 * p * t, axis=1), np.sum(2 * p, axis=1)], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-5)


POLY_TRANSFORMS = {
    "vmap": (s2s.vmap, "vmap"),
    "vmap_grad": (lambda f: s2s.vmap(s2s.grad(f)), "vmap_grad"),
    "vmap_jacfwd": (lambda f: s2s.vmap(s2s.jacfwd(f)), "vmap_jacfwd"),
    "vmap_hessian": (lambda f: s2s.vmap(s2s.hessian(f)), "vmap_hessian"),
    "jit_jax_vmap_grad": (lambda f: s2s.jit(s2s.vmap(s2s.grad(f)), backend="jax"),
                          "vmap_grad"),
}


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("how", list(POLY_TRANSFORMS))
def test_batched_polyder_of_few_coefficients_against_jax(how, dtype) -> None:
    """One, two and three coefficients per example (the default ``t``), three calls."""
    import jax

    twin = jax_twin(F).polyder_of_constant
    make, oracle = POLY_TRANSFORMS[how]
    want_of = {"vmap": jax.vmap(twin), "vmap_grad": jax.vmap(jax.grad(twin)),
               "vmap_jacfwd": jax.vmap(jax.jacfwd(twin)),
               "vmap_hessian": jax.vmap(jax.hessian(twin))}[oracle]
    t = make(F.polyder_of_constant)
    for n in (1, 2, 3, 1):
        c = np.random.default_rng(n).normal(size=(3, n)).astype(dtype)
        close(t(c), want_of(c), dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0)], ids=str)
def test_batched_polyder_with_a_given_point_against_jax(in_axes, dtype) -> None:
    import jax

    twin = jax_twin(F).polyder_at
    t = s2s.vmap(s2s.grad(F.polyder_at), in_axes=in_axes)
    want_of = jax.vmap(jax.grad(twin), in_axes=in_axes)
    for n in (1, 2, 1):
        c = np.random.default_rng(n).normal(size=(3, n)).astype(dtype)
        x = np.random.default_rng(10 + n).normal(size=(3, 4)).astype(dtype)
        args = (c if in_axes[0] == 0 else c[0], x if in_axes[1] == 0 else x[0])
        close(t(*args), want_of(*args), dtype)
