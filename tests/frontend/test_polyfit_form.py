"""Issue 23, probe 13's ``detrend_polyfit``: ``np.polyfit(x, y, deg)`` (refused: "has no
derivative rule in s2s yet") is a form (s2s/primitives/forms.py): NumPy's
unit-norm-column Vandermonde matrix, its pseudo-inverse, the scale divided back out.
Default tier: grad against central differences and the value against NumPy's; slow:
grad, jvp, vmap of grad and jit of grad (both backends) against JAX, float64 and
float32, at calls 1, 3 and 10."""

from __future__ import annotations

import numpy as np
import polyfit_fns as F
import pytest
from newcomer_harness import fd_grad, twin
from support import HAVE_JAX

import s2s
from s2s.errors import TransformError

Y = np.array([0.3, -0.7, 0.45, 1.2, 0.2])

CASES = {"detrend": (Y,), "quadratic_of_points": (F.T, Y), "columns": (Y,)}


def _call(name, c):
    first, *rest = CASES[name]
    return (first * (1.0 + 0.1 * c) + 0.03 * c * np.arange(first.size),
            *(r * (1.0 - 0.05 * c) for r in rest))


def test_grad_and_value() -> None:
    """Grad of the points and the samples at two calls against central differences;
    the value NumPy's."""
    f = F.quadratic_of_points
    vg = s2s.value_and_grad(f, argnums=(0, 1))
    for c in (0, 2):
        args = _call("quadratic_of_points", c)
        val, grads = vg(*args)
        np.testing.assert_allclose(val, f(*args), 1e-12)
        fd = fd_grad(lambda t: f(t, args[1]), (args[0],), 1e-6)
        np.testing.assert_allclose(grads[0], fd, 1e-6, 1e-8)
        np.testing.assert_allclose(grads[1], fd_grad(lambda y: f(args[0], y), (args[1],),
                                                     1e-6), 1e-6, 1e-8)


def test_degree_not_written_is_located() -> None:
    def f(x, d):
        return np.sum(np.polyfit(F.T, x, d))

    with pytest.raises(TransformError, match="deg") as info:
        s2s.grad(f)(Y, np.float64(1.5))
    assert info.value.loc is not None


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_against_jax(name, dtype) -> None:
    import jax

    f, J = getattr(F, name), getattr(twin(F), name)
    tol = (1e-8, 1e-10) if dtype == np.float64 else (2e-3, 2e-4)
    grads = [s2s.grad(f), s2s.jit(s2s.grad(f), backend="numpy"),
             s2s.jit(s2s.grad(f), backend="jax")]
    for c in (0, 2, 9):
        args = tuple(a.astype(dtype) for a in _call(name, c))
        want = np.asarray(jax.grad(J)(*args))
        for g in grads:
            np.testing.assert_allclose(np.asarray(g(*args)), want, *tol, err_msg=f"call {c}")
        t = np.cos(np.arange(args[0].size) + c).astype(dtype)
        rest = args[1:]
        v, d = s2s.jvp(lambda x: f(x, *rest), (args[0],), (t,))
        jv, jd = jax.jvp(lambda x: J(x, *rest), (args[0],), (t,))
        np.testing.assert_allclose(v, jv, *tol)
        np.testing.assert_allclose(d, jd, *tol)
        batch = np.stack([args[0], args[0] * 0.8 + 0.1])
        in_axes = (0,) + (None,) * len(rest)
        np.testing.assert_allclose(
            s2s.vmap(s2s.grad(f), in_axes=in_axes)(batch, *rest),
            jax.vmap(jax.grad(J), in_axes=in_axes)(batch, *rest), *tol)
