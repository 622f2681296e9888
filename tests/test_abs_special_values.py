"""The derivative of ``np.abs`` at +-inf is JAX's +-1.  The rule is conj(x) / |x|
(right for complex x to every order), which at |x| = inf is inf / inf: s2s gave NaN
where JAX gives a number (an L1 penalty's gradient ``[nan, nan, 1]`` at
``[inf, -inf, 0]``, JAX's ``[1, -1, 1]``; ``max(abs(x))`` at a tie of inf and -inf
``[nan, 0, nan, 0]``, JAX's ``[0.5, 0, -0.5, 0]``).  Against JAX on the same source
(tests/abs_special_fns.py), float64 and float32, the infinities moving between
calls, under grad, jvp, vmap of grad, hessian and s2s.jit on both backends.

At a real NaN the derivative is JAX's -1 (its rule is ``select(x >= 0, g, -g)``): it
was NaN, so ``np.nansum(np.abs(p - t))`` with a NaN in ``t``, whose cotangent there
is 0, had a NaN gradient where JAX's is 0 (found by newcomer probe 6)."""

from __future__ import annotations

import warnings

import abs_special_fns as F
import numpy as np
import pytest
from support import assert_close_to, jax_twin

import s2s

jax = pytest.importorskip("jax")
J = jax_twin(F)


def _x(k, dtype):
    """Call ``k``'s input: an inf and a -inf at places that move, a 0, a -0.0, and
    finite values on both sides of 1 (huber_like's kink)."""
    x = np.random.default_rng(k).normal(size=6) * 2
    x[k % 6], x[(k + 3) % 6] = np.inf, -np.inf
    x[(k + 1) % 6], x[(k + 2) % 6] = 0.0, -0.0
    return x.astype(dtype)


def _v(x):
    return np.cos(np.arange(x.size)).astype(x.dtype)


TRANSFORMS = {
    "grad": (s2s.grad, jax.grad),
    "jvp": (lambda f: lambda x: s2s.jvp(f, (x,), (_v(x),)),
            lambda f: lambda x: jax.jvp(f, (x,), (_v(x),))),
    "vmap_grad": (lambda f: lambda x: s2s.vmap(s2s.grad(f))(np.stack([x, x[::-1]])),
                  lambda f: lambda x: jax.vmap(jax.grad(f))(np.stack([x, x[::-1]]))),
    "hessian": (s2s.hessian, jax.hessian),
    "jit_numpy": (lambda f: s2s.jit(s2s.grad(f), backend="numpy"), jax.grad),
    "jit_jax": (lambda f: s2s.jit(s2s.grad(f), backend="jax"), jax.grad),
}
NAMES = ["l1", "max_abs", "signed_sqrt", "huber_like", "abs_builtin"]


def _check(fname, tname, dtype, calls=range(10)):
    ours, theirs = TRANSFORMS[tname]
    t, jt = ours(getattr(F, fname)), theirs(getattr(J, fname))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (inf / inf where not taken)
        for k in calls:
            x = _x(k, dtype)
            got = t(x)
            if k in (0, 2, 9):
                assert_close_to(got, jt(x), dtype)


@pytest.mark.slow  # (the default tier: the cases below)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("tname", list(TRANSFORMS))
@pytest.mark.parametrize("fname", NAMES)
def test_abs_derivatives_at_infinities_are_jaxs(fname, tname, dtype) -> None:
    _check(fname, tname, dtype)


def test_l1_and_max_abs_at_infinities() -> None:
    _check("l1", "grad", np.float64, calls=range(3))
    _check("max_abs", "grad", np.float32, calls=(0, 1, 2))


def test_the_reported_values() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = s2s.grad(F.l1)(np.array([np.inf, -np.inf, 0.0]))
        ties = s2s.grad(F.max_abs)(np.array([np.inf, 1.0, -np.inf, 0.5]))
    np.testing.assert_array_equal(got, [1.0, -1.0, 1.0])  # (JAX's, written out)
    np.testing.assert_array_equal(ties, [0.5, 0.0, -0.5, 0.0])


def test_a_nan_has_jaxs_derivative() -> None:
    import jax.numpy as jnp

    x = np.array([np.nan, 2.0, -2.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = s2s.grad(F.l1)(x)
        p, t = np.array([0.3, -0.7, 0.2]), np.array([0.1, np.nan, 0.5])
        masked = s2s.grad(F.nansum_l1)(p, t)
    np.testing.assert_array_equal(got, jax.grad(lambda v: jnp.sum(jnp.abs(v)))(x))
    want = jax.grad(lambda p, q: jnp.nansum(jnp.abs(p - q)))(p, t)
    np.testing.assert_array_equal(masked, want)
    assert masked[1] == 0.0
