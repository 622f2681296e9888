"""An item of a dict the function built, read by a key known only when it runs
(``best = max(d, key=lambda k: d[k])``, then ``d[best]``; ``d[name]`` of a string
argument): the key is checked as Python checks it (``KeyError``), then the read is the
chain ``d["a"] if key == "a" else d["b"] if ...``, one branch per key, each a read by
a constant key that the transforms differentiate (the gradient flows through the item
the key chose, as in JAX, whose trace reads that one)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..ir.nodes import Atom, Var
from .desugar import lower_in_place


def run_time_item(n: Any, node: cst.Subscript, base: Atom, items: list[Any],
                  target: str | None) -> Atom | None:
    """``d[key]`` of a dict ``d`` built here (its keys known now) and a key ``Var``;
    None (nothing emitted) for any other subscript."""
    if len(items) != 1 or not isinstance(items[0], Var) or not isinstance(base, Var) or (
            not isinstance(node.value, cst.Name)):
        return None
    keys = n.dicts.settled(base.name)
    if not keys or not all(isinstance(k, (str, int)) for k in keys):
        return None
    key = n.comps.static.atom_node(items[0], node)
    spelled = cst.Module([]).code_for_node(key)
    listed = ", ".join(map(repr, keys)) + ("," if len(keys) == 1 else "")
    guard = cst.parse_statement(f"if {spelled} not in ({listed}):\n"
                                f"    raise KeyError({spelled})\n")
    lower_in_place(n, [guard], node)
    chosen: Any = _read(node, keys[-1])
    for k in reversed(keys[:-1]):
        test = cst.Comparison(key, [cst.ComparisonTarget(cst.Equal(), cst.parse_expression(
            repr(k)))])
        chosen = cst.IfExp(test, _read(node, k), chosen, lpar=[cst.LeftParen()],
                           rpar=[cst.RightParen()])
    n.desugar.alias_tree(chosen, node)
    return n.exprs.expr(chosen, target)


def _read(node: cst.Subscript, key: Any) -> cst.Subscript:
    return node.with_changes(slice=[cst.SubscriptElement(cst.Index(cst.parse_expression(
        repr(key))))])
