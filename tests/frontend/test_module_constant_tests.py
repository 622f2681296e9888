"""An `if` on a module constant (`if CONFIG["act"] in MODES:`) that returns from its
branches, under hessian and vmap(grad): the emitted gradient spells the test again
for its backward `if`, and when s2s read that gradient back (the second transform)
the two `if`s were unrelated, so a value the forward branch bound was 'used before
it is assigned', an error located in emitted code.  Against JAX on the same source
(jax_twin), float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest
import set_fstring_fns as F
import stmt_checks as C
from support import HAVE_JAX, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.5, 2.0, 0.1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transform", ["hessian", "vmap_grad", "jacrev"])
def test_second_transform_of_a_constant_test(transform, dtype) -> None:
    x = C.cast(X, dtype)
    if transform == "vmap_grad":
        arg = np.stack([x, 0.5 * x, -x])
        got, want = s2s.vmap(s2s.grad(F.module_set)), jax.vmap(jax.grad(J.module_set))
    else:
        arg = x
        got, want = getattr(s2s, transform)(F.module_set), getattr(jax, transform)(
            J.module_set)
    expected = compiled(want)(arg)
    for _ in range(3):
        C.close(got(arg), expected, dtype, transform)


def test_the_constant_changed_between_calls() -> None:
    """the test is read when s2s transforms the function: another value of the
    constant is another transform (as a change to any module constant)."""
    h = s2s.hessian(F.module_set)
    np.testing.assert_allclose(h(X), jax.hessian(J.module_set)(X), rtol=1e-9)
    old = F.CONFIG["act"]
    F.CONFIG["act"], J.CONFIG["act"] = "relu", "relu"
    try:
        np.testing.assert_allclose(h(X), jax.hessian(J.module_set)(X), atol=1e-12)
    finally:
        F.CONFIG["act"], J.CONFIG["act"] = old, old
