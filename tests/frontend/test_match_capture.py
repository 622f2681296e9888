"""Issue 23, probe 13's ``match_string_capture``: a ``match`` on a string whose last case
is a capture (``case other: raise ValueError(f"... {other}")``) was refused ("this
`match` tests `kind`, a value known only when the function runs") wherever the string
was a helper's parameter (jvp of a lambda calling it).  It is now the ``if``/``elif``
chain of its literal cases (s2s/frontend/match_case.py), the capture ``other = kind``
first in the last case's body, or, in a body that only raises, read as ``kind``.
Default tier: grad against central differences and the raise; slow: grad, jvp, vmap
of grad and jit of grad (both backends) against JAX, float64 and float32, calls 1, 3
and 10."""

from __future__ import annotations

import match_capture_fns as F
import numpy as np
import pytest
from newcomer_harness import fd_grad, twin
from support import HAVE_JAX

import s2s

X = np.array([0.3, -0.7, 0.45, 1.2])


def test_helper_capture_against_central_differences() -> None:
    """The helper's string from its default, a positional and a keyword argument (the
    slow tier adds a capture read as a value, ``len(other)``): grad at two values."""
    g = s2s.grad(F.by_default)
    for c in (0, 2):
        x = X * (1.0 + 0.3 * c) - 0.1 * c
        np.testing.assert_allclose(g(x), fd_grad(F.by_default, (x,), 1e-6), 1e-6, 1e-8)


def test_capture_that_raises_names_the_value() -> None:
    """The last case's raise reads the subject: Python's message, under grad of the
    function itself and of a lambda calling it."""
    with pytest.raises(ValueError, match="unknown activation gelu"):
        s2s.grad(F.activation)(X, "gelu")
    with pytest.raises(ValueError, match="unknown activation tanh"):
        s2s.jvp(lambda x: F.activation(x, "tanh"), (X,), (X,))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", ["by_default", "capture_used"])
def test_against_jax(name, dtype) -> None:
    import jax

    f, J = getattr(F, name), getattr(twin(F), name)
    tol = (1e-9, 1e-11) if dtype == np.float64 else (2e-5, 2e-6)
    grads = [s2s.grad(f), s2s.jit(s2s.grad(f), backend="numpy"),
             s2s.jit(s2s.grad(f), backend="jax")]
    for c in (0, 2, 9):
        x = (X * (1.0 + 0.2 * c) - 0.15 * c).astype(dtype)
        want = np.asarray(jax.grad(J)(x))
        for g in grads:
            got = np.asarray(g(x))
            assert got.dtype == dtype
            np.testing.assert_allclose(got, want, *tol, err_msg=f"call {c}")
        t = np.cos(np.arange(4.0) + c).astype(dtype)
        v, d = s2s.jvp(lambda x: f(x), (x,), (t,))
        jv, jd = jax.jvp(J, (x,), (t,))
        np.testing.assert_allclose(v, jv, *tol)
        np.testing.assert_allclose(d, jd, *tol)
        batch = np.stack([x, x[::-1] * 0.5])
        np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(batch),
                                   jax.vmap(jax.grad(J))(batch), *tol)
