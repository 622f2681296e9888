"""Lists grown in a loop whose body reads them, on the JAX backend: the loop must
see the list as grown so far.  (A lowered loop extends its lists once the scan is
done; a body reading ``parts[-1]`` read the list as it was before the loop, and
``s2s.jit(f, backend="jax")`` gave silently wrong numbers.)  Against JAX on the
same source (jax_twin), float64 and float32."""

from __future__ import annotations

import grown_list_fns as G
import list_read_fns as F
import numpy as np
import pytest
import stmt_checks as C
from support import HAVE_JAX, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    JG, JF = jax_twin(G), jax_twin(F)

X = np.array([0.3, -0.5, 2.0, 0.1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["reads_grown", "reads_in_while", "reads_length"])
def test_jit_on_jax_sees_the_grown_list(name, dtype) -> None:
    f, jf = getattr(G, name), getattr(JG, name)
    x = C.cast(X, dtype)
    g = s2s.jit(f, backend="jax")
    want = compiled(jf)(x)
    for _ in range(3):
        C.close(g(x), want, dtype, name)
    C.close(g(2.0 * x), compiled(jf)(2.0 * x), dtype, name + " (new values)")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["recurrence", "caller"])
def test_grad_on_jax_sees_the_grown_list(name, dtype) -> None:
    """reverse mode's forward sweep keeps such a list, read by the loop."""
    f, jf = getattr(F, name), getattr(JF, name)
    x = C.cast(X, dtype)
    C.close(s2s.jit(f, backend="jax")(x), compiled(jf)(x), dtype, "value")
    g = s2s.jit(s2s.grad(f), backend="jax")
    want = compiled(jax.grad(jf))(x)
    for _ in range(3):
        C.close(g(x), want, dtype, "grad")
