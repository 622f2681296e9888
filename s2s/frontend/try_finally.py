"""``try: A`` ``finally: B`` with nothing to catch, rewritten as ``A`` then ``B``.

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
