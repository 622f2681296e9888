"""Jacobians as input to another transform, with containers in and out.

A Jacobian object gives its code as a function of the same arguments (a loop over a
basis per leaf calling the emitted JVP or VJP), so ``vjp``, ``jvp`` and ``vmap`` of
``jacfwd``/``jacrev`` read it like any code.  These check dict, tuple and list
arguments and outputs against JAX's same composition, in float64, and pin the shape
of the emitted code for one case.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s.ir.kinds import kind_of
from support import compiled

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
tree_leaves = jax.tree_util.tree_leaves
tree_map = jax.tree_util.tree_map


def layer(params, x):
    h = np.tanh(x @ params["w"] + params["b"])
    return {"h": h, "s": np.sum(h**2)}


def layer_jax(params, x):
    h = jnp.tanh(x @ params["w"] + params["b"])
    return {"h": h, "s": jnp.sum(h**2)}


def pair(a, bs):
    return (a * bs[0], np.sin(a) + bs[1][0])


def pair_jax(a, bs):
    return (a * bs[0], jnp.sin(a) + bs[1][0])


def scalar_of_tuple(t):
    first, second = t
    return np.sum(first * second) + np.max(first)


def scalar_of_tuple_jax(t):
    first, second = t
    return jnp.sum(first * second) + jnp.max(first)


R = np.random.default_rng(5)
CASES = {
    "dict in, dict out": (layer, layer_jax, 0,
                          ({"w": R.normal(size=(3, 2)), "b": R.normal(size=2)},
                           R.normal(size=(4, 3)))),
    "array and list in, tuple out": (pair, pair_jax, (0, 1),
                                     (R.normal(size=3), [R.normal(size=3),
                                                         R.normal(size=2)])),
    "tuple in, scalar out": (scalar_of_tuple, scalar_of_tuple_jax, 0,
                             ((R.normal(size=3), R.normal(size=3)),)),
}


def close(got, expected) -> None:
    got, expected = tree_leaves(got), tree_leaves(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-9, atol=1e-12)


def _params() -> list:
    """The dict case under jacfwd and the list case under jacrev by default; the others
    with ``-m slow``."""
    return [pytest.param(case, mode, marks=[] if (case, mode) in (
        ("dict in, dict out", "jacfwd"), ("array and list in, tuple out", "jacrev"))
        else [pytest.mark.slow])
        for case in CASES for mode in ("jacfwd", "jacrev")]


@pytest.mark.parametrize("case, mode", _params())
def test_jacobian_of_containers_transformed_again(case: str, mode: str) -> None:
    fn, fn_jax, argnums, args = CASES[case]
    jac = getattr(s2s, mode)(fn, argnums=argnums)
    jac_jax = getattr(jax, mode)(fn_jax, argnums=argnums)
    r = np.random.default_rng(1)
    tangents = tree_map(lambda a: r.normal(size=np.shape(a)), args)
    close(s2s.jvp(jac, args, tangents),
          compiled(lambda a, t: jax.jvp(jac_jax, a, t))(args, tangents))
    out, pullback = s2s.vjp(jac, *args)
    jout, jpullback = jax.vjp(jac_jax, *args)
    cotangent = tree_map(lambda a: r.normal(size=np.shape(a)), jout)
    close((out, pullback(cotangent)), (jout, jpullback(cotangent)))
    batch = tree_map(lambda a: np.stack([a, a * 1.1 + 0.01]), args[0])
    axes = (0,) + (None,) * (len(args) - 1)
    close(s2s.vmap(jac, in_axes=axes)(batch, *args[1:]),
          compiled(jax.vmap(jac_jax, in_axes=axes))(batch, *args[1:]))


def test_emitted_jacobian_of_a_dict_function_reads_leaf_by_leaf() -> None:
    fn, _, _, args = CASES["dict in, dict out"]
    kinds = tuple(kind_of(a) for a in args)
    text, _ = s2s.jacrev(fn)._generate_for(kinds, kinds)
    # one backward loop per output leaf; the cotangent a literal of the output's dict
    assert 'row = layer_vjp(params, x, {"h": basis_h[k], "s": np.zeros_like(out["s"])})' \
        in text
    assert 'rows_h_w[k] = row["w"]' in text
    assert text.rstrip().endswith("}")  # the result: a dict of dicts, as JAX nests it
    compile(text, "<jacobian>", "exec")
