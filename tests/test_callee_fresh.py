"""A call whose callee returns an array it made shares no memory with its arguments
(``ir.memory.MemoryCheck.fresh_result``).  Before, the memory check took every call's
value as a possible view of its arguments, so jacrev, hessian and vmap of grad refused
s2s's own gradient code for a function that writes into an array it passed to a
helper (``b[:, 0] += a[2]; return _energy(b)``): the gradient's code calls the
helper's derivative (``b_bar = _energy_vjp(b, g)``) and then restores ``b``, and the
refusal named the emitted code's ``a_2_bar``.  A callee that returns its argument (on
any path) still counts as sharing it.  Checked against central differences of the
function and of JAX's gradient of the same mathematics written without writes."""

from __future__ import annotations

import callee_fresh_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, central_grad, jax, jnp

import s2s

A = np.random.default_rng(23).normal(size=(3, 3, 3))


@pytest.mark.every_case
@pytest.mark.parametrize("name", ["column_then_helper", "row_and_column"])
def test_jacrev_and_vmap_of_grad_run_and_match(name) -> None:
    f = getattr(F, name)
    for call in range(1, 4):
        x = A * (1.0 + 0.2 * call) - 0.1 * call
        want = central_grad(f, x)
        np.testing.assert_allclose(s2s.grad(f)(x), want, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(s2s.jacrev(f)(x), want, rtol=1e-6, atol=1e-7)
        batch = s2s.vmap(s2s.grad(f))(np.stack([x, -x]))
        np.testing.assert_allclose(batch[1], central_grad(f, -x), rtol=1e-6, atol=1e-7)


def _row_and_column_jax(a):
    b = a.at[1, :, 0].set(a[:, 2, 1] * 3.0)
    b = b.at[:, 0].add(a[2] ** 2)
    r = b
    w = jnp.cos(jnp.arange(r.size).reshape(r.shape) * 1.3 + 0.2)
    return jnp.sum(jnp.sin(r) * w) + jnp.sum(b * b)


@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_hessian_matches_jax() -> None:
    np.testing.assert_allclose(F.row_and_column(A), _row_and_column_jax(jnp.asarray(A)),
                               rtol=1e-12)
    np.testing.assert_allclose(s2s.hessian(F.row_and_column)(A),
                               jax.hessian(_row_and_column_jax)(A), rtol=1e-9, atol=1e-9)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_float32_and_the_jax_backend() -> None:
    a32 = A.astype(np.float32)
    got = s2s.jacrev(F.row_and_column)(a32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, jax.grad(_row_and_column_jax)(a32), rtol=2e-4,
                               atol=2e-4)
    jj = s2s.jit(s2s.grad(F.row_and_column), backend="jax")
    for call in range(3):
        np.testing.assert_allclose(jj(A + call), jax.grad(_row_and_column_jax)(A + call),
                                   rtol=1e-10, atol=1e-10)


@pytest.mark.every_case
@pytest.mark.parametrize("name, args", [("held_by_the_same", ()),
                                        ("held_on_one_path", (1,)),
                                        ("held_on_one_path", (0,))])
def test_a_callee_returning_its_argument_still_shares_it(name, args) -> None:
    """NumPy's ``z`` is ``b``, changed by the write (with ``k=0`` a copy, but the
    callee may return its argument): s2s refuses at the read, or gives NumPy's
    number, never the value before the write."""
    f = getattr(F, name)
    try:
        got = s2s.grad(f)(A, *args)
    except s2s.TransformError as e:
        assert "memory" in str(e) or "changed in place" in str(e), str(e)
        assert "<s2s" not in str(e)
    else:
        np.testing.assert_allclose(got, central_grad(lambda x: f(x, *args), A), rtol=1e-6,
                                   atol=1e-8)
