"""A transform's outputs never share memory with the caller's arrays.

The gradients are cast and copied where they must be (api/arguments.py); this module
does the same for what the user's function itself returned and a transform passes
on: ``value_and_grad``'s value, a ``has_aux`` function's aux output, ``jvp``'s primal
output.  ``def f(x): return loss(x), x`` under ``value_and_grad(f, has_aux=True)``
returns an aux that is not ``x`` (JAX returns an immutable array there; a caller
writing into s2s's must not change their input).

Whether an item needs the look is read once per function the transform runs, from
its text (s2s/optimize/aliases.py): where the code makes every array of that item, a
call pays nothing; elsewhere the item's arrays are compared with the caller's and the
module's (``np.may_share_memory``) and copied where they may share memory.
"""

from __future__ import annotations

import copy
import linecache
from typing import Any, Callable

import numpy as np

from ..optimize.aliases import foreign_items
from .arguments import _foreign, _reachable, _shares

__all__ = ["may_be_foreign", "owned", "owned_by", "owned_items", "owned_module"]

_NOT_READ = object()


def may_be_foreign(fn: Callable | None, k: int) -> bool:
    """May item ``k`` of the tuple the emitted function ``fn`` returns be, hold or
    view one of its arguments or module arrays?  True where unsure (``fn`` None:
    the code that ran is not known)."""
    maybe = _maybe(fn)
    return maybe is None or k in maybe


def _maybe(fn: Callable | None) -> frozenset[int] | None:
    """The items of ``fn``'s returned tuple that may be foreign (None: any may),
    read once per function."""
    if fn is None:
        return None
    maybe = getattr(fn, "__s2s_foreign_items__", _NOT_READ)
    if maybe is _NOT_READ:
        items = _read(fn)
        maybe = None if items is None else frozenset(k for k, f in enumerate(items) if f)
        try:
            fn.__s2s_foreign_items__ = maybe  # type: ignore[attr-defined]
        except AttributeError:
            pass
    return maybe  # type: ignore[return-value]


def _read(fn: Callable) -> tuple[bool, ...] | None:
    code = getattr(fn, "__code__", None)
    entry = linecache.cache.get(code.co_filename) if code is not None else None
    if entry is None or not code.co_filename.startswith("<s2s:"):
        return None
    return foreign_items("".join(entry[2]), fn.__name__)


def owned(tree: Any, args: tuple, fn: Callable | None) -> Any:
    """``tree`` with each array leaf that may share memory with the caller's arrays
    (``args``' leaves) or the module arrays ``fn`` reads copied; ``tree`` itself
    where none does (a NumPy scalar, a float: nothing to copy)."""
    t = type(tree)
    if t is not np.ndarray and t is not tuple and t is not list and t is not dict and \
            not isinstance(tree, (tuple, dict)):
        return tree
    return _copied(tree, _foreign(args, fn))


def owned_module(tree: Any, free: dict) -> Any:
    """``tree``, what the user's function returned when run on copies of the caller's
    arrays (vjp's output and aux), with each array leaf that may share memory with an
    array its free names hold (``free``: the IR's, a module's or closure's) copied."""
    values = []
    for var in free.values():
        try:
            values.append(var.read())
        except (KeyError, ValueError):
            continue
    foreign = _reachable(values)
    return _copied(tree, foreign) if foreign or type(foreign) is not list else tree


def owned_by(tree: Any, fun: Any) -> Any:
    """``tree``, what a user's function ``fun`` (not transformed: ``s2s.jit`` of it on
    NumPy, ``linearize``'s output) returned when run on copies of the caller's
    arrays, with each array leaf that may share memory with an array the function's
    own text names from its module or closure copied (``return W``: JAX returns an
    immutable copy; the caller writing into s2s's must not change ``W``)."""
    t = type(tree)
    if t is not np.ndarray and not isinstance(tree, (tuple, list, dict)):
        return tree
    if getattr(fun, "__code__", None) is None:
        return tree
    foreign = _reachable([fun])  # (its defaults, closure cells and the globals it reads)
    return _copied(tree, foreign) if foreign or type(foreign) is not list else tree


def _copied(tree: Any, foreign: list[np.ndarray]) -> Any:
    t = type(tree)
    if t is np.ndarray:
        return tree.copy() if _shares(tree, foreign) else tree
    if isinstance(tree, dict):  # (a Fields, the plain form of a NamedTuple, kept one)
        new = {k: _copied(v, foreign) for k, v in tree.items()}
        if all(new[k] is v for k, v in tree.items()):
            return tree
        if t is dict:
            return new
        made = copy.copy(tree)
        made.clear()
        made.update(new)
        return made
    if isinstance(tree, (tuple, list)):
        items = [_copied(v, foreign) for v in tree]
        if all(a is b for a, b in zip(items, tree)):
            return tree
        return t(*items) if hasattr(t, "_fields") else t(items)
    return tree


def owned_items(result: tuple, items: tuple[int, ...], args: tuple,
                fn: Callable | None, ran: Callable | None) -> tuple:
    """``result`` (a tuple the emitted code returned) with its ``items`` owned
    (:func:`owned`) where the code that ran (``ran``; None: not known) may return a
    foreign array there."""
    maybe = getattr(ran, "__s2s_foreign_items__", _NOT_READ)  # (_maybe, inline)
    if maybe is _NOT_READ:
        maybe = _maybe(ran)
    if maybe is not None and maybe.isdisjoint(items):
        return result  # (the code makes every array of these items: no look)
    new = list(result)
    for k in items:
        if k < len(new):
            new[k] = owned(new[k], args, fn)
    return result if all(a is b for a, b in zip(new, result)) else tuple(new)
