"""Results of s2s's transforms run on the JAX backend (``api/jit_jax.py``), cast as the
NumPy transform casts them: gradients in their inputs' dtypes and shapes, dicts in
their inputs' key order (``lax.cond`` rebuilds the dicts of what crosses it sorted)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from ..ir.kinds import kind_of
from .transformed import Transformed, _leaves, _rebuild


def _cast_like(g: Any, primal: Any) -> Any:
    g = jnp.asarray(g, dtype=jnp.result_type(primal))
    if g.shape != np.shape(primal):
        g = jnp.broadcast_to(g, np.shape(primal))
    return g


def _in_order_of(tree: Any, like: Any) -> Any:
    """``tree`` with its dicts in the key order of ``like``'s, where their keys are
    the same (a value that crossed JAX's control flow, ``lax.cond``, has its dicts
    rebuilt sorted: its leaves are then zipped with ``like``'s in their order)."""
    if isinstance(tree, dict) and isinstance(like, dict) and tree.keys() == like.keys():
        return {k: _in_order_of(tree[k], like[k]) for k in like}
    if type(tree) in (tuple, list) and type(like) in (tuple, list) and len(tree) == len(like):
        return type(tree)(_in_order_of(t, u) for t, u in zip(tree, like))
    return tree


def _cast_tree(grads: Any, primal: Any) -> Any:
    grads = _in_order_of(grads, primal)
    leaves = [_cast_like(g, p) for g, p in zip(_leaves(grads), _leaves(primal))]
    return _rebuild(kind_of(primal), leaves)


def _postprocess(t: Transformed, result: Any, args: tuple, argnums: tuple[int, ...]) -> Any:
    """``Transformed._postprocess`` on JAX values: gradients in their inputs' dtypes
    and shapes."""
    def fix(grads: Any) -> Any:
        if t.tuple_out:
            return tuple(_cast_tree(g, args[i]) for g, i in zip(grads, argnums))
        return _cast_tree(grads, args[argnums[0]])

    if t.mode == "grad":
        if t.has_aux:
            grads, aux = result
            return fix(grads), aux
        return fix(result)
    value, grads = result
    return value, fix(grads)
