"""Fields of your class that always hold a Python number (issue 23): ``self.steps +=
1`` on one is Python's ``self.steps = self.steps + 1`` exactly (an int or float is
never changed in place), so a method's augmented assignment of it is written so.

A field counts where every write to an attribute of that name in the class's methods
(its bases' too) is ``x.<name> = <number>`` or ``x.<name> op= <number>`` (a literal
int or float, maybe negated), and no method calls ``setattr``/``__setattr__``; any
other write (an argument, an array) leaves ``+=`` to the refusal of a write into an
array another name may hold.  Your function's own ``obj.<name> = value`` of such a
field must then set a Python number too (object_setters.py)."""

from __future__ import annotations

import inspect
import textwrap
import types
from typing import Any

import libcst as cst

_CACHE: dict[tuple, frozenset[str]] = {}


def number_fields(cls: type) -> frozenset[str]:
    """The names of the class's fields that only ever hold a Python number and that
    a method updates with an augmented assignment (``self.steps += 1``)."""
    fns = []
    for klass in cls.__mro__[:-1]:
        for v in vars(klass).values():
            if isinstance(v, property):
                fns += [f for f in (v.fget, v.fset, v.fdel) if f is not None]
            elif isinstance(v, (classmethod, staticmethod)):
                fns.append(v.__func__)
            else:
                fns.append(v)
    fns = [f for f in fns if isinstance(f, types.FunctionType)]
    key = (cls, tuple((f, f.__code__) for f in fns))
    if key not in _CACHE:
        _CACHE[key] = _numbers(fns)
    return _CACHE[key]


def is_number(node: Any) -> bool:
    """A literal int or float (``1``, ``0.5``, ``-1``)."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (
            cst.Minus, cst.Plus)):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float)) and not node.lpar


def _numbers(fns: list) -> frozenset[str]:
    good: set[str] = set()
    bad: set[str] = set()
    updated: set[str] = set()
    for fn in fns:
        try:
            tree = cst.parse_module(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, cst.ParserSyntaxError):
            return frozenset()  # (a method s2s cannot read may set anything)
        for node in _walk(tree):
            if isinstance(node, cst.Call) and (
                    isinstance(node.func, cst.Name) and node.func.value == "setattr" or
                    isinstance(node.func, cst.Attribute) and node.func.attr.value in (
                        "__setattr__", "__dict__")):
                return frozenset()
            pairs: list[tuple[Any, Any]] = []
            if isinstance(node, cst.Assign):
                pairs = [(t.target, node.value) for t in node.targets]
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
                pairs = [(node.target, node.value)]
            elif isinstance(node, (cst.For, cst.WithItem)):
                pairs = [(t, None) for t in _walk(getattr(node, "target", None) or
                                                  getattr(node, "asname", None) or node)]
            for target, value in pairs:
                for t in _walk(target) if not isinstance(target, cst.Attribute) else [target]:
                    if isinstance(t, cst.Attribute):
                        plain = t is target and value is not None and is_number(value)
                        (good if plain else bad).add(t.attr.value)
                        if plain and isinstance(node, cst.AugAssign):
                            updated.add(t.attr.value)
    return frozenset((good - bad) & updated)


def _walk(node: Any) -> Any:
    if node is None:
        return
    yield node
    for child in node.children:
        yield from _walk(child)


def fresh_lists(fdef: cst.FunctionDef, me: str) -> frozenset[str]:
    """Fields an ``__init__`` sets to a list display and then only appends to
    (``self.layers = []``, ``self.layers.append(v)``), where it calls no method of its
    object (nothing else can hold the list while it is built): ``append`` is then
    Python's ``self.layers = self.layers + [v]`` exactly."""
    good: set[str] = set()
    bad: set[str] = set()
    allowed: set[int] = set()
    for node in _walk(fdef.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and (
                isinstance(node.func.value, cst.Name) and node.func.value.value in (
                    me, "super")):
            return frozenset()  # (`self.method(...)`, `super()...`: may hold the list)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and (
                isinstance(node.func.value, cst.Name) and node.func.value.value == "super"
                or isinstance(node.func.value, cst.Call)):
            return frozenset()
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(
                node.value, cst.List):
            allowed.add(id(node.targets[0].target))
            good.add(_own(node.targets[0].target, me) or "")
        if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call) and (
                isinstance(node.value.func, cst.Attribute)) and (
                node.value.func.attr.value == "append") and len(node.value.args) == 1 and (
                not node.value.args[0].star and node.value.args[0].keyword is None):
            allowed.add(id(node.value.func.value))
        field = _own(node, me)
        if field and id(node) not in allowed:
            bad.add(field)
    return frozenset(good - bad - {""})


def _own(node: Any, me: str) -> str:
    """``F`` where ``node`` is ``self.F``, else ""."""
    return node.attr.value if isinstance(node, cst.Attribute) and isinstance(
        node.value, cst.Name) and node.value.value == me else ""
