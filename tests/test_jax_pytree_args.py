"""``s2s.jit(s2s.grad(f), backend="jax")`` of a function taking a NamedTuple (or a
registered class's object) of parameters: its plain form runs, the gradient comes back
in the argument's type, as on the NumPy backend.  Before, the trace handed the
transform the NamedTuple of tracers, which it read as one leaf ("not a valid JAX
type").  Oracle: ``jax.jit(jax.grad(f))`` on the same source (JAX reads NamedTuples as
pytrees), float64 and float32, calls 1, 3 and 10 with new values."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray


def loss(p, x):
    return np.sum(np.tanh(x @ p.w + p.b) ** 2)


def loss_jax(p, x):
    import jax.numpy as jnp

    return jnp.sum(jnp.tanh(x @ p.w + p.b) ** 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode", ["grad", "value_and_grad"])
def test_a_namedtuple_of_parameters_on_the_jax_backend(dtype, mode) -> None:
    ours = s2s.jit(getattr(s2s, mode)(loss), backend="jax")
    theirs = jax.jit(getattr(jax, mode)(loss_jax))
    r = np.random.default_rng(0)
    x = r.normal(size=(4, 3)).astype(dtype)
    tol = dict(rtol=1e-10) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-6)
    for call in (1, 3, 10):
        p = Params(r.normal(size=(3, 2)).astype(dtype), r.normal(size=2).astype(dtype) * call)
        got, want = ours(p, x), theirs(p, x)
        g, w = (got[1], want[1]) if mode == "value_and_grad" else (got, want)
        assert type(g) is Params
        for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert np.asarray(a).dtype == np.asarray(b).dtype
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), **tol)
        np.testing.assert_allclose(np.asarray(g.w), np.asarray(s2s.grad(loss)(p, x).w), **tol)
