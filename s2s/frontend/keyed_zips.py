"""The walks of a loop that writes a dict by keys of a constant (``dicts.unrolled``)
when its target is a tuple: ``for i, k in enumerate("abab")`` (every item known now) and
``for k, v in zip("abab", x)``, a constant beside sequences known only when the code
runs (issue 23)::

    for k, v in zip("abab", x):               if len(x) < 4:
        acc[k] += v ** 2                  ->      raise ValueError("...")
                                              k, v = "a", x[0]      (per copy, in place)
                                              acc["a"] += x[0] ** 2
                                              ...

Each copy of the body has the constant's item and ``x[i]`` in place of the loop's
names, so each key is known when the code is made.  Python's ``zip`` stops at the
shortest sequence, and the dict's keys would then depend on ``len(x)``, which is known
only when the code runs: the check before the copies raises, naming the user's line,
where ``x`` is shorter than the constant (a longer one ``zip`` cuts as well).  A walked
sequence that is not a name or an attribute (read once per copy: a call would run
again) leaves the loop as it was (refused there, located).
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
    count = min(known)
    columns = [[s for s, _ in w[:count]] if w is not None else [_item(n, a.value, k) for k in
               range(count)] for w, a in zip(walks, call.args)]
    checks = [_check(n, node, a.value, count) for w, a in zip(walks, call.args) if w is None]
    return [dict(zip(names, row)) for row in zip(*columns)], checks


def _item(n: Any, seq: Any, k: int) -> Any:
    new = cst.Subscript(seq, [cst.SubscriptElement(cst.Index(cst.Integer(str(k))))])
    n.desugar.alias(new, seq)
    return new


def _check(n: Any, node: cst.For, seq: Any, count: int) -> Any:
    """``if len(seq) < count: raise ValueError(...)``, located at the loop."""
    loc = n.loc(node)
    text = cst.Module([]).code_for_node
    where = f"{Path(str(loc.file)).name}, line {loc.line}" if loc is not None else "the loop"
    message = (f"{where}: s2s unrolls `for {text(node.target)} in {text(node.iter)}` "
               f"over the {count} items of its constant, so that each dict key is known "
               f"when the code is made; `{text(seq)}` has fewer here, where Python's zip "
               f"would stop early: pass one of {count} items or more")
    check = cst.If(
        cst.Comparison(cst.Call(cst.Name("len"), [cst.Arg(seq)]), [cst.ComparisonTarget(
            cst.LessThan(), cst.Integer(str(count)))]),
        cst.IndentedBlock([cst.SimpleStatementLine([cst.Raise(cst.Call(
            cst.Name("ValueError"), [cst.Arg(cst.SimpleString(repr(message)))]))])]))
    n.desugar.alias_tree(check, node)
    return check
