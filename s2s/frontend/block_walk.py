"""A walk over a function's statements that rewrites each simple line and each compound
statement's header, recursing into every block (``body``, ``orelse``, ``finalbody``,
``except`` handlers, ``elif``), for the desugarings of one container kind (defaultdicts,
deques): a subclass says what a line becomes and what a header needs; and the
check of every use of the containers they made (``NameUses``)."""

from __future__ import annotations

from typing import Any

import libcst as cst

__all__ = ["BlockWalk", "NameUses"]


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


_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


class NameUses(cst.CSTVisitor):
    """Each use of a name of ``made`` (the containers one desugaring made), with the
    nodes above it; a subclass's ``check(name, parent)`` refuses, located, a use it
    cannot follow. An attribute's or a keyword's own name (``obj.acc``, ``f(acc=...)``)
    is another name and is not checked."""

    LOOPS: tuple[type, ...] = (cst.For,)  # (whose iterable may be the container)

    def __init__(self, made: dict[str, Any]) -> None:
        self.made = made
        self.parents: list[Any] = []

    def on_visit(self, node: Any) -> bool:
        if isinstance(node, cst.Name) and node.value in self.made:
            parent = self.parents[-1] if self.parents else None
            if not (isinstance(parent, cst.Attribute) and parent.attr is node or isinstance(
                    parent, cst.Arg) and parent.keyword is node):
                self.check(node, parent)
        self.parents.append(node)
        return True

    def on_leave(self, original_node: Any) -> None:
        self.parents.pop()

    def check(self, name: cst.Name, parent: Any) -> None:
        """Refuse this use of ``name`` (under ``parent``) if it is not one to follow."""

    def nested(self) -> bool:
        """Is the use inside a nested function, lambda or class?"""
        return any(isinstance(p, _SCOPES) for p in self.parents)

    def in_place(self, name: cst.Name, parent: Any) -> bool:
        """Is the use a read where it stands: an item read or write, the left side of
        an assignment, an ``in`` test, a loop's iterable, an argument of a call
        ``reader(func)`` says only reads it?"""
        return isinstance(parent, cst.Subscript) and parent.value is name or (
            isinstance(parent, cst.AssignTarget) and parent.target is name) or (
            isinstance(parent, cst.ComparisonTarget) and isinstance(
                parent.operator, (cst.In, cst.NotIn)) and parent.comparator is name) or (
            isinstance(parent, self.LOOPS) and parent.iter is name) or (
            isinstance(parent, cst.Arg) and len(self.parents) > 1 and isinstance(
                self.parents[-2], cst.Call) and self.reader(self.parents[-2].func))

    def reader(self, func: Any) -> bool:
        """Does a call of ``func`` only read its argument?"""
        return False
