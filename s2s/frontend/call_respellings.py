"""Calls the expression lowerer reads as other code (``frontend/expressions.py``):
``sum`` of an object's list field as the loop over its items, ``np.where(c)`` with one
argument as ``np.nonzero(c)``, ``np.array`` of a nested list comprehension with each
row made an array first."""

from __future__ import annotations

from typing import Any

import libcst as cst
import numpy as np

from ..ir.nodes import Atom


def field_sum(n: Any, node: cst.Call, target: str | None) -> Atom | None:
    """``sum(c.out)``, ``sum(c.out, start)`` of a field of a local object (a list a
    method or the constructor built): ``sum(v for v in c.out)``, the loop over its items
    that ``for v in c.out`` is; None for any other ``sum``."""
    args = list(node.args)
    first = args[0].value if args and args[0].keyword is None and not args[0].star else None
    start = args[1] if len(args) == 2 and (
        args[1].keyword is None or args[1].keyword.value == "start") else None
    if first is None or len(args) > 1 and start is None or not _field_read(n, first) or (
            n.comps.items_of(first) is not None):
        return None
    item = cst.Name(n.comps.loop_name("value"))
    generator = cst.GeneratorExp(item, cst.CompFor(item, first))
    n.desugar.alias_tree(generator, first)
    return n.comps.sum(generator, start.value if start else None, node, target)


def _field_read(n: Any, node: Any) -> bool:
    """``c.out``, ``self.layers``: a field of a local object (not an array's attribute,
    ``x.T``, ``x.shape``), whose items a loop walks."""
    if not isinstance(node, cst.Attribute) or hasattr(np.ndarray, node.attr.value):
        return False
    root = node.value
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(root, cst.Name) and root.value in n.local_names


def respelled(n: Any, obj: Any, node: cst.Call) -> cst.Call | None:
    """A NumPy call written as another NumPy call: ``np.where(c)`` with one argument
    is ``np.nonzero(c)``; ``np.array`` of a nested list comprehension,
    :func:`stacked_rows`; None for any other call."""
    func, args = node.func, node.args
    if obj is np.where and isinstance(func, cst.Attribute) and len(args) == 1 and \
            args[0].keyword is None and not args[0].star:
        nonzero = node.with_changes(func=func.with_changes(attr=cst.Name("nonzero")))
        n.desugar.alias_tree(nonzero, node)
        return nonzero
    return stacked_rows(n, node) if obj in (np.array, np.asarray) else None


def stacked_rows(n: Any, node: cst.Call) -> cst.Call | None:
    """``np.array([[e for j in J] for i in I])`` (a nested list comprehension: a list
    of lists grown in loops, which the transforms cannot read as one array) as
    ``np.array([np.array([e for j in J]) for i in I])``: each row made an array, as
    NumPy reads the rows (the same values; ``dtype=`` and the rest stay on the outer
    call); None for any other call."""
    first = node.args[0] if node.args else None
    if first is None or first.keyword is not None or first.star or not (
            isinstance(first.value, cst.ListComp) and isinstance(first.value.elt, cst.ListComp)):
        return None
    comp = first.value
    row = cst.Call(node.func, [cst.Arg(comp.elt)])
    outer = comp.with_changes(elt=row)
    made = node.with_changes(args=[first.with_changes(value=outer), *node.args[1:]])
    for new, old in ((row, comp.elt), (outer, comp), (made, node)):
        n.desugar.alias(new, old)
    return made
