"""dtype14: results in the dtype the user's own function gives.

``math.log(v)`` (any of ``math``'s float functions s2s maps to NumPy's) is emitted as
``python_float(np.log(v))``: math gives a Python float, weak in NumPy's promotion,
where ``np.log`` of a Python float gave a float64 NumPy scalar that made a float32
function's jvp primal and tangent, and value_and_grad's value, float64 (probe 6's
math_on_scalars and activation_from_dict, probe 7's cosine_lr_loop and
math_constants_periodic).  A batched value (vmap) or a JAX value stays an array.

A value written into a float32 array on the JAX backend (``y = y.at[i].add(v)``,
lowered from ``y[i] += v``) is cast to the array's dtype first, as NumPy's in-place
write casts it: JAX warned (FutureWarning, an error in later JAX) where ``v`` was
float64, under ``s2s.jit(s2s.grad(f), backend="jax")`` of a float32 call whose
function makes float64 arrays (probe 8's negbin_gammaln_nll, pad_modes_stencil)."""

from __future__ import annotations

import math
import warnings

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import newcomer_probe6_fns as F6
import newcomer_probe8_fns as F8
import numpy as np
import pytest
from support import HAVE_JAX

import s2s


def scaled_log(s, x):
    """math on a differentiated Python float and on a constant, beside float32 x."""
    return math.log(s) * np.sum(x ** 2) + math.sin(s) ** 2 - math.sqrt(2 * math.pi)


def test_math_on_python_floats_keeps_float32_in_jvp_and_value_and_grad() -> None:
    """float32 as the function run as written gives (and JAX), where float64 was."""
    x = np.array([0.3, -0.7, 0.45, 1.2], np.float32)
    f = F6.math_on_scalars
    assert f(x).dtype == np.float32  # (the oracle: the user's function itself)
    primal, tangent = s2s.jvp(f, (x,), (np.ones_like(x),))
    assert np.asarray(primal).dtype == np.float32
    assert np.asarray(tangent).dtype == np.float32
    value, grad = s2s.value_and_grad(f)(x)
    assert np.asarray(value).dtype == np.float32 and grad.dtype == np.float32
    np.testing.assert_allclose(value, f(x), rtol=1e-6)
    np.testing.assert_allclose(grad, -x / 0.25, rtol=1e-6)  # (d/dx of -x.x/(2 s^2))


@pytest.mark.slow
def test_math_on_a_differentiated_float_and_under_vmap() -> None:
    """math of a differentiated Python float (its derivative, x float32 throughout),
    and under vmap a batch of them: an array, python_float leaves it as it is."""
    x = np.array([0.3, -0.7, 0.45, 1.2], np.float32)
    s = 1.3  # a differentiated Python float: math's derivative, x float32 throughout
    g_s, g_x = s2s.grad(scaled_log, argnums=(0, 1))(s, x)
    assert g_x.dtype == np.float32
    np.testing.assert_allclose(g_s, np.sum(x.astype(float) ** 2) / s
                               + 2 * math.sin(s) * math.cos(s), rtol=1e-6)
    np.testing.assert_allclose(g_x, 2 * math.log(s) * x, rtol=1e-6)
    batch = np.stack([x, 2 * x])  # vmap: a batch of s is an array, not float()
    got = s2s.vmap(scaled_log, in_axes=(0, None))(np.array([1.3, 0.7], np.float32), x)
    want = [scaled_log(v, x) for v in (1.3, 0.7)]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)
    vg = s2s.vmap(s2s.grad(scaled_log, argnums=1), in_axes=(None, 0))(s, batch)
    assert vg.dtype == np.float32
    np.testing.assert_allclose(vg, 2 * math.log(s) * batch, rtol=1e-6)


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


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_math_on_scalars_against_jax_in_float32() -> None:
    """jax.jvp / jax.grad of the jax.numpy twin: same values, same float32 dtypes, and
    jit of grad on the JAX backend too."""
    import jax

    twin = H.twin(F6)
    x = np.array([0.3, -0.7, 0.45, 1.2], np.float32)
    for f, fj in ((F6.math_on_scalars, twin.math_on_scalars),
                  (F6.activation_from_dict, twin.activation_from_dict)):
        p, t = s2s.jvp(f, (x,), (np.ones_like(x),))
        pj, tj = jax.jvp(fj, (x,), (np.ones_like(x),))
        assert (np.asarray(p).dtype, np.asarray(t).dtype) == (pj.dtype, tj.dtype)
        np.testing.assert_allclose([p, t], [pj, tj], rtol=2e-5, atol=2e-6)
        g = s2s.jit(s2s.grad(f), backend="jax")(x)
        assert np.asarray(g).dtype == np.float32
        np.testing.assert_allclose(g, jax.grad(fj)(x), rtol=2e-5, atol=2e-6)
