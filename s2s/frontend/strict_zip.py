"""``zip(a, b, strict=True)`` walked by a ``for`` loop (also inside ``enumerate``),
rewritten as a check of the lengths before the loop, then the loop over ``zip(a, b)``::

    if len(b) < len(a):
        raise ValueError("zip() argument 2 is shorter than argument 1")
    if len(b) > len(a):
        raise ValueError("zip() argument 2 is longer than argument 1")
    for u, v in zip(a, b):
        ...

Python's ``zip`` raises that ValueError when the loop reaches the end of the shorter
sequence; the check raises it before the first pass (the only difference: effects of the
passes before it, which the function's result does not see).  Only where the body
cannot leave early (no ``return``, ``break`` or ``raise``: Python would then raise
nothing) and each sequence is a name, an attribute or an item (read twice: a call
would run twice); ``strict=False`` is dropped; any other ``strict=`` stays, and the
lowerer refuses it at its line.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from .loop_else import StatementRewriter
from .try_finally import _leaves


class StrictZip(StatementRewriter):
    """Rewrites each such loop of a function's body (not in nested functions)."""

    def leave_For(self, original: cst.For, updated: cst.For) -> Any:
        outer = updated.iter
        call = outer
        if _called(outer, "enumerate") and outer.args and not outer.args[0].keyword:
            call = outer.args[0].value
        if not _called(call, "zip"):
            return updated
        strict = [a for a in call.args if a.keyword is not None and a.keyword.value == "strict"]
        if len(strict) != 1 or not isinstance(strict[0].value, cst.Name) or strict[
                0].value.value not in ("True", "False"):
            return updated
        seqs = [a.value for a in call.args if a is not strict[0]]
        plain = call.with_changes(args=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                                        if k == len(seqs) - 1 else a
                                        for k, a in enumerate(a for a in call.args
                                                              if a is not strict[0])])
        if strict[0].value.value == "True" and (_leaves(updated.body) or not all(
                isinstance(s, (cst.Name, cst.Attribute, cst.Subscript)) for s in seqs)):
            return updated
        loop = updated.with_changes(iter=plain if call is outer else outer.with_changes(
            args=[outer.args[0].with_changes(value=plain), *outer.args[1:]]))
        if strict[0].value.value == "False" or len(seqs) < 2:
            return loop
        checks = []
        for k, seq in enumerate(seqs[1:], 2):
            for op, word in ((cst.LessThan(), "shorter"), (cst.GreaterThan(), "longer")):
                test = cst.Comparison(_len(seq), [cst.ComparisonTarget(op, _len(seqs[0]))])
                error = cst.Call(cst.Name("ValueError"), [cst.Arg(cst.SimpleString(
                    f'"zip() argument {k} is {word} than argument 1"'))])
                checks.append(cst.If(test, cst.IndentedBlock(
                    [cst.SimpleStatementLine([cst.Raise(error)])])))
        for check in checks:
            self.alias_new(check, original, seqs)
        return cst.FlattenSentinel([*checks, loop])

    def alias_new(self, tree: Any, old: Any, kept: list) -> None:
        """The check's own nodes report the loop's position (the user's sequences
        keep theirs)."""
        alias = self.alias

        class Walk(cst.CSTVisitor):
            def on_visit(self, n: Any) -> bool:
                if any(n is k for k in kept):
                    return False
                alias(n, old)
                return True

        tree.visit(Walk())


def _called(node: Any, name: str) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and (
        node.func.value == name)


def _len(seq: Any) -> cst.Call:
    return cst.Call(cst.Name("len"), [cst.Arg(seq)])
