"""An ``if``/``elif`` chain whose ``else`` only raises, or whose first branch only
raises and has an ``else``, rewritten as the check it means and the chain without it::

    if kind == "huber":              if not ((kind == "huber") or (kind == "l2")):
        y = r ** 2                       raise ValueError(kind)
    elif kind == "l2":               if kind == "huber":
        y = r ** 3                       y = r ** 2
    else:                            else:
        raise ValueError(kind)           y = r ** 3

    if x.ndim != 1:                  if x.ndim != 1:
        raise ValueError("1-d")          raise ValueError("1-d")
    else:                            if True:
        y = x * 2                        y = x * 2

The check is an ``if test: raise ...`` that ``kept.py`` keeps as written (checked with
real values; under vmap it fires if it fires for any example); the last test before a
raising ``else`` becomes the chain's ``else`` (the check makes it true there), so a name
every other branch assigns is assigned on every path, as Python's own reading of the
chain says.  The check reads the tests once more before the chain does (``or``
short-circuits as the chain does), so only tests whose second reading gives the same
value are rewritten: names, attributes, constants, operators, subscripts and calls of
``len``/``isinstance`` or of ``np.``/``math.`` functions; any other ``raise`` in a
branch stays, and the lowerer refuses it at its line.  Match statements were already
rewritten so (``match_case.py``: a last ``case _:`` that raises).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from .loop_else import StatementRewriter

# calls a test may hold: their second reading gives the first's value
_PURE_ROOTS = frozenset({"np", "numpy", "math"})
_PURE_BUILTINS = frozenset({"len", "isinstance"})
_PLAIN = (cst.Name, cst.Attribute, cst.BaseNumber, cst.BaseString,
          cst.BaseFormattedStringContent, cst.Comparison,
          cst.ComparisonTarget, cst.BooleanOperation, cst.UnaryOperation,
          cst.BinaryOperation, cst.Subscript, cst.SubscriptElement, cst.Index,
          cst.Slice, cst.Tuple, cst.List, cst.Element, cst.Arg, cst.Call,
          cst.BaseCompOp, cst.BaseBooleanOp, cst.BaseUnaryOp, cst.BaseBinaryOp,
          cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
          cst.Comma, cst.Colon, cst.Dot, cst.BaseParenthesizableWhitespace, cst.Comment,
          cst.Newline, cst.EmptyLine, cst.AssignEqual, cst.Ellipsis)


class RaiseBranches(StatementRewriter):
    """Rewrites each chain of the forms above in a function's body (``elif``s are
    parts of their chain: only a whole chain, in a statement's place, is rewritten)."""

    def __init__(self, alias: Any) -> None:
        super().__init__(alias)
        self.elifs: set[int] = set()

    def visit_If(self, node: cst.If) -> bool:
        if isinstance(node.orelse, cst.If):
            self.elifs.add(id(node.orelse))
        return True

    def leave_If(self, original: cst.If, updated: cst.If) -> Any:
        if id(original) in self.elifs:
            return updated
        out = self._split(updated, original)
        return updated if out is None else cst.FlattenSentinel(out)

    def _split(self, chain: cst.If, original: cst.If) -> list[Any] | None:
        """The statements ``chain`` means, its raising branches as checks; None where
        it has none of the forms above."""
        ifs = [chain]
        while isinstance(ifs[-1].orelse, cst.If):
            ifs.append(ifs[-1].orelse)
        last = ifs[-1].orelse
        made: list[Any] = []  # (the synthesized nodes: the user's keep their positions)
        if only_raises(chain.body) and chain.orelse is not None:
            # (`if t: raise` then the rest: the same tests, read once each)
            guard, rest = chain.with_changes(orelse=None), chain.orelse
        elif isinstance(last, cst.Else) and only_raises(last.body) and all(
                _rereadable(i.test) for i in ifs):
            test = _parens(ifs[0].test)
            for one in ifs[1:]:
                test = cst.BooleanOperation(test, cst.Or(), _parens(one.test))
                made.append(test)
            guard = cst.If(cst.UnaryOperation(cst.Not(), _parens(test)), last.body)
            made.append(guard.test)
            rest = cst.Else(ifs[-1].body)
            for one in reversed(ifs[:-1]):
                rest = one.with_changes(orelse=rest)
                made.append(rest)
        else:
            return None
        if isinstance(rest, cst.Else):
            rest = cst.If(cst.Name("True"), rest.body)
            made += [rest, rest.test]
        for node in (guard, *made):
            self.alias(node, original)
        return [guard, *(self._split(rest, original) or [rest])]


def only_raises(body: Any) -> bool:
    """``body`` is one ``raise Error(...)`` (what ``kept.raise_only`` keeps)."""
    lines = body.body if isinstance(body, cst.IndentedBlock) else ()
    return len(lines) == 1 and isinstance(lines[0], cst.SimpleStatementLine) and len(
        lines[0].body) == 1 and isinstance(lines[0].body[0], cst.Raise) and \
        lines[0].body[0].exc is not None


def _rereadable(test: Any) -> bool:
    """Whether reading ``test`` again gives the value of its first reading (see the
    module's docstring)."""
    ok = True

    class Walk(cst.CSTVisitor):
        def on_visit(self, n: Any) -> bool:
            nonlocal ok
            if not isinstance(n, _PLAIN) or (isinstance(n, cst.Call) and not _pure(n.func)):
                ok = False
            return ok

    test.visit(Walk())
    return ok


def _pure(func: Any) -> bool:
    if isinstance(func, cst.Name):
        return func.value in _PURE_BUILTINS
    root = func
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(func, cst.Attribute) and isinstance(root, cst.Name) and \
        root.value in _PURE_ROOTS and "random" not in cst.Module([]).code_for_node(func)


def _parens(node: Any) -> Any:
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
