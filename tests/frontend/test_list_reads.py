"""Reading the last item of a list grown by `append` in a loop (`parts[-1]`, issue 23),
under reverse mode (transforms/reverse_buffers.py: the read's cotangent goes to the
list cotangent's last item), against JAX on the same source (jax_twin), float64 and
float32; forward mode and vmap read such items already.

Another item (`parts[0]`, `hs[i - 1]`, slices):
tests/frontend/test_grown_list_reads.py.  jacfwd, hessian and vmap
of these lists: tests/frontend/test_grown_lists.py.  On
the JAX backend a loop that reads the list it grows stays a Python loop
(tests/frontend/test_grown_lists.py)."""

from __future__ import annotations

import list_read_fns as F
import numpy as np
import pytest
import stmt_checks as C
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.5, 2.0, 0.1])
R = np.array([[0.3, -0.5], [2.0, 0.1], [0.7, 0.2]])
CASES = [("last_item", X, ()), ("recurrence", X, ()), ("recurrence", X, (1,)),
         ("recurrence", X, (0,)), ("rnn", R, ()), ("grows_after_read", X, ()),
         ("caller", X, ()), ("first_item", X, ()), ("stacked_and_read", X, ())]
IDS = [f"{name}{rest}" for name, _, rest in CASES]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, x, rest", CASES, ids=IDS)
def test_grad_jvp_vjp_against_jax(name, x, rest, dtype) -> None:
    C.grads(F, J, name, x, rest, dtype)


@pytest.mark.parametrize("name, x, rest", CASES, ids=IDS)
def test_jacrev_and_jit_against_jax(name, x, rest) -> None:
    f, jf = C.bind(getattr(F, name), rest), C.bind(getattr(J, name), rest)
    np.testing.assert_allclose(s2s.jacrev(f)(x), jax.jacrev(jf)(x), rtol=1e-9)
    for _ in range(3):
        np.testing.assert_allclose(s2s.jit(s2s.grad(f))(x), jax.grad(jf)(x), rtol=1e-9)


@pytest.mark.parametrize("name", [pytest.param("last_item", marks=pytest.mark.slow),
                                  "grows_after_read"])
def test_second_order_and_vmap(name) -> None:
    """lists that start empty: hessian, vmap of grad (against JAX), jit on JAX."""
    f, jf = getattr(F, name), getattr(J, name)
    if name == "last_item":
        np.testing.assert_allclose(s2s.hessian(f)(X), jax.hessian(jf)(X), rtol=1e-8)
        np.testing.assert_allclose(s2s.jit(s2s.grad(f), backend="jax")(X),
                                   jax.grad(jf)(X), rtol=1e-9)
    xs = np.stack([X, 0.5 * X, -X])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(xs), jax.vmap(jax.grad(jf))(xs),
                               rtol=1e-9)


@pytest.mark.slow
def test_adversarial() -> None:
    """no row, one row; values changing between calls; NaN stays where JAX puts it."""
    g = s2s.grad(F.rnn)
    for rows in (R[:1], R[:2], R):
        np.testing.assert_allclose(g(rows), jax.grad(J.rnn)(rows), rtol=1e-9)
    assert np.all(g(R[:0]) == 0.0) and g(R[:0]).shape == (0, 2)
    g = s2s.grad(F.recurrence)
    for call in range(1, 11):
        x = X * call
        np.testing.assert_allclose(g(x), jax.grad(J.recurrence)(x), rtol=1e-9)
    x = np.array([0.3, np.nan, 0.1])
    np.testing.assert_array_equal(np.isnan(g(x)), np.isnan(jax.grad(J.recurrence)(x)))


def test_emitted_code_pops_and_appends_back() -> None:
    g = s2s.grad(F.recurrence)
    g(X)
    text = s2s.source(g)
    assert "parts_bar = zeros_list(parts)" in text
    assert ".pop()" in text and "parts_bar.append(" in text
