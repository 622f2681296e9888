"""The wide benchmark's workloads (tools/bench_wide_workloads.py, the formulations the
optimizer was not tuned for) through s2s against JAX on the same source: each
gradient, the per-example gradients (vmap) and the Hessian-vector product (jvp of
grad), at calls 1-3 (the third runs the code specialized to the signature), in
float64 and float32, values and dtypes; the caller writing into a result changes
nothing later.  The specializer's rules that the slow cells brought (docs/performance.md,
"The cells above 1.5x") apply to exactly these programs."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent / "tools"))
import bench_wide_workloads as W  # noqa: E402

JW = W.twin(jnp)
GRADS = ["xent_onehot", "xent_int", "smoothed", "attention", "attention_masked",
         "layer_norm", "mixture", "gp_nll", "mlp_dict", "lstm"]


def _cast(a, dtype):
    if isinstance(a, dict):
        return {k: _cast(v, dtype) for k, v in a.items()}
    if isinstance(a, (np.ndarray, np.floating)) and np.result_type(a).kind == "f":
        return np.asarray(a, dtype)[()] if np.ndim(a) == 0 else a.astype(dtype)
    return a


def _leaves(tree):
    return [tree[k] for k in sorted(tree)] if isinstance(tree, dict) else [tree]


def _close(got, want, dtype) -> None:
    tol = 2e-4 if dtype == np.float32 else 1e-10
    for a, b in zip(_leaves(got), _leaves(want), strict=True):
        assert np.asarray(a).dtype == dtype
        np.testing.assert_allclose(a, np.asarray(b), rtol=tol, atol=tol)


def _calls(fn, args, want, dtype) -> None:
    for _ in range(3):
        got = fn(*args)
        _close(got, want, dtype)
        for leaf in _leaves(got):
            leaf[...] = 99.0  # the caller writes into a result: later ones are unaffected


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", GRADS)
def test_each_gradient_is_jaxs_at_every_call(name, dtype) -> None:
    args = tuple(_cast(a, dtype) for a in W.make_args(name))
    want = jax.grad(JW[name])(*args)
    g = s2s.grad(getattr(W, name))
    _calls(g, args, want, dtype)
    assert g.specialized_source is not None


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)])
def test_per_example_gradients_and_the_hvp_are_jaxs(dtype) -> None:
    args = tuple(_cast(a, dtype) for a in W.make_args("logistic"))
    want = jax.vmap(jax.grad(JW["logistic"]), in_axes=(None, 0, 0))(*args)
    _calls(s2s.vmap(s2s.grad(W.logistic), in_axes=(None, 0, 0)), args, want, dtype)
    x, v = (_cast(a, dtype) for a in W.make_args("tanh_sq"))
    want = jax.jvp(jax.grad(JW["tanh_sq"]), (x,), (v,))[1]
    inner = s2s.grad(W.tanh_sq)
    _calls(lambda x, v: s2s.jvp(inner, (x,), (v,))[1], (x, v), want, dtype)
