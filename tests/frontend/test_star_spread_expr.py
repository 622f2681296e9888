"""Issue 23, probe 13's ``star_unpack_call``: ``*`` of an expression (``combine(*np.sin
(x))``, ``combine(x[0], *x[1:3], d=x[3])``) into a user function was refused ("`*` here
spreads a value whose length s2s does not know").  As ``combine(*x)`` already was, it is
the reads of the value's items (computed once) after a kept check of its length that
raises Python's TypeError (s2s/frontend/star_items.py); a last parameter passed by
keyword leaves the spread one item fewer.  Default tier: grad against central
differences and the length check; slow: grad, jvp, vmap of grad and jit of grad (both
backends) against JAX, float64 and float32, calls 1, 3 and 10."""

from __future__ import annotations

import numpy as np
import pytest
import star_spread_fns as F
from newcomer_harness import fd_grad, twin
from support import HAVE_JAX

import s2s

X = np.array([0.3, -0.7, 0.45, 1.2])
CASES = {"spread_call": X, "spread_slice_and_keyword": X,
         "spread_rows": np.array([[0.3, -0.7, 0.45], [1.2, 0.1, -0.4], [0.5, 0.8, 0.2],
                                  [-0.3, 0.6, 1.1]])}


def test_grad_against_central_differences() -> None:
    for name in ("spread_call", "spread_slice_and_keyword"):
        f, g = getattr(F, name), s2s.grad(getattr(F, name))
        for c in (0, 2):
            x = X * (1.0 + 0.3 * c) - 0.1 * c
            np.testing.assert_allclose(g(x), fd_grad(f, (x,), 1e-6), 1e-6, 1e-8,
                                       err_msg=name)


def test_another_length_raises_pythons_type_error() -> None:
    """The spread value's length differs at a later call: Python's TypeError, naming
    the expression."""
    g = s2s.grad(F.spread_call)
    g(X)
    with pytest.raises(TypeError, match=r"`\*np.sin\(x\)`"):
        g(np.append(X, 0.5))
    with pytest.raises(TypeError):
        F.spread_call(np.append(X, 0.5))  # (as Python)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_against_jax(name, dtype) -> None:
    import jax

    f, J = getattr(F, name), getattr(twin(F), name)
    tol = (1e-9, 1e-11) if dtype == np.float64 else (2e-5, 2e-6)
    grads = [s2s.grad(f), s2s.jit(s2s.grad(f), backend="numpy"),
             s2s.jit(s2s.grad(f), backend="jax")]
    for c in (0, 2, 9):
        x = (CASES[name] * (1.0 + 0.2 * c) - 0.15 * c).astype(dtype)
        want = np.asarray(jax.grad(J)(x))
        for g in grads:
            got = np.asarray(g(x))
            assert got.dtype == dtype
            np.testing.assert_allclose(got, want, *tol, err_msg=f"call {c}")
        t = np.cos(np.arange(x.size) + c).reshape(x.shape).astype(dtype)
        v, d = s2s.jvp(f, (x,), (t,))
        jv, jd = jax.jvp(J, (x,), (t,))
        np.testing.assert_allclose(v, jv, *tol)
        np.testing.assert_allclose(d, jd, *tol)
        batch = np.stack([x, x * 0.5 + 0.1])
        np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(batch),
                                   jax.vmap(jax.grad(J))(batch), *tol)
