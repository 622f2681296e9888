"""A dict's key order through ``s2s.jit(..., backend="jax")``.

``jax.jit`` flattens a dict with its keys sorted and rebuilds it sorted, in the
traced function and in the results: a function that walks a dict argument
(``for k, v in p.items()``, ``list(p.values())``, ``tuple(p)``) would run on JAX in
sorted key order, on NumPy and in Python in the caller's.  So the JAX backend hands
``jax.jit`` each dict as a :class:`Keyed`, a pytree node whose static part is its
key tuple in the caller's order (two orders are two signatures, each traced for its
own), and the traced function gets a plain dict rebuilt in that order
(:func:`plain`); the dicts the function returns travel out the same way.

:func:`keyed` and :func:`plain` run outside the trace only on calls whose arguments
are not all arrays and numbers (``Jitted``'s guard, ``api/jit.py``) and on results
once a trace of the jit has returned a dict; inside it, around ``lax.map`` of the
Jacobians (``api/jit_jax.py``), which would rebuild the rows' dicts sorted too.
(The node rebuilds a ``Keyed``, never the dict itself: JAX's fast path flattens the
results it rebuilds again, and a dict would flatten sorted.)
"""

from __future__ import annotations

import operator
from typing import Any

import jax
import numpy as np

__all__ = ["Keyed", "keyed", "plain", "holds",
           "keyed_args", "plain_args", "LEAF_TYPES"]


class Keyed(tuple):
    """A dict as it crosses ``jax.jit``: the pair ``(keys, values)``, its keys in the
    caller's order.

    A tuple, so that a call builds one without a Python frame (``_new(Keyed, (keys,
    values))``: JAX flattens it with ``operator.itemgetter``, C code too); JAX's
    rebuilding of one (:func:`_rebuilt`, the results of a call) is the one frame a
    call of dicts runs besides the argument check."""

    __slots__ = ()
    keys = property(operator.itemgetter(0))
    values = property(operator.itemgetter(1))

    def __new__(cls, keys: tuple, values: tuple) -> "Keyed":
        return _new(cls, (keys, values))

    def __repr__(self) -> str:
        return f"Keyed({dict(zip(self[0], self[1]))!r})"


_new = tuple.__new__


def _rebuilt(keys: tuple, values: Any) -> Keyed:
    return _new(Keyed, (keys, tuple(values)))


jax.tree_util.register_pytree_node(Keyed, operator.itemgetter(1, 0), _rebuilt)

# Arguments of these types hold no dict: a call of only these goes straight to JAX
LEAF_TYPES = frozenset({
    np.ndarray, type(jax.numpy.zeros(())), float, int, bool, complex, str, type(None),
    np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
    np.uint64, np.uint32, np.uint16, np.uint8, np.bool_, np.complex128, np.complex64,
})


def _is_dict(x: Any) -> bool:
    return type(x) is dict


def _is_keyed(x: Any) -> bool:
    return type(x) is Keyed


def keyed(tree: Any) -> Any:
    """``tree`` with every plain dict in it (nested in tuples, lists, named tuples,
    registered nodes or other dicts) a :class:`Keyed` in its own key order."""
    t = type(tree)
    if t is dict:
        values = tree.values()
        if not LEAF_TYPES.issuperset(map(type, values)):  # (a nested dict, a list)
            values = [v if type(v) in LEAF_TYPES else keyed(v) for v in values]
        return _new(Keyed, (tuple(tree), tuple(values)))
    if t is tuple or t is list:
        return t([v if type(v) in LEAF_TYPES else keyed(v) for v in tree])
    if t in LEAF_TYPES:
        return tree
    return jax.tree_util.tree_map(
        lambda x: keyed(x) if type(x) is dict else x, tree, is_leaf=_is_dict)


def plain(tree: Any) -> Any:
    """``tree`` with every :class:`Keyed` in it the plain dict it stands for, its
    keys in their order."""
    t = type(tree)
    if t is Keyed:
        keys, values = tree
        if not LEAF_TYPES.issuperset(map(type, values)):
            values = [v if type(v) in LEAF_TYPES else plain(v) for v in values]
        return dict(zip(keys, values))
    if t is tuple or t is list:
        return t([v if type(v) in LEAF_TYPES else plain(v) for v in tree])
    if t in LEAF_TYPES:
        return tree
    return jax.tree_util.tree_map(
        lambda x: plain(x) if type(x) is Keyed else x, tree, is_leaf=_is_keyed)


def holds(tree: Any, kind: type) -> bool:
    """Whether an object of type ``kind`` is in ``tree`` (``kind`` itself a node)."""
    if type(tree) is kind:
        return True
    if type(tree) in LEAF_TYPES:
        return False
    return any(type(x) is kind for x in jax.tree_util.tree_leaves(
        tree, is_leaf=lambda x: type(x) is kind))


def _dynamic(convert: Any, args: tuple, kwargs: dict, static_nums: tuple,
             static_names: tuple) -> tuple[tuple, dict]:
    """``convert`` of each argument but the static ones (``jax.jit``'s numbering)."""
    if static_nums and args:
        n = len(args)
        static = {i % n if i < 0 else i for i in static_nums}
        args = tuple(a if i in static else convert(a) for i, a in enumerate(args))
    else:
        args = tuple(map(convert, args))
    if kwargs:
        kwargs = {k: v if k in static_names else convert(v) for k, v in kwargs.items()}
    return args, kwargs


def keyed_args(args: tuple, kwargs: dict, static_nums: tuple = (),
               static_names: tuple = ()) -> tuple[tuple, dict]:
    """The dynamic arguments of a call with their dicts as :class:`Keyed` nodes."""
    return _dynamic(keyed, args, kwargs, static_nums, static_names)


def plain_args(args: tuple, kwargs: dict, static_nums: tuple = (),
               static_names: tuple = ()) -> tuple[tuple, dict]:
    """The traced function's arguments with their :class:`Keyed` nodes plain dicts."""
    return _dynamic(plain, args, kwargs, static_nums, static_names)
