"""Which function ``self.name(...)`` in a method denotes, recorded when the method is
lowered with ``self`` the dict of its object's attributes (``objects.self_method``),
and checked against the object's own class when the transform is called.

A method given to a transform with an object of a subclass (``s2s.grad(obj.loss)``,
``obj`` a ``Wider(Net)`` whose ``features`` overrides ``Net.features``) is transformed
per class, as Python (and JAX, which traces it) runs the object's own methods:
``for_class(Net.loss, Wider)`` is ``Net.loss``'s code as a function of its own, marked
as a method of ``Wider`` (``CLASS``), so ``self.features(...)`` in it resolves on
``Wider`` and the transforms' caches, keyed by the function, keep one per class.
No libcst here: ``s2s/api/methods.py`` imports it.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

from ..errors import TransformError

# function -> {method name: (the function `self.name(...)` in its body resolved to,
# where it is written, the function's display name, the function lowered for it)}
SELF_METHODS: dict[Any, dict[str, tuple[Any, Any, str, Any]]] = {}

CLASS = "__s2s_class__"  # a method's function as a method of this class (for_class)
_ALIASES: dict[tuple[Any, type], Any] = {}


def defining_class(fn: Any) -> type | None:
    """The class a function is a method of: the one ``for_class`` made it for, else
    the module-level class its qualified name names."""
    made = getattr(fn, CLASS, None)
    if made is not None:
        return made
    parts = getattr(fn, "__qualname__", "").split(".")
    if len(parts) < 2 or "<locals>" in parts:
        return None
    obj: Any = getattr(fn, "__globals__", {}).get(parts[0])
    for part in parts[1:-1]:
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) else None


def for_class(func: Any, cls: type) -> Any:
    """``func`` (a method's function) as a method of ``cls``: itself where ``cls`` is
    its class (or not a subclass of it), else one function per ``(func, cls)`` with
    ``func``'s code, defaults and closure, whose ``self.other(...)`` calls resolve on
    ``cls``."""
    if not isinstance(func, types.FunctionType):
        return func
    owner = defining_class(func)
    if owner is None or owner is cls or not (isinstance(cls, type) and issubclass(cls, owner)):
        return func
    base = getattr(func, "__s2s_method__", func)
    hit = _ALIASES.get((base, cls))
    if hit is None:
        hit = types.FunctionType(base.__code__, base.__globals__, base.__name__,
                                 base.__defaults__, base.__closure__)
        hit.__kwdefaults__ = base.__kwdefaults__
        hit.__qualname__, hit.__module__ = base.__qualname__, base.__module__
        hit.__doc__ = base.__doc__
        setattr(hit, CLASS, cls)
        hit.__s2s_method__ = base  # type: ignore[attr-defined]
        _ALIASES[(base, cls)] = hit
    return hit


def self_methods_hold(fn: Any) -> bool:
    """Does each ``self.name(...)`` in the method ``fn`` still denote the function it
    was lowered as (a method replaced on the class since: lowered again)?"""
    found = SELF_METHODS.get(fn)
    if not found:
        return True
    owner = defining_class(fn)
    return owner is None or all(inspect.getattr_static(owner, name, None) is resolved
                                for name, (resolved, *_) in found.items())


def check_self_methods(func: Any, obj: Any) -> None:
    """The object's own methods are the ones ``self.name(...)`` resolved to when ``func``
    (a method given to a transform with its object, ``for_class`` of the object's
    class) was transformed."""
    seen: set[int] = set()
    todo = [func]
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        for name, (resolved, loc, display, used) in SELF_METHODS.get(fn, {}).items():
            actual = inspect.getattr_static(type(obj), name, None)
            if actual is not resolved:
                raise TransformError(
                    f"`self.{name}(...)` was transformed as `{resolved.__qualname__}` "
                    f"(the class defining `{fn.__qualname__}`), but this object is a "
                    f"`{type(obj).__name__}`, whose `{name}` is another function", loc,
                    f"call the object in the function you transform (`lambda x: "
                    f"obj.{getattr(func, '__name__', 'method')}(x)`: there `self` is the "
                    f"object, its own methods called), or write "
                    f"`{resolved.__qualname__}(self, ...)`", display)
            todo.append(used)
