"""``if test: raise Error(...)`` checks whose test is a constant of this call (issue 27).

A check kept as written (frontend/kept.py) reads its operands when it runs; once the
loops over constants and containers are unrolled (ir/unroll.py) some of them are
constants, ``for n in (1, 2, 3): if n == 0: raise TypeError(...)`` emitted as ``if
3 == 0: raise TypeError(...)``.  A test of literals alone is decided now: false, the
check is dropped (it never raises); true where it runs at every call (not under an
``if`` of the code), the call would always raise, and s2s says so at the user's line
(JAX raises it while tracing); true under an ``if``, it stays, to raise when that
branch runs.  s2s's own checks (an unpacked value's length, a function a loop bound)
are left to the passes that settle them (``settled_widths``: an unpacked value's length
known now, Python's ValueError now where it is wrong)."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

from .. import syntax
from ..errors import TransformError, UnpackError
from .nodes import Const, For, If, Let, Stmt

# the nodes of a test of literals alone (no name, call, attribute or subscript)
_LITERAL_NODES = (ast.Expression, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp,
                  ast.BinOp, ast.Tuple, ast.List, ast.Load, ast.cmpop, ast.boolop,
                  ast.operator, ast.unaryop)


def settled_checks(stmts: list[Stmt], nested: bool = False) -> tuple[list[Stmt], bool]:
    """``stmts`` without the checks whose test is false now (and whether any went);
    a check true now at every call is refused (``nested``: under an ``if``)."""
    out: list[Stmt] = []
    changed = False
    for s in stmts:
        if isinstance(s, Let) and s.prim == "kept":
            truth = _constant_test(s)
            if truth is False:
                changed = True
                continue
            if truth is True and not nested:
                raise TransformError(
                    "this check fails at every call: its test is "
                    f"`{_test_text(s)}` here, whatever the function is given, so every "
                    "call would raise", s.loc,
                    "remove the check, or test what the call is given (an argument, "
                    "its shape)")
        elif isinstance(s, If):
            body, a = settled_checks(s.body, True)
            orelse, b = settled_checks(s.orelse, True)
            if a or b:
                s, changed = replace(s, body=body, orelse=orelse), True
        elif isinstance(s, For):
            body, a = settled_checks(s.body, True)  # (one that may run no iteration)
            if a:
                s, changed = replace(s, body=body), True
        out.append(s)
    return out, changed


def _test_text(s: Let) -> str:
    """The test of an ``if test: raise`` check, or of an ``assert test, msg``, its
    operands written in."""
    template, keys = s.params["template"]
    for key, arg in zip(keys, s.args):
        template = template.replace(key, arg.text)  # type: ignore[union-attr]
    if "body" in s.params:
        return template[3:-1] if template.startswith("if ") and template.endswith(":") else ""
    try:
        node = syntax.parse(template).body[0]
    except SyntaxError:
        return ""
    return ast.unparse(node.test) if isinstance(node, ast.Assert) else ""


def _constant_test(s: Let) -> bool | None:
    """The truth of a check's test where it is literals alone (an ``assert``'s test
    negated: true where it fails)."""
    p = s.params
    if p.get("kind") != "check" or p.get("always") or p.get("items") \
            or "width" in p or not all(isinstance(a, Const) for a in s.args):
        return None
    text = _test_text(s)
    try:
        tree = syntax.parse(text, mode="eval")
    except SyntaxError:
        return None
    if not text or not all(isinstance(node, _LITERAL_NODES) for node in ast.walk(tree)):
        return None
    if "body" not in p:
        tree = ast.Expression(ast.UnaryOp(ast.Not(), tree.body))
        ast.fix_missing_locations(tree)
    if any(isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Pow, ast.LShift))
           for node in ast.walk(tree)):
        return None  # (a power of literals could be too large to compute)
    try:
        return bool(eval(compile(tree, "<s2s:check>", "eval"), {"__builtins__": {}}))  # noqa: S307
    except Exception:  # (1 / 0: the check raises what Python raises, when it runs)
        return None


def any_constant_check(stmts: Any) -> bool:
    """Is one of the statements (``walk``'s) a check whose operands are constants?"""
    return any(isinstance(s, Let) and s.prim == "kept" and s.params.get("kind") == "check"
               and all(isinstance(a, Const) for a in s.args) for s in stmts)


def settled_widths(u: Any, stmts: list[Stmt]) -> list[Stmt]:
    """The frontend's checks of an unpacked value's length (frontend/unpacking.py)
    whose length is a constant of this call (a tuple argument's): Python's ValueError
    now, at the user's line, where it is wrong; else the check is dropped."""
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, Let) and s.prim == "kept" and "width" in s.params and \
                isinstance(s.args[0], Const):
            (width, at_least), got = s.params["width"], s.args[0].value
            if got < width or (got != width and not at_least):
                raise UnpackError.of(width, got, s.loc, at_least)
            u.changed = True
            # (a length known now: the value has items, so its check before goes too)
            for k in range(len(out) - 1, max(len(out) - 3, -1), -1):
                if isinstance(out[k], Let) and out[k].prim == "kept" and \
                        out[k].params.get("items"):
                    del out[k]
                    break
            continue
        if isinstance(s, If):
            s = replace(s, body=settled_widths(u, s.body),
                        orelse=settled_widths(u, s.orelse))
        elif isinstance(s, For):
            s = replace(s, body=settled_widths(u, s.body))
        out.append(s)
    return out
