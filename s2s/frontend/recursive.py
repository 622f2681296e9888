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

import threading
from typing import Any, Callable

import libcst as cst

from .fnvalues import FnSeq, FnValue
from .nested_types import recursion_depth
from .synthesize import PARTIAL
from .typetests import type_tested


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


# ---- a function calling itself through a function value it is given -----------------
# (``def r(y, k): ... apply_at(r, y, k + 1)`` where emitted code, transformed again,
# enters at ``apply_at``: its IR for the plan that passes ``r`` is being built when
# ``r``'s body calls it again with the same plan)

_PLANNING = threading.local()  # (per thread: the background specializer lowers too)


class RecursivePlanned:
    """A call of a callee whose IR for this plan is still being built (it calls
    itself, through the function values it is given): its IR is looked up once it is
    complete, as ``normalize.Recursive``'s is."""

    def __init__(self, fn: Any, params: list[str], again: Callable[[], Any]) -> None:
        self.fn, self.name, self.params = fn, fn.__name__, list(params)
        self.kwonly: list[str] = []
        self.defaults: dict[str, Any] = {}
        self.free: dict[str, Any] = {}  # (the outer call's, once complete)
        self.namespace: dict[str, Any] = {}
        self._again = again

    @property
    def function(self) -> Any:
        return self._again()


def planning(fn: Any, key: Any, plan: Any, run: Callable[[], Any],
             again: Callable[[], Any]) -> Any:
    """``run()`` (the IR of ``fn`` for ``plan``), or a ``RecursivePlanned`` where that
    IR is being built already on this thread (``key``: the plan's)."""
    table = _PLANNING.__dict__.setdefault("keys", {})
    if key in table:
        return RecursivePlanned(fn, table[key].params, again)
    table[key] = plan
    try:
        return run()
    finally:
        table.pop(key, None)


def given_functions(n: Any, fn: Any, args: list[Any], kwargs: dict[str, Any],
                    node: Any) -> bool:
    """A recursive call (``fn`` is being normalized) given function values: planned,
    its plan's IR the one being built (``planning``), up to a depth where the
    functions it passes keep changing (then refused, as it was); or given a tuple or
    list whose structure is known, to a parameter whose type it tests: planned for
    that structure (``nested_types.py``), so the recursion ends with it."""
    given = any(isinstance(v, (FnValue, FnSeq)) for v in (*args, *kwargs.values()))
    if given and n.stack.count(fn) < 8:
        return True
    return bool(type_tested(fn)) and recursion_depth(n, fn, args, kwargs, node)
