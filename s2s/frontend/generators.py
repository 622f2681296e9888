"""A generator function the transformed function consumes (``for a, b in pairs(xs):``,
``sum(a * b for a, b in pairs(xs))``, ``list(pairs(xs))``) runs as the function that
collects what it yields into a list and returns it::

    def pairs(xs):                         def pairs(xs):
        for i in range(len(xs) - 1):  ->       _s2s_items = []
            yield xs[i], xs[i + 1]             for i in range(len(xs) - 1):
                                                   _s2s_items.append((xs[i], xs[i + 1]))
                                               return _s2s_items

A list grown in a loop is what every transform already handles, and its length is the
call's (``len(xs) - 1``).  The consumer sees the same items in the same order; what
differs from Python is only *when* the generator's body runs: all of it before the
consumer's first item (a ``print`` in either shows that order), which is also what
makes it a value a derivative can flow through.  A generator that never ends, or one
whose ``yield`` is an expression (``v = yield x``, the ``send`` protocol), has no such
list and stays refused at its line.  A generator function given to a transform itself
stays refused, as JAX refuses it (it returns a generator, not an array).

The copy is compiled as a lifted function (``synthesize.py``), its lines at the user's
lines, so errors in it point there and ``s2s.source`` lists it after the emitted code.
"""

from __future__ import annotations

import inspect
import types
from dataclasses import replace
from typing import Any

import libcst as cst

from ..errors import UnsupportedSyntaxError
from .fnvalues import FnValue
from .source import parse_function
from .synthesize import DISPLAY, synthesize

ITEMS = "_s2s_items"

# (code, closure values, defaults) -> the list-returning copy, made once
_LISTED: dict[tuple, tuple[Any, types.FunctionType]] = {}


def is_generator(obj: Any) -> bool:
    return isinstance(obj, types.FunctionType) and bool(
        obj.__code__.co_flags & inspect.CO_GENERATOR)


def listed(fn: types.FunctionType) -> types.FunctionType:
    """The copy of the generator function ``fn`` that returns the list of what it
    yields (see the module's note)."""
    cells = {name: cell.cell_contents for name, cell in zip(
        fn.__code__.co_freevars, fn.__closure__ or ())}
    key = (fn.__code__, tuple(id(v) for v in cells.values()), id(fn.__defaults__),
           id(fn.__kwdefaults__))
    hit = _LISTED.get(key)
    if hit is not None and hit[0] is fn:
        return hit[1]
    parsed = parse_function(fn)
    node = parsed.node
    if not isinstance(node, cst.FunctionDef):
        raise _refused(parsed, node, "a generator here is not a `def`")
    if node.decorators:
        raise _refused(parsed, node, "a decorated generator function is not supported",
                       "call the undecorated function")
    first_line = parsed.loc(node.body.body[0]).line  # (the user's node: its position)
    body = node.body.visit(_Collect(parsed))
    stmts = list(body.body)
    stmts[0] = stmts[0].with_changes(leading_lines=[])
    made_list = cst.parse_statement(f"{ITEMS} = []\n")
    fdef = node.with_changes(body=body.with_changes(body=[made_list, *stmts, cst.parse_statement(
        f"return {ITEMS}\n")]), decorators=[], leading_lines=[])
    text = cst.Module([fdef]).code
    # the list is made on a line of its own just above the body's first line, and the
    # `def` above it: the body keeps the user's line numbers (and errors show them)
    header = [line.strip() for line in text.split("\n")].index(f"{ITEMS} = []")
    display = DISPLAY.get(parsed.filename) or (parsed.filename, parsed.lines,
                                                parsed.col_offset)  # (a nested def's: the user's)
    made = synthesize(text, fn.__name__, fn.__globals__, f"lifted-{fn.__name__}",
                      max(first_line - header - 1, 1), display, cells=cells or None)
    made.__defaults__, made.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    made.__qualname__ = fn.__qualname__
    made.__s2s_listed__ = fn  # type: ignore[attr-defined]
    _LISTED[key] = (fn, made)
    return made


def _refused(parsed: Any, node: Any, what: str,
             hint: str = "return a list of the values instead") -> UnsupportedSyntaxError:
    return UnsupportedSyntaxError(what, parsed.loc(node), hint)


class _Collect(cst.CSTTransformer):
    """``yield v`` -> ``_s2s_items.append(v)``, ``return`` -> ``return _s2s_items``;
    nested functions and lambdas keep theirs (their own scopes)."""

    def __init__(self, parsed: Any) -> None:
        self.parsed = parsed

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Yield(self, node: cst.Yield) -> bool:
        raise _refused(self.parsed, node, "`yield` used as a value (`v = yield x`, the "
                       "`send` protocol) has no list of items s2s can collect",
                       "write `yield x` as a statement of its own")

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr) -> Any:
        value = original.value
        if not isinstance(value, cst.Yield):
            return updated
        if isinstance(value.value, cst.From):  # (`yield from it`: each of its items)
            return updated.with_changes(value=_items_call("extend", value.value.item))
        item = value.value if value.value is not None else cst.Name("None")
        if isinstance(item, cst.Tuple) and not item.lpar:  # (`yield a, b`: one item)
            item = item.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return updated.with_changes(value=_items_call("append", item))

    def visit_Expr(self, node: cst.Expr) -> bool:
        if isinstance(node.value, cst.Yield):
            inner = node.value.value
            inner = inner.item if isinstance(inner, cst.From) else inner
            if inner is not None:
                inner.visit(self)  # (a yield inside the yielded value: refused)
            return False
        return True

    def leave_Return(self, original: cst.Return, updated: cst.Return) -> cst.Return:
        # (a generator's `return v` ends it; `v` is StopIteration's, which a consumer
        # ignores)
        return updated.with_changes(value=cst.Name(ITEMS),
                                    whitespace_after_return=cst.SimpleWhitespace(" "))


def _items_call(method: str, value: Any) -> cst.Call:
    return cst.Call(cst.Attribute(cst.Name(ITEMS), cst.Name(method)), [cst.Arg(value)])


def function_value(obj: Any, text: str) -> FnValue:
    """A Python function of the user's as a function value; a generator function the
    code consumes is the copy returning the list of its items."""
    return FnValue(listed(obj), text) if is_generator(obj) else FnValue(obj, text,
                                                                         spelled=True)


def consumed(fv: FnValue) -> FnValue:
    """A nested generator ``def`` lifted out of the function (``functions.lift``): its
    copy returning the list of its items."""
    return replace(fv, obj=listed(fv.obj)) if is_generator(fv.obj) else fv
