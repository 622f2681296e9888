"""``for ... else`` and ``while ... else``, rewritten as a careful person would by hand.

The ``else`` block runs when the loop was not left by ``break``.  A loop with no
``break`` of its own runs it always, so its statements simply follow the loop; a
loop with one gets a flag::

    broke = False
    for row in x:
        if np.sum(row) > 1.0:
            broke = True
            break
    if not broke:
        ...

which is a boolean carried by the loop, as any other.  Synthesized nodes report the
position of the node they replace, so errors quote the user's line.
"""

from __future__ import annotations

from typing import Any, Callable

import libcst as cst


class StatementRewriter(cst.CSTTransformer):
    """A pass over one function's statements (nested ``def``s, classes and lambdas
    left alone), each rebuilt node reporting the position of the node it replaces;
    ``rewrite`` gives a list of statements (a node may become several)."""

    def __init__(self, alias: Callable[[Any, Any], None]) -> None:
        super().__init__()
        self.alias = alias

    def rewrite(self, nodes: list[Any]) -> list[Any]:
        out: list[Any] = []
        for node in nodes:
            new = node.visit(self)
            out += list(new.nodes) if isinstance(new, cst.FlattenSentinel) else [new]
        return out

    def on_leave(self, original: Any, updated: Any) -> Any:
        new = super().on_leave(original, updated)
        if isinstance(new, cst.CSTNode) and new is not original:
            self.alias(new, original)  # (a rebuilt parent keeps its position)
        return new

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


class LoopElse(StatementRewriter):
    """Rewrites every loop with an ``else`` in a function's body (not in the bodies
    of nested ``def``s, lambdas or classes: each is its own function)."""

    def __init__(self, alias: Callable[[Any, Any], None],
                 fresh: Callable[[str], str]) -> None:
        super().__init__(alias)
        self.fresh = fresh
        self.flags: list[str] = []  # the names it binds


    def leave_For(self, original: cst.For, updated: cst.For) -> Any:
        return self._loop(original, updated)

    def leave_While(self, original: cst.While, updated: cst.While) -> Any:
        return self._loop(original, updated)

    def _loop(self, original: Any, updated: Any) -> Any:
        if updated.orelse is None:
            return updated
        tail = list(updated.orelse.body.body)
        loop = updated.with_changes(orelse=None)
        self.alias(loop, original)
        if not _breaks(loop.body):
            return cst.FlattenSentinel([loop, *tail])  # it always ends normally
        flag = self.fresh("broke")
        self.flags.append(flag)
        loop = loop.with_changes(body=loop.body.with_changes(
            body=_flag_breaks(list(loop.body.body), flag, self.alias)))
        self.alias(loop, original)
        start = cst.parse_statement(f"{flag} = False")
        self.alias(start.body[0], original)
        after = cst.If(test=cst.UnaryOperation(cst.Not(), cst.Name(flag)),
                       body=cst.IndentedBlock(body=tail))
        self.alias(after, original.orelse)
        self.alias(after.test, original.orelse)
        return cst.FlattenSentinel([start, loop, after])


def _flag_breaks(nodes: list[Any], flag: str, alias: Any) -> list[Any]:
    """``break`` of this loop (not of a nested one) becomes ``flag = True; break``."""

    class Flag(cst.CSTTransformer):
        def visit_For(self, node: cst.For) -> bool:
            return False  # (a nested loop's break is its own)

        def visit_While(self, node: cst.While) -> bool:
            return False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def on_leave(self, original: Any, updated: Any) -> Any:
            new = super().on_leave(original, updated)
            if isinstance(new, cst.CSTNode) and new is not original:
                alias(new, original)
            return new

        def leave_SimpleStatementLine(self, original: Any, updated: Any) -> Any:
            if not any(isinstance(s, cst.Break) for s in updated.body):
                return updated
            body: list[Any] = []
            for small in updated.body:
                if isinstance(small, cst.Break):
                    mark = cst.Assign(targets=[cst.AssignTarget(cst.Name(flag))],
                                      value=cst.Name("True"))
                    alias(mark, small)
                    body.append(mark)
                body.append(small)
            new = updated.with_changes(body=body)
            alias(new, original)
            return new

    out = []
    for node in nodes:
        new = node.visit(Flag())
        alias(new, node)
        out.append(new)
    return out


def _breaks(body: Any) -> bool:
    """Does a loop's body hold a ``break`` of its own (not a nested loop's)?"""
    found: list[Any] = []

    class Find(cst.CSTVisitor):
        def visit_Break(self, node: cst.Break) -> None:
            found.append(node)

        def on_visit(self, node: Any) -> bool:
            return not isinstance(node, (cst.For, cst.While, cst.FunctionDef,
                                         cst.Lambda)) and super().on_visit(node)

    body.visit(Find())
    return bool(found)
