"""The characters of a string constant walked by a comprehension or a loop
(``{k: ... for i, k in enumerate("abc")}`` was refused), and ``if`` tests of
literals only (``"a" in ("a", "b")``) decided when transforming.  Against JAX on the
same source, float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest
import string_item_fns as F  # (pytest puts this directory on sys.path)
from support import HAVE_JAX, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["dict_over_enumerate", "loop_over_module_string",
                                  "literal_tests"])
def test_against_jax(name, dtype) -> None:
    x = np.array([0.3, -0.7, 1.2], dtype)
    tol = dict(rtol=1e-9) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-6)
    ours, theirs = getattr(F, name), getattr(J, name)
    np.testing.assert_allclose(s2s.grad(ours)(x), compiled(jax.grad(theirs))(x), **tol)
    np.testing.assert_allclose(s2s.hessian(ours)(x), compiled(jax.hessian(theirs))(x), **tol)
    batch = np.stack([x, 2 * x])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(ours))(batch),
                               compiled(jax.vmap(jax.grad(theirs)))(batch), **tol)


def test_a_literal_test_leaves_no_if() -> None:
    grad = s2s.grad(F.literal_tests)
    grad(np.ones(3))
    assert "if " not in s2s.source(grad).split("def literal_tests_grad")[1]
