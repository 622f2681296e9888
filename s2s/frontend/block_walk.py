"""A walk over a function's statements that rewrites each simple line and each compound
statement's header, recursing into every block (``body``, ``orelse``, ``finalbody``,
``except`` handlers, ``elif``), for the desugarings of one container kind (defaultdicts,
deques): a subclass says what a line becomes and what a header needs."""

from __future__ import annotations

from typing import Any

import libcst as cst

__all__ = ["BlockWalk"]


class BlockWalk:
    """Statements in, statements out; each new node reports the position of the one it
    replaces (``n.desugar.alias``)."""

    def __init__(self, n: Any) -> None:
        self.n = n

    def line(self, node: cst.SimpleStatementLine) -> list[Any]:
        """The lines a simple statement line becomes."""
        return [node]

    def head(self, node: Any, elif_: bool) -> tuple[list[Any], Any]:
        """``(lines before it, node)``: a compound statement with its header rewritten
        (its blocks are walked after); ``elif_``: an ``elif``, which has no place
        before it."""
        return [], node

    def block(self, nodes: list[Any]) -> list[Any]:
        out: list[Any] = []
        for node in nodes:
            out += self.statement(node)
        return out

    def statement(self, node: Any, elif_: bool = False) -> list[Any]:
        if isinstance(node, cst.SimpleStatementLine):
            return self.line(node)
        before, headed = self.head(node, elif_)
        changes: dict[str, Any] = {}
        for field in ("body", "orelse", "finalbody"):
            part = getattr(node, field, None)
            if isinstance(part, cst.IndentedBlock):
                changes[field] = self._indented(part)
            elif isinstance(part, (cst.Else, cst.Finally)):
                changes[field] = part.with_changes(body=self._indented(part.body))
            elif isinstance(part, cst.If):
                changes[field] = self.statement(part, True)[0]
        if isinstance(node, cst.Try):
            changes["handlers"] = [h.with_changes(body=self._indented(h.body))
                                   for h in node.handlers]
        if not changes:
            return before + [headed]
        new = headed.with_changes(**changes)
        self.n.desugar.alias(new, headed)
        return before + [new]

    def _indented(self, block: Any) -> Any:
        new = block.with_changes(body=self.block(list(block.body)))
        self.n.desugar.alias(new, block)
        return new
