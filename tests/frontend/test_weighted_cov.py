"""Issue 23, probe 13's ``np.cov(pts, aweights=w)``: ``np.cov`` with ``fweights=`` /
``aweights=`` is a form (s2s/primitives/forms_reduce.py) in terms of sum, multiply and
matmul, as NumPy computes it.  The default tier checks grad against central
differences (no JAX); the slow tier checks grad, jvp, vmap of grad and s2s.jit of grad
on both backends against JAX on the same source (weighted_cov_fns.py), float64 and
float32, at calls 1, 3 and 10 with the data and the weights changing."""

from __future__ import annotations

import numpy as np
import pytest
import weighted_cov_fns as F
from newcomer_harness import fd_grad, twin
from support import HAVE_JAX

import s2s
from s2s.errors import TransformError

RNG = np.random.default_rng(23)
M = RNG.normal(size=(3, 4))
A = RNG.uniform(0.5, 2.0, 4)
FW = np.array([1, 3, 2, 1])

CASES = {
    "cov_aweights_of_x": (np.array([0.1, -0.3, 0.5, 0.2]),),
    "cov_data_aweights": (M, A),
    "cov_fweights_columns": (M.T.copy(), FW),
    "cov_both_ddof": (M, A, FW),
    "cov_one_variable": (M[0].copy(), A),
}


def _call(name, c):
    """Call ``c``'s arguments: every float argument moved (weights included), the
    integer frequencies permuted."""
    out = []
    for k, a in enumerate(CASES[name]):
        if a.dtype.kind == "i":
            out.append(np.roll(a, c))
        elif k == 0:
            out.append(a * (1.0 + 0.13 * c) + 0.05 * c)
        else:
            out.append(a * (1.0 + 0.2 * np.sin(c + np.arange(a.size))))
    return tuple(out)


@pytest.mark.parametrize("name", ["cov_aweights_of_x", "cov_both_ddof"])
def test_grad_against_central_differences(name) -> None:
    """Grad at calls 1 and 3 (weights changing) against central differences."""
    f = getattr(F, name)
    g = s2s.grad(f)
    for c in (0, 2):
        args = _call(name, c)
        np.testing.assert_allclose(g(*args), fd_grad(f, args, 1e-6), 1e-6, 1e-8)


def test_value_is_numpys() -> None:
    """The value (float32 data: NumPy's float64 result, as np.cov gives it)."""
    m, a = M.astype(np.float32), A.astype(np.float32)
    val, _ = s2s.value_and_grad(F.cov_data_aweights)(m, a)
    want = F.cov_data_aweights(m, a)
    assert val.dtype == want.dtype
    np.testing.assert_allclose(val, want, 1e-12)


def test_weights_written_as_lists() -> None:
    """Weights as a list and a tuple literal (NumPy takes them; an internal TypeError
    of ``np.astype`` of a list before): value and grad."""

    def f(m):
        return np.sum(np.cov(m, aweights=[1.0, 2.0, 0.5, 1.0], fweights=(1, 2, 1, 1)))

    val, grad = s2s.value_and_grad(f)(M)
    np.testing.assert_allclose(val, f(M), 1e-12)
    np.testing.assert_allclose(grad, fd_grad(f, (M,), 1e-6), 1e-6, 1e-8)


def test_y_with_weights_is_located() -> None:
    """``y=`` with weights: a located refusal at the user's line."""

    def f(x):
        return np.sum(np.cov(x, x, aweights=np.ones(3)))

    with pytest.raises(TransformError, match="y=") as info:
        s2s.grad(f)(np.ones(3))
    assert info.value.loc is not None
    assert "np.cov(x, x, aweights" in str(info.value)


def test_bad_weights_raise_as_numpy_does() -> None:
    """A negative weight raises NumPy's ValueError, at the user's line (a number was
    computed before); a fractional frequency NumPy's TypeError.  Under vmap a negative
    weight of any example raises."""
    bad = A.copy()
    bad[2] = -0.5
    for call in (lambda: s2s.grad(F.cov_data_aweights)(M, bad),
                 lambda: s2s.jvp(F.cov_data_aweights, (M, bad), (M, A)),
                 lambda: s2s.vmap(F.cov_data_aweights)(np.stack([M, M]), np.stack([A, bad]))):
        with pytest.raises(ValueError, match="aweights cannot be negative") as info:
            call()
        assert "np.cov(m, aweights=a)" in "".join(getattr(info.value, "__notes__", []))
    with pytest.raises(ValueError, match="aweights cannot be negative"):
        F.cov_data_aweights(M, bad)  # (NumPy's own)
    with pytest.raises(TypeError, match="fweights must be integer"):
        s2s.grad(F.cov_both_ddof)(M, A, FW + 0.5)
    np.testing.assert_allclose(s2s.grad(F.cov_data_aweights)(M, A),  # (then as before)
                               fd_grad(F.cov_data_aweights, (M, A), 1e-6), 1e-6, 1e-8)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_against_jax(name, dtype) -> None:
    """grad, jvp, vmap of grad and jit of grad (NumPy and JAX backends) at calls 1, 3
    and 10 against JAX's."""
    import jax

    J = getattr(twin(F), name)
    f = getattr(F, name)
    tol = (1e-9, 1e-11) if dtype == np.float64 else (2e-4, 2e-5)
    grads = [s2s.grad(f), s2s.jit(s2s.grad(f), backend="numpy"),
             s2s.jit(s2s.grad(f), backend="jax")]
    for c in (0, 2, 9):
        args = tuple(a.astype(dtype) if a.dtype.kind == "f" else a for a in _call(name, c))
        want = np.asarray(jax.grad(J)(*args))
        for g in grads:
            np.testing.assert_allclose(np.asarray(g(*args)), want, *tol, err_msg=f"call {c}")
        t = np.cos(np.arange(args[0].size)).reshape(args[0].shape).astype(dtype)
        rest = args[1:]
        v, d = s2s.jvp(lambda x: f(x, *rest), (args[0],), (t,))
        jv, jd = jax.jvp(lambda x: J(x, *rest), (args[0],), (t,))
        np.testing.assert_allclose(v, jv, *tol)
        np.testing.assert_allclose(d, jd, *tol)
        batch = np.stack([args[0], args[0] * 0.8 - 0.1])
        in_axes = (0,) + (None,) * len(rest)
        np.testing.assert_allclose(
            s2s.vmap(s2s.grad(f), in_axes=in_axes)(batch, *rest),
            jax.vmap(jax.grad(J), in_axes=in_axes)(batch, *rest), *tol)
