"""The emitted function a transform runs for a given call, without running it.

``s2s.grad(f)(x)`` checks its arguments (with JAX's errors), generates (or finds) the
emitted code for the call's structure, runs it and casts the result.  A backend
wants the first two steps alone: :func:`emitted_for` asks the transform's ``plan``
(the same checks, the same pipeline) for ``(text, fn)`` before anything runs.  Under ``jax.jit`` the arguments are tracers: :func:`shadow` stands NumPy
arrays of the same shapes and dtypes in for them (generation reads only structure,
and the checks only dtypes).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import tree_util
from .transformed import Transformed


def emitted_for(t: Transformed, args: tuple, kwargs: dict) -> tuple[str, Callable]:
    """``(text, fn)``: the emitted module and function ``t(*args, **kwargs)`` runs,
    from the transform's own ``plan`` (its argument checks, then the pipeline)."""
    return t.plan(args, kwargs)


def is_array_leaf(x: Any) -> bool:
    """An array-like leaf that is not a plain Python value (a NumPy or JAX array)."""
    return hasattr(x, "shape") and hasattr(x, "dtype")


def shadow(tree: Any) -> Any:
    """``tree`` with each array leaf (tracers included) replaced by NumPy zeros of its
    shape and dtype; Python values (static arguments) are kept."""
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return tuple(shadow(v) for v in tree)
    if isinstance(tree, list):
        return [shadow(v) for v in tree]
    if isinstance(tree, dict):
        items = {k: shadow(v) for k, v in tree.items()}
        if type(tree) is dict or not hasattr(tree, "of_class"):
            return items
        made = type(tree)(items)  # (a NamedTuple's fields read by position too, `p[1]`;
        made.of_class = tree.of_class  # a differentiated object's meta fields kept)
        made.__s2s_meta__ = tree.__s2s_meta__
        return made
    if _node(tree):  # a NamedTuple, a registered class: its leaves
        return tree_util.tree_map(shadow, tree)
    if is_array_leaf(tree) and not isinstance(tree, np.ndarray):
        return np.zeros(np.shape(tree), np.dtype(tree.dtype))
    return tree


def shape_key(tree: Any, dynamic: bool = True) -> Any:
    """Structure and shapes (what emitted code is specialised on), hashable.

    A ``dynamic`` argument's Python scalars count as arrays of shape ``()`` (JAX
    traces them so); a static argument counts by value.
    """
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return ("t",) + tuple(shape_key(v, dynamic) for v in tree)
    if isinstance(tree, list):
        return ("l",) + tuple(shape_key(v, dynamic) for v in tree)
    if isinstance(tree, dict):
        # in the caller's key order: s2s.jit hands the traced function its dicts so
        # (backends/jax_order.py), and code walking a dict is generated for that order
        return ("d",) + tuple((k, shape_key(v, dynamic)) for k, v in tree.items())
    if _node(tree):
        leaves, treedef = tree_util.tree_flatten(tree)
        return ("n", treedef) + tuple(shape_key(v, dynamic) for v in leaves)
    if is_array_leaf(tree):
        return ("a", tuple(np.shape(tree)))
    if dynamic and isinstance(tree, (bool, int, float, complex)):
        return ("a", ())
    return ("v", tree)


def _node(tree: Any) -> bool:
    """A NamedTuple or an object of a registered pytree class (whose leaves a trace
    makes tracers, inside the object)."""
    return isinstance(tree, tuple) and hasattr(tree, "_fields") or type(
        tree) in tree_util.NODES
