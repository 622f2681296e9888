"""The walks of a loop that writes a dict by keys of a constant (``dicts.unrolled``)
when its target is a tuple: ``for i, k in enumerate("abab")`` (every item known now) and
``for k, v in zip("abab", x)``, a constant beside sequences known only when the code
runs (issue 23)::

    for k, v in zip("abab", x):               x_items = list(x)
        acc[k] += v ** 2                  ->      if len(x) < 4:
                                                  raise ValueError("...")
                                              acc["a"] += x_items[0] ** 2
                                              acc["b"] += x_items[1] ** 2
                                              ...

Each copy of the body has the constant's item and ``x_items[i]`` in place of the
loop's names, so each key is known when the code is made; ``list(x)`` holds what zip
walks (an array's rows, a dict's keys, a string's characters).  Python's ``zip`` stops
at the shortest sequence, and the dict's keys would then depend on ``len(x)``, which is
known only when the code runs: the check before the copies raises, naming the user's
line, where ``x`` is shorter than the constant (a longer one ``zip`` cuts as well).  A
walked sequence that is not a name or an attribute (a call, a generator) leaves the
loop as it was (refused there, located).
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

import libcst as cst

__all__ = ["tuple_walk"]


def tuple_walk(n: Any, node: cst.For) -> tuple[list[dict], list[Any]] | None:
    """``(tables, checks)``: per copy of the body, the loop's names -> their item's
    expression, and the statements that go before the copies; None where the loop is
    not such a walk."""
    target = node.target
    if not isinstance(target, (cst.Tuple, cst.List)) or not all(
            isinstance(e, cst.Element) and isinstance(e.value, cst.Name)
            for e in target.elements):
        return None
    names = [e.value.value for e in target.elements]
    if len(set(names)) != len(names):
        return None
    static = n.comps.static
    items = static.static_items(node.iter)
    if items is not None:
        if not all(isinstance(s, cst.Tuple) and len(s.elements) == len(names)
                   for s, _ in items):
            return None
        return [dict(zip(names, (e.value for e in s.elements))) for s, _ in items], []
    call = node.iter
    if not isinstance(call, cst.Call) or static.builtin(call.func) is not builtins.zip or (
            len(call.args) != len(names)) or any(a.star or a.keyword for a in call.args):
        return None
    walks = [static.static_items(a.value) for a in call.args]
    known = [len(w) for w in walks if w is not None]
    if not known or not all(w is not None or isinstance(a.value, (cst.Name, cst.Attribute))
                            for w, a in zip(walks, call.args)):
        return None
    count, before, columns = min(known), [], []
    for walk, arg in zip(walks, call.args):
        if walk is not None:
            columns.append([spelling for spelling, _ in walk[:count]])
            continue
        stem = arg.value.value if isinstance(arg.value, cst.Name) else "walked"
        items = n.comps.loop_name(f"{stem}_items")
        before += _listed(n, node, arg.value, items, count)
        columns.append([_item(n, arg.value, items, k) for k in range(count)])
    return [dict(zip(names, row)) for row in zip(*columns)], before


def _item(n: Any, seq: Any, items: str, k: int) -> Any:
    new = cst.Subscript(cst.Name(items), [cst.SubscriptElement(cst.Index(cst.Integer(
        str(k))))])
    n.desugar.alias_tree(new, seq)
    return new


def _listed(n: Any, node: cst.For, seq: Any, items: str, count: int) -> list[Any]:
    """``items = list(seq)`` (what zip walks: a dict's keys, an array's rows), then
    ``if len(seq) < count: raise ValueError(...)``, located at the loop."""
    loc = n.loc(node)
    text = cst.Module([]).code_for_node
    where = f"{Path(str(loc.file)).name}, line {loc.line}" if loc is not None else "the loop"
    message = (f"{where}: s2s unrolls `for {text(node.target)} in {text(node.iter)}` "
               f"over the {count} items of its constant, so that each dict key is known "
               f"when the code is made; `{text(seq)}` has fewer items here, where Python's "
               f"zip would stop early: pass one of {count} items or more")
    bind = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(items))], cst.Call(
        cst.Name("list"), [cst.Arg(seq)]))])
    check = cst.If(
        cst.Comparison(cst.Call(cst.Name("len"), [cst.Arg(seq)]), [  # (x's: vmap's own)
            cst.ComparisonTarget(cst.LessThan(), cst.Integer(str(count)))]),
        cst.IndentedBlock([cst.SimpleStatementLine([cst.Raise(cst.Call(
            cst.Name("ValueError"), [cst.Arg(cst.SimpleString(repr(message)))]))])]))
    for new in (bind, check):
        n.desugar.alias_tree(new, node)
    return [bind, check]
