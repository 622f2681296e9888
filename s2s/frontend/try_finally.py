"""``try: A`` ``finally: B`` with nothing to catch, rewritten as ``A`` then ``B``; and
``try: pass`` (with any ``except``, ``else`` and ``finally``) as its ``else`` then its
``finally`` (nothing raises, so no ``except`` runs), unless the ``else`` can leave early
while a ``finally`` follows.

When ``A`` finishes, Python runs ``B`` next: the same statements in the same order.
Only where ``A`` cannot leave early (no ``return``, ``break``, ``continue`` or
``raise`` in it, which would run ``B`` on the way out) and the ``try`` has no
``except`` or ``else``; any other ``try`` stays, and the lowerer refuses it at its
line.  When ``A`` raises, the exception reaches the caller as it would, without
``B``'s effects (the only difference: ``B`` has no value to give anyway).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from .loop_else import StatementRewriter


class TryFinally(StatementRewriter):
    """Flattens each such ``try`` of a function's body (not in nested functions)."""

    def leave_Try(self, original: cst.Try, updated: cst.Try) -> Any:
        if _nothing(updated.body) and not (updated.finalbody is not None and (
                updated.orelse is not None and _leaves(updated.orelse.body))):
            # `try: pass`: nothing raises, so no `except` runs; `else`, then `finally`
            kept = [*(updated.orelse.body.body if updated.orelse is not None else ()),
                    *(updated.finalbody.body.body if updated.finalbody is not None else ())]
            return cst.FlattenSentinel(kept or [cst.SimpleStatementLine([cst.Pass()])])
        if updated.handlers or updated.orelse is not None or updated.finalbody is None \
                or _leaves(updated.body):
            return updated
        return cst.FlattenSentinel(list(updated.body.body) + list(updated.finalbody.body.body))


def _nothing(body: Any) -> bool:
    """A block of ``pass`` statements only (a docstring-free ``...`` too)."""
    return all(isinstance(line, cst.SimpleStatementLine) and all(
        isinstance(s, cst.Pass) or isinstance(s, cst.Expr) and isinstance(s.value, cst.Ellipsis)
        for s in line.body) for line in body.body)


def _leaves(body: Any) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, n: Any) -> bool:
            if isinstance(n, (cst.Return, cst.Break, cst.Continue, cst.Raise)):
                found.append(n)
            return not isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda))

    body.visit(Finder())
    return bool(found)
