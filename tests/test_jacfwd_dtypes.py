"""jacfwd's result has its output's dtype, as JAX's (its tangent is the output's).

A rule's weights built from Python numbers are float64 arrays in NumPy (`np.where(m,
0.5, 1.0)` in clip's JVP, `norm_grad`'s), so a float32 tangent times them promoted to
float64: `jacfwd` of `np.clip(x, -w, w) ** 2` or `np.linalg.norm(x, ord=1)` at a
float32 `x` returned float64 where JAX returns float32 (the plain `jvp` cast its
tangent already).  For float32 inputs the vmapped JVP now returns its output too and
each tangent is cast to its output leaf's dtype where that is narrower; an output that
is float64 (a float64 module array in the product) keeps float64, as JAX's does with
x64 on.  Oracle: JAX on the same source, values and dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from support import HAVE_JAX

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

C64 = np.array([1.0, -2.0, 0.5, 3.0])
W = np.array([0.5, 0.5, 0.2, 1.0], np.float32)


def clip_sq(x):
    return np.clip(x, -W, W) ** 2 + 0.1 * W * x


def norm_one(x):
    return np.linalg.norm(x, ord=1)


def times_c64(x):
    return x * C64


def two_outputs(x):
    return {"c": np.clip(x, -0.5, 0.5), "n": np.linalg.norm(x, ord=3)}


def with_aux(x):
    return np.clip(x, -0.5, 0.5), {"total": np.sum(x)}


def _jax(fn):
    import jax.numpy as jnp

    c64 = jnp.asarray(C64)
    w = jnp.asarray(W)
    return {
        "clip_sq": lambda x: jnp.clip(x, -w, w) ** 2 + 0.1 * w * x,
        "norm_one": lambda x: jnp.linalg.norm(x, ord=1),
        "times_c64": lambda x: x * c64,
        "two_outputs": lambda x: {"c": jnp.clip(x, -0.5, 0.5),
                                  "n": jnp.linalg.norm(x, ord=3)},
    }[fn.__name__]


@pytest.mark.parametrize("fn", [clip_sq, norm_one, times_c64, two_outputs],
                         ids=lambda f: f.__name__)
def test_dtypes_and_values_against_jax(fn) -> None:
    import jax

    jf = s2s.jacfwd(fn)
    for call in range(1, 4):  # (the 1st and 3rd calls, values changing)
        x = (np.array([0.3, -0.9, 0.45, 1.2]) * (1 + 0.4 * call)).astype(np.float32)
        got = jf(x)
        want = jax.jacfwd(_jax(fn))(x)
        got_leaves, want_leaves = jax.tree_util.tree_leaves(got), \
            jax.tree_util.tree_leaves(want)
        assert [g.dtype for g in got_leaves] == [w.dtype for w in want_leaves]
        for g, w in zip(got_leaves, want_leaves):
            np.testing.assert_allclose(g, np.asarray(w), rtol=2e-6, atol=1e-6)
        got_leaves[0][...] = np.nan  # (the caller's write: the next call unchanged)


def test_has_aux_and_float64_unchanged() -> None:
    x = np.array([0.3, -0.9, 0.45, 1.2], np.float32)
    jac, aux = s2s.jacfwd(with_aux, has_aux=True)(x)
    assert jac.dtype == np.float32
    np.testing.assert_array_equal(jac, np.diag((np.abs(x) < 0.5).astype(np.float32)))
    assert float(aux["total"]) == pytest.approx(float(np.sum(x)))
    assert s2s.jacfwd(clip_sq)(x.astype(np.float64)).dtype == np.float64
