"""``a.out.append(v)`` into a list field of an object the function built.

The field's list is one its constructor made fresh (``self.out = []``, then only
appended to: ``number_fields.fresh_lists``), and the function reads it only where the
read copies or walks it (``a.out[i]``, ``sum(a.out)``, ``len(a.out)``, ``for v in
a.out``) and appends to it only so: no other name can hold that list, so the append
is Python's ``a.out = a.out + [v]`` exactly, a field write ``object_setters.py``
lowers; in a loop too (the field read there is the list its constructor made, grown:
``sequences._constructed_list``), read after it as a list grown in a loop (``np.stack(
a.out)``).  Any other use keeps the refusal of an expression statement.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

import libcst as cst
import numpy as np

from ..errors import TransformError
from .number_fields import fresh_lists
from .objects import record_of
from .resolve import is_library
from .source import parse_function

_READS = ("sum", "len", "list", "tuple")


def field_append(n: Any, node: cst.Expr, assign: Any) -> bool:
    """Lower ``a.out.append(v)`` as ``a.out = a.out + [v]`` (``assign``: the statement
    lowerer's) where that is Python's meaning (the module's note); False otherwise."""
    call = node.value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and
            call.func.attr.value == "append" and len(call.args) == 1 and not (
                call.args[0].star or call.args[0].keyword)):
        return False
    field = call.func.value
    if not (isinstance(field, cst.Attribute) and isinstance(field.value, cst.Name)):
        return False
    base, attr = field.value.value, field.attr.value
    made = record_of(n, base) if base in n.env else None
    if made is None or attr not in fresh_fields(made.cls) or not _only_read(n, n.p.node, base, attr):
        return False
    grown = cst.BinaryOperation(field, cst.Add(), cst.List([cst.Element(call.args[0].value)]))
    n.desugar.alias_tree(grown, node)
    assign(field, grown)
    return True


def fresh_fields(cls: type) -> frozenset[str]:
    """The list fields ``cls.__init__`` makes fresh (``number_fields.fresh_lists``)."""
    init = inspect.getattr_static(cls, "__init__", None)
    if not isinstance(init, types.FunctionType) or is_library(init):
        return frozenset()
    try:
        parsed = parse_function(init)
    except TransformError:
        return frozenset()
    params = parsed.node.params.params
    return fresh_lists(parsed.node, params[0].name.value) if params else frozenset()


def _only_read(n: Any, defined: Any, base: str, attr: str) -> bool:
    """Does the function use ``base.attr`` only as the receiver of an ``append``
    statement, an item read, the argument of ``sum``/``len``/``list``/``tuple``, or
    what a ``for`` walks, and ``base`` only through its attributes?"""
    ok = [True]

    class Uses(cst.CSTVisitor):
        def __init__(self) -> None:
            self.stack: list[Any] = []

        def on_visit(self, node: Any) -> bool:
            parent = self.stack[-1] if self.stack else None
            if isinstance(node, cst.Name) and node.value == base and not (
                    isinstance(parent, cst.Attribute) and parent.value is node):
                # (`b = a`, `f(a)`: another name may hold its list; its binding is fine)
                ok[0] = ok[0] and isinstance(parent, cst.AssignTarget)
            if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and (
                    node.value.value == base and node.attr.value == attr):
                ok[0] = ok[0] and _allowed(self.stack, n)
            self.stack.append(node)
            return True

        def on_leave(self, node: Any) -> None:
            self.stack.pop()

    defined.visit(Uses())
    return ok[0]


_COPIES = (np.stack, np.concatenate, np.array, np.asarray, np.vstack, np.hstack,
           np.column_stack, np.sum, np.mean)  # (`np.stack(a.out)`: a new array)


def _allowed(stack: list, n: Any) -> bool:
    parent = stack[-1] if stack else None
    if isinstance(parent, cst.Subscript):
        return True  # (`a.out[i]`)
    if isinstance(parent, (cst.For, cst.CompFor)):
        return True  # (walked)
    if isinstance(parent, cst.Attribute) and parent.attr.value == "append":
        call = stack[-2] if len(stack) > 1 else None
        return isinstance(call, cst.Call) and len(stack) > 2 and isinstance(
            stack[-3], cst.Expr)
    if isinstance(parent, cst.Arg) and len(stack) > 1 and isinstance(stack[-2], cst.Call):
        func = stack[-2].func
        if isinstance(func, cst.Attribute) and stack[-2].args and (
                stack[-2].args[0] is parent):  # (its first argument)
            try:
                return n.resolver.resolve_dotted(func)[0] in _COPIES
            except TransformError:
                return False
        return isinstance(func, cst.Name) and func.value in _READS
    return False
