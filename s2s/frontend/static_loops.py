"""A loop over a literal tuple or a module's tuple, list or dict that leaves early
(where the loop lowering cannot), or over ``sorted(...)`` of literals, unrolled (issue
23)::

    for k in ("a", "b", "c"):                 e = e + f(x, "a")
        if k == "b":                  ->      k = "b"
            break
        e = e + f(x, k)

Each copy of the body has the item in place of the loop's names; an ``if`` whose test
is known once the item is in place (``k == "b"``) keeps only the branch Python takes,
and a ``break`` it reaches ends the unrolling there (``continue`` ends the copy).  A
``break`` under a test known only when the code runs (``if np.sum(x) > 3: break``)
ends its path: the statements after the ``if``, later copies included, move into its
other branch (desugar.hoist_returns).  The items are the module's (``CFG``: read again when the
dict changes, frontend/static.py) or literals'.  After the loop its names hold the
last item it reached, as in Python.  A list literal walked with a run-time ``break``
is left to the loop lowering, which reads it by index.
"""

from __future__ import annotations

import builtins
from typing import Any

import libcst as cst

from .comprehensions import substitute
from .desugar import hoist_returns, leaves_somewhere, strip_continues
from .dicts import assigned_names
from .module_dicts import _bind, _names, _unpack, _walked_dict, lower_copies
from .static import NOVALUE

__all__ = ["unroll_static"]


def unroll_static(n: Any, node: cst.For) -> bool:
    """Lower ``node`` as above (True), or leave it (False, nothing emitted)."""
    if node.orelse is not None or node.asynchronous is not None:
        return False
    static = n.comps.static
    call = node.iter
    ordered = isinstance(call, cst.Call) and static.builtin(call.func) is builtins.sorted \
        and len(call.args) == 1 and not isinstance(call.args[0].value, cst.Name)
    if not (ordered or _leaves_early(n, node)):
        return False
    targets = _names(node.target)
    if not targets or set(targets) & assigned_names(node.body):
        return False
    items = static.static_items(node.iter)
    unpacks: list[list[Any]] = [[] for _ in items or ()]
    tables = [_bind(node.target, spelling, u) for (spelling, _), u in zip(items or (),
                                                                          unpacks)]
    if items is None or any(t is None for t in tables):
        return False
    alias = n.desugar.alias
    copies: list[list[Any]] = []
    for table, u in zip(tables, unpacks):  # (`w, b = LAYERS["a"]` first: module_dicts)
        body, stop = _fold(static, [_unpack(t, s, node.target, alias) for t, s in u]
                           + [substitute(s, table, alias) for s in node.body.body])
        body = strip_continues(hoist_returns(body, alias, cst.Continue), alias)
        copies.append(body)
        if stop:
            break
    binds = [[_assign(n, cst.Name(t), v, node.target) for t, v in table.items()]
             for table in tables[:len(copies)]]  # (the loop's names: the item reached)
    if any(leaves_somewhere(s, cst.Break) for body in copies for s in body):
        copies = _flagged(n, [b + c for b, c in zip(binds, copies)], node)
    elif copies:
        copies[-1] = copies[-1] + binds[-1]
    lower_copies(n, copies)
    return True


def _leaves_early(n: Any, node: cst.For) -> bool:
    """Does ``node`` leave early where the loop lowering cannot: a ``break`` in a loop
    over a literal tuple or a module's tuple, list or dict, a ``continue`` in one over
    a module's dict?  (A ``range``, a list literal, an array, an argument: a loop with
    its ``break``, as before.)"""
    breaks = any(leaves_somewhere(s, cst.Break) for s in node.body.body)
    if _walked_dict(n, node.iter) is not None:
        return breaks or any(leaves_somewhere(s, cst.Continue) for s in node.body.body)
    if not breaks:
        return False
    if isinstance(node.iter, cst.Tuple):
        return True
    base = node.iter  # (`CFG.items()`, `mod.CFG.items()`: the dict)
    if isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute) and (
            base.func.attr.value in ("items", "keys", "values")) and not base.args:
        base = base.func.value
    if not isinstance(base, (cst.Name, cst.Attribute)):
        return False
    value = n.comps.static.static_value(base)  # (NOVALUE for a local)
    return isinstance(value, (tuple, list, dict))


def _fold(static: Any, stmts: list[Any]) -> tuple[list[Any], bool]:
    """``stmts`` with each ``if`` whose test is known now replaced by the branch it
    takes, cut at a ``break`` (True: the loop stops) or ``continue`` reached."""
    out: list[Any] = []
    for s in stmts:
        if isinstance(s, cst.SimpleStatementLine):
            kept = []
            for small in s.body:
                if isinstance(small, (cst.Break, cst.Continue)):
                    if kept:
                        out.append(s.with_changes(body=kept))
                    return out, isinstance(small, cst.Break)
                kept.append(small)
            out.append(s)
            continue
        if isinstance(s, cst.If):
            value = static.static_value(s.test)
            if value is not NOVALUE:
                chosen = list(s.body.body) if value else _branch(s.orelse)
                body, stop = _fold(static, chosen)
                out += body
                if stop or _ends(chosen):
                    return out, stop
                continue
        out.append(s)
    return out, False


def _branch(orelse: Any) -> list[Any]:
    if orelse is None:
        return []
    if isinstance(orelse, cst.If):
        return [orelse]
    return list(orelse.body.body)


def _ends(stmts: list[Any]) -> bool:
    """Does the branch end in ``continue`` (the copy ends)?"""
    return bool(stmts) and isinstance(stmts[-1], cst.SimpleStatementLine) and any(
        isinstance(s, cst.Continue) for s in stmts[-1].body)


def _flagged(n: Any, copies: list[list[Any]], node: cst.For) -> list[list[Any]]:
    """The copies in a row, each run-time ``break`` ending its path: the statements
    after an ``if`` that breaks (later copies too) move into its other branch
    (desugar.hoist_returns, as a ``continue`` of a loop body)."""
    alias = n.desugar.alias
    joined = [s.visit(_BreakToContinue(alias)) for body in copies for s in body]
    return [strip_continues(hoist_returns(joined, alias, cst.Continue), alias)]


class _BreakToContinue(cst.CSTTransformer):
    """The loop's own ``break`` (not a nested loop's) spelled ``continue``."""

    def __init__(self, alias: Any) -> None:
        self.alias = alias

    def visit_For(self, node: Any) -> bool:
        return False

    def visit_While(self, node: Any) -> bool:
        return False

    def visit_FunctionDef(self, node: Any) -> bool:
        return False

    def leave_Break(self, original: Any, updated: Any) -> Any:
        new = cst.Continue()
        self.alias(new, original)
        return new

    def on_leave(self, original: Any, updated: Any) -> Any:
        out = super().on_leave(original, updated)
        if out is not original and isinstance(out, cst.CSTNode):
            self.alias(out, original)
        return out


def _assign(n: Any, target: Any, value: Any, old: Any) -> Any:
    stmt = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], value)])
    n.desugar.alias_tree(stmt, old)
    return stmt
