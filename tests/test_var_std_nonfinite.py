"""``np.var``/``np.std`` derivatives where the reduced values hold an inf or a NaN
are JAX's: NaN over the whole slice (JAX's derivative centres the cotangent again,
``c - mean(c)``, a term that is 0 for finite values and NaN here); s2s gave ``-inf``
and ``inf`` beside one NaN (``var([1, inf, 2])'`` was ``[-inf, nan, -inf]``).  The
slices without one keep their finite derivative.  Against JAX on the same source
(tests/var_std_fns.py), float64 and float32, with the inf moving between calls."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import var_std_fns as F
from support import assert_close_to, jax_twin

import s2s

jax = pytest.importorskip("jax")
J = jax_twin(F)

BAD = [np.inf, -np.inf, np.nan]


def _x(k, dtype):
    """Call ``k``'s input (3, 4): an inf, -inf or NaN at a place that moves, one row
    without any, and at some calls none at all."""
    x = np.random.default_rng(k).normal(size=(3, 4))
    if k % 4 != 3:
        x[k % 3, (k + 1) % 4] = BAD[k % 3]
        if k % 2:
            x[(k + 1) % 3, k % 4] = np.inf  # (two rows, the same sign twice)
    return x.astype(dtype)


TRANSFORMS = {
    "grad": (s2s.grad, jax.grad),
    "jvp": (lambda f: lambda x: s2s.jvp(f, (x,), (np.cos(x).astype(x.dtype),)),
            lambda f: lambda x: jax.jvp(f, (x,), (np.cos(x).astype(x.dtype),))),
    "vmap_grad": (lambda f: lambda x: s2s.vmap(s2s.grad(f))(np.stack([x, x[::-1]])),
                  lambda f: lambda x: jax.vmap(jax.grad(f))(np.stack([x, x[::-1]]))),
    "jit_grad": (lambda f: s2s.jit(s2s.grad(f), backend="numpy"), jax.grad),
}
NAMES = ["var_all", "std_all", "var_rows", "std_rows_ddof", "var_cols_keepdims",
         "std_method"]


@pytest.mark.slow  # (the default tier: the case by hand below)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("tname", list(TRANSFORMS))
@pytest.mark.parametrize("fname", NAMES)
def test_var_and_std_derivatives_with_infinities_are_jaxs(fname, tname, dtype) -> None:
    ours, theirs = TRANSFORMS[tname]
    t, jt = ours(getattr(F, fname)), theirs(getattr(J, fname))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (inf - inf: NumPy's warning)
        for k in range(10):
            x = _x(k, dtype)
            got = t(x)
            if k in (0, 1, 2, 3, 9):
                assert_close_to(got, jt(x), dtype, dtype_of="expected-arrays",
                                scale_atol=True)


def test_var_of_an_inf_is_nan_everywhere_by_hand() -> None:
    """No oracle needed: the slice with the inf is all NaN, the other finite."""
    x = np.array([[1.0, np.inf, 2.0], [1.0, 2.0, 4.0]])
    with np.errstate(invalid="ignore"):
        g = s2s.grad(F.var_all)(x[:1])
        rows = s2s.grad(F.std_rows_ddof)(np.vstack([x, x[1:]]))
    assert np.isnan(g).all()
    assert np.isnan(rows[0]).all() and np.isfinite(rows[1:]).all()
