"""A recursive nested ``def`` reading the enclosing function's values
(``def r(y, k): ... r(np.sin(y) * a, k - 1)``), which s2s lifts out of the function
(``functions.py``): its own calls pass what it reads on by name (``r(y, k - 1, a=a)``),
so every level reads the values the outermost call was given, as the closure's levels
read one cell.  Used as a value in its own body (``f = r``, ``apply(r, y)``), it is the
same closure: ``_s2s_partial(r, a=a)`` there, the lifted function with what this
level reads bound by name (``_s2s_partial`` is ``functools.partial``, a cell of the
maker the lifted function is defined in: ``synthesize.py``).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from .synthesize import PARTIAL


def passing_captured(node: cst.FunctionDef, captured: list[str]) -> cst.FunctionDef:
    """``node`` whose calls of itself pass ``captured`` by name, and whose other uses
    of its name bind them (text added on the same lines: lines keep their places)."""
    name = node.name.value
    calls: set[Any] = set()
    values: set[Any] = set()

    class Calls(cst.CSTVisitor):
        def visit_Call(self, c: cst.Call) -> None:
            if isinstance(c.func, cst.Name) and c.func.value == name:
                calls.add(c.func)

    class Uses(cst.CSTVisitor):
        def visit_Name(self, m: cst.Name) -> None:
            if m.value == name and m not in calls:
                values.add(m)

        def visit_Attribute(self, a: cst.Attribute) -> bool:
            a.value.visit(self)
            return False

        def visit_Arg(self, a: cst.Arg) -> bool:
            a.value.visit(self)
            return False

        def visit_AssignTarget(self, t: cst.AssignTarget) -> bool:
            return False  # (it binds the name: no use of the function)

    node.body.visit(Calls())
    node.body.visit(Uses())
    keywords = [_keyword(m) for m in captured]

    class Pass(cst.CSTTransformer):
        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
            if original.func not in calls:
                return updated
            given = {a.keyword.value for a in updated.args if a.keyword is not None}
            extra = [_keyword(m) for m in captured if m not in given]
            args = list(updated.args)
            if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
                args[-1] = args[-1].with_changes(comma=cst.Comma(
                    whitespace_after=cst.SimpleWhitespace(" ")))
            return updated.with_changes(args=args + extra)

        def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
            if original not in values:
                return updated
            return cst.Call(cst.Name(PARTIAL), [cst.Arg(cst.Name(name)), *keywords])

    return node.visit(Pass())


def _keyword(m: str) -> cst.Arg:
    return cst.Arg(cst.Name(m), keyword=cst.Name(m), equal=cst.AssignEqual(
        cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
