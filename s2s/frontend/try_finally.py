"""``try: A`` ``finally: B`` with nothing to catch, rewritten as ``A`` then ``B``.

When ``A`` finishes, Python runs ``B`` next: the same statements in the same order.
Only where ``A`` cannot leave early (no ``return``, ``break``, ``continue`` or
``raise`` in it, which would run ``B`` on the way out) and the ``try`` has no
``except`` or ``else``; any other ``try`` stays, and the lowerer refuses it at its
line.  When ``A`` raises, the exception reaches the caller as it would, without
``B``'s effects (the only difference: ``B`` has no value to give anyway).
"""

from __future__ import annotations

from typing import Any, Callable

import libcst as cst


class TryFinally(cst.CSTTransformer):
    """Flattens each such ``try`` of a function's body (not in nested functions)."""

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
            self.alias(new, original)  # (a rebuilt node keeps its position)
        return new

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_Try(self, original: cst.Try, updated: cst.Try) -> Any:
        if updated.handlers or updated.orelse is not None or updated.finalbody is None \
                or _leaves(updated.body):
            return updated
        return cst.FlattenSentinel(list(updated.body.body) + list(updated.finalbody.body.body))


def _leaves(body: Any) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, n: Any) -> bool:
            if isinstance(n, (cst.Return, cst.Break, cst.Continue, cst.Raise)):
                found.append(n)
            return not isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda))

    body.visit(Finder())
    return bool(found)
