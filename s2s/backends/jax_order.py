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
from typing import Any, Callable

import jax
import numpy as np

__all__ = ["Keyed", "Static", "keyed", "nested_str", "VALUE_LEAVES", "keyed_results", "unordered_dict", "plain", "holds", "in_order",
           "Unkeyed", "unkeyed_dict", "keyed_args", "plain_args", "LEAF_TYPES"]


class Keyed(tuple):
    """A dict as it crosses ``jax.jit``: the pair of its keys (the caller's order) and
    its values.  A tuple, so that making one, and JAX's flattening of it
    (``operator.itemgetter``), run no Python frame."""

    __slots__ = ()
    keys = property(operator.itemgetter(0))
    values = property(operator.itemgetter(1))

    def __repr__(self) -> str:
        return f"Keyed({dict(zip(*self))!r})"


def _rebuilt(keys: tuple, values: Any) -> Keyed:
    return Keyed((keys, tuple(values)))


jax.tree_util.register_pytree_node(Keyed, operator.itemgetter(1, 0), _rebuilt)

class Static(tuple):
    """A string inside an argument's dict, tuple or list as it crosses ``jax.jit``:
    a pytree node with no children whose static part is the string, so that it is
    part of the signature (another string traces again, as a static argument) and
    never a traced leaf (``jax.jit`` refuses a string leaf).  The traced function
    gets the string itself (:func:`plain`).  A string argument itself stays JAX's to
    refuse, unless marked static, as ``jax.jit`` has it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Static({self[0]!r})"


jax.tree_util.register_pytree_node(Static, lambda s: ((), s[0]),
                                   lambda aux, _: Static((aux,)))

# Arguments of these types hold no dict: a call of only these goes straight to JAX
LEAF_TYPES = frozenset({
    np.ndarray, type(jax.numpy.zeros(())), float, int, bool, complex, str, type(None),
    np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
    np.uint64, np.uint32, np.uint16, np.uint8, np.bool_, np.complex128, np.complex64,
})
_all_leaves = LEAF_TYPES.issuperset
# Values inside a dict, tuple or list that JAX traces as they are (a string: Static)
VALUE_LEAVES = LEAF_TYPES - {str}


def nested_str(tree: Any) -> bool:
    """Whether a string is inside ``tree`` (a dict's, tuple's or list's value)."""
    t = type(tree)
    if t is dict:
        tree = list(tree.values())
    elif t is not tuple and t is not list:
        return t not in LEAF_TYPES and any(  # (an object JAX holds as a leaf: itself)
            type(x) is str or x is not tree and nested_str(x) for x in (
                jax.tree_util.tree_leaves(tree, is_leaf=lambda v: type(v) in (dict, str))))
    return any(type(v) is str or type(v) not in VALUE_LEAVES and nested_str(v)
               for v in tree)


def _is_dict(x: Any) -> bool:
    return type(x) is dict


def _is_keyed(x: Any) -> bool:
    return type(x) is Keyed


def keyed(tree: Any) -> Any:
    """``tree`` with every plain dict in it (nested in tuples, lists, named tuples,
    registered nodes or other dicts) a :class:`Keyed` in its own key order."""
    return _dicts_as(tree, _as_keyed)


def _in_sorted_order(d: dict) -> bool:
    """Whether ``jax.jit`` rebuilds ``d`` in its own order (its keys sorted already)."""
    try:
        return list(d) == sorted(d)
    except TypeError:  # (keys Python cannot order)
        return False


def keyed_results(tree: Any) -> Any:
    """:func:`keyed` for a traced function's results: a dict whose keys are sorted
    already stays a dict (``jax.jit`` rebuilds it in that order, from C, with no
    :class:`Keyed` to make plain again after each call); the others become
    :class:`Keyed`.  The order is the trace's, so it is the same at every call."""
    return _dicts_as(tree, _keyed_unless_sorted, False)


def _as_keyed(d: dict, values: tuple) -> Keyed:
    return Keyed((tuple(d), values))


def _keyed_unless_sorted(d: dict, values: tuple) -> Any:
    return dict(zip(d, values)) if _in_sorted_order(d) else Keyed((tuple(d), values))


def _dicts_as(tree: Any, node: Callable[[dict, tuple], Any], static: bool = True) -> Any:
    """``tree`` with each dict in it ``node(d, values)``, its values converted first;
    a string inside it a :class:`Static` (``static``: an argument's; a result's stays a
    string, which ``jax.jit`` refuses, as it refuses it from a function it traces)."""
    t = type(tree)
    if t is dict:
        values = tuple(tree.values())
        if not _all_values(map(type, values)):
            values = tuple([v if type(v) in VALUE_LEAVES else _inner(v, node, static)
                            for v in values])
        return node(tree, values)
    if t is tuple or t is list:
        return t([v if type(v) in VALUE_LEAVES else _inner(v, node, static) for v in tree])
    if t in LEAF_TYPES:
        return tree
    return jax.tree_util.tree_map(
        lambda x: _inner(x, node, static) if type(x) in (dict, str) else x, tree,
        is_leaf=_is_dict)


_all_values = VALUE_LEAVES.issuperset


def _inner(value: Any, node: Callable[[dict, tuple], Any], static: bool) -> Any:
    if type(value) is str:
        return Static((value,)) if static else value
    return _dicts_as(value, node, static)


def unordered_dict(tree: Any) -> bool:
    """Whether a dict ``jax.jit`` would rebuild in another order is in ``tree``."""
    if type(tree) in LEAF_TYPES:
        return False
    return any(type(x) is dict and (not _in_sorted_order(x) or unordered_dict(list(x.values())))
               for x in jax.tree_util.tree_leaves(tree, is_leaf=_is_dict))


def plain(tree: Any) -> Any:
    """``tree`` with every :class:`Keyed` in it the plain dict it stands for, its
    keys in their order."""
    t = type(tree)
    if t is Static:
        return tree[0]
    if t is Keyed:
        keys, values = tree
        if _all_leaves(map(type, values)):
            return dict(zip(keys, values))
        return dict(zip(keys, [v if type(v) in LEAF_TYPES else plain(v) for v in values]))
    if t is tuple or t is list:
        return t([v if type(v) in LEAF_TYPES else plain(v) for v in tree])
    if t in LEAF_TYPES:
        return tree
    return jax.tree_util.tree_map(
        lambda x: plain(x) if type(x) in (Keyed, Static) else x, tree,
        is_leaf=_is_keyed_or_static)


def _is_keyed_or_static(x: Any) -> bool:
    return type(x) is Keyed or type(x) is Static


def in_order(fn: Callable, skip: int = 0) -> Callable:
    """``fn`` (a lowered branch or loop body, ``backends/jax_control.py``) as
    ``jax.lax`` calls it: its operands after the first ``skip`` (an iteration's index)
    come as :class:`Keyed` nodes, which it reads as plain dicts, and the dicts it
    returns go back as :class:`Keyed`, so that a dict an ``if`` or a loop binds keeps
    its key order through ``lax.cond``, ``fori_loop``, ``scan`` and ``while_loop``
    (which rebuild a plain dict sorted)."""
    def run(*args: Any) -> Any:
        return keyed(fn(*args[:skip], *plain(args[skip:])))

    run.__name__ = getattr(fn, "__name__", "branch")
    return run


def holds(tree: Any, kind: type) -> bool:
    """Whether an object of type ``kind`` is in ``tree`` (``kind`` itself a node)."""
    if type(tree) is kind:
        return True
    if type(tree) in LEAF_TYPES:
        return False
    return any(type(x) is kind for x in jax.tree_util.tree_leaves(
        tree, is_leaf=lambda x: type(x) is kind))


class Unkeyed(Exception):
    """Raised in a trace of ``Jitted``'s bare path (arguments handed to ``jax.jit`` as
    the caller gave them): a plain dict among its dynamic arguments (``jax.jit`` has
    rebuilt it sorted) or its results (``jax.jit`` would return it sorted).  The call
    is made again on the keyed path, which from then on takes every call."""


def unkeyed_dict(args: tuple, kwargs: dict, static_nums: tuple,
                 static_names: tuple) -> bool:
    """Whether a plain dict is among the dynamic arguments of a call."""
    n = len(args)
    static = {i % n if i < 0 else i for i in static_nums} if n else set()
    trees = [a for i, a in enumerate(args) if i not in static]
    trees += [v for k, v in kwargs.items() if k not in static_names]
    return any(holds(t, dict) for t in trees)


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
