"""dtype14: results in the dtype the user's own function gives.

A value written into a float32 array on the JAX backend (``y = y.at[i].add(v)``,
lowered from ``y[i] += v``) is cast to the array's dtype first, as NumPy's in-place
write casts it: JAX warned (FutureWarning, an error in later JAX) where ``v`` was
float64, under ``s2s.jit(s2s.grad(f), backend="jax")`` of a float32 call whose
function makes float64 arrays (probe 8's negbin_gammaln_nll, pad_modes_stencil)."""

from __future__ import annotations

import warnings

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import newcomer_probe8_fns as F8
import numpy as np
import pytest
from support import HAVE_JAX

import s2s


def test_lowered_write_casts_the_value_to_the_arrays_dtype() -> None:
    """The JAX lowering of ``y[i] += v``, ``y[i:] += v`` fused, ``np.add.at(y, i, v)``
    and ``y[0][1] = v`` casts ``v`` to ``y``'s dtype; a literal stays as written."""
    from s2s.backends.lower import lower_inplace

    text = ("def f(y, v, i):\n    y[i] += v\n    np.add.at(y, i, v)\n"
            "    y[0][1] = v\n    y[i] -= 2\n    return y\n")
    lowered = lower_inplace(text)
    assert lowered.count("y = y.at[i].add(np.astype(v, y.dtype))") == 2
    assert "y = y.at[0].set(y[0].at[1].set(np.astype(v, y.dtype)))" in lowered
    assert "y = y.at[i].subtract(2)" in lowered
    fused = lower_inplace("def f(y, v):\n    y[1:] += v\n    return y\n",
                          fuse_slices=True)
    assert "y = y + np.zeros_like(y).at[1:].set(np.astype(v, y.dtype))" in fused


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("name, x", [
    ("negbin_gammaln_nll", np.array([0.3, -0.2], np.float32)),
    ("pad_modes_stencil", np.array([0.3, -0.7, 0.45, 1.2, -0.1], np.float32)),
])
def test_jit_of_grad_on_jax_in_float32_does_not_warn(name, x) -> None:
    """No FutureWarning from JAX's scatter; the gradient float32 and JAX's on the same
    source (``jax.grad`` of its jax.numpy twin, at calls 1 and 3)."""
    import jax

    twin = H.twin(F8)
    g = s2s.jit(s2s.grad(getattr(F8, name)), backend="jax")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        for scale in (1.0, 0.5):
            got = np.asarray(g(x * np.float32(scale)))
            want = np.asarray(jax.grad(getattr(twin, name))(x * np.float32(scale)))
            assert got.dtype == np.float32
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
