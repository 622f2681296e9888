"""vmap (and the transforms that run vmap: jacfwd, jacrev) of functions that pass a
lambda, a nested def, a global of their own module or a NumPy function to a helper,
in the same module or another one.  vmap's rank probe runs the helper as normalized
for the call; it called the function value by a name the helper's module did not
bind (`lam`, `scaled`): "'NoneType' object is not callable".  Every expected value
from JAX on the same source (jax_twin), float64 and float32, calls 1, 3 and 10 on
changing batches."""

from __future__ import annotations

import fnvalue_vmap_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

NAMES = ["lambda_to_helper", "nested_def_to_helper", "global_to_other_module",
         "lambda_to_other_module", "nested_to_other_twice", "ufunc_to_other_module"]
DTYPES = [np.float64, np.float32]
BATCH = np.array([[0.3, -0.7, 1.2], [0.1, 0.4, -0.9], [1.5, 0.2, 0.05]])


def close(got, expected, dtype):
    tol = dict(rtol=1e-9, atol=1e-11) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype == dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, **tol)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", NAMES)
def test_vmap_and_vmap_of_grad(name, dtype) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    batched, batched_grad = s2s.vmap(ours), s2s.vmap(s2s.grad(ours))
    for call in range(10):  # (calls 1, 3 and 10 checked: each a new batch)
        batch = (BATCH * (1.0 + 0.1 * call)).astype(dtype)
        if call in (0, 2, 9):
            close(batched(batch), jax.vmap(theirs)(batch), dtype)
            close(batched_grad(batch), jax.vmap(jax.grad(theirs))(batch), dtype)
        else:
            batched(batch), batched_grad(batch)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_jacobians(name) -> None:
    ours, theirs = getattr(F, name), getattr(J, name)
    for dtype in DTYPES:
        x = BATCH[0].astype(dtype)
        close(s2s.jacfwd(s2s.grad(ours))(x), jax.jacfwd(jax.grad(theirs))(x), dtype)
        close(s2s.jacrev(s2s.grad(ours))(x), jax.jacrev(jax.grad(theirs))(x), dtype)


# (the default tier: the two kinds of name, by hand; JAX checks them all under -m slow)


def test_the_issue_repro() -> None:
    """The reported case: vmap(grad(h)) of ``apply(lambda v: v * w, x)``, h = sum(3 x**2)
    so 6 x, on ones then on other rows."""
    batched_grad = s2s.vmap(s2s.grad(F.lambda_to_helper))
    np.testing.assert_array_equal(batched_grad(np.ones((3, 2))), np.full((3, 2), 6.0))
    np.testing.assert_allclose(batched_grad(BATCH), 6.0 * BATCH, rtol=1e-12)


def test_a_global_given_to_another_module_float32() -> None:
    """``apply_other(scaled, x)``: f = sum((2 * 1.5 sin x)**2) = 9 sum(sin(x)**2), so
    f' = 9 sin(2x); float32 in, float32 out."""
    x = BATCH.astype(np.float32)
    got = s2s.vmap(s2s.grad(F.global_to_other_module))(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, 9.0 * np.sin(2.0 * BATCH), rtol=2e-5, atol=2e-6)
    values = s2s.vmap(F.global_to_other_module)(x)
    assert values.dtype == np.float32
    np.testing.assert_allclose(values, 9.0 * np.sum(np.sin(BATCH) ** 2, axis=1), rtol=2e-5)
