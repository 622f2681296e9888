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
from libcst.metadata import MetadataWrapper, PositionProvider

from ..errors import TransformError, UnsupportedSyntaxError
from .desugar import leaves_somewhere
from .fnvalues import FnValue
from .source import literal_value, parse_function
from .synthesize import DISPLAY, synthesize

ITEMS = "_s2s_items"
ENDED = "_s2s_ended"
ITEM = "_s2s_item"

# (code, closure values, defaults) -> the list-returning copy, made once
_LISTED: dict[tuple, tuple[Any, types.FunctionType]] = {}


def is_generator(obj: Any) -> bool:
    return isinstance(obj, types.FunctionType) and bool(
        obj.__code__.co_flags & inspect.CO_GENERATOR)


def yields(n: Any, func: Any) -> bool:
    """Does ``func`` name a generator function (run as the list of its items)?"""
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) and isinstance(
            func.value.func, (cst.Name, cst.Attribute)):  # (`Layers(x).__iter__`)
        try:
            cls = n.resolver.resolve_dotted(func.value.func)[0]
        except TransformError:
            return False
        return isinstance(cls, type) and is_generator(inspect.getattr_static(
            cls, func.attr.value, None))
    if not isinstance(func, (cst.Name, cst.Attribute)) or isinstance(func, cst.Name) and (
            func.value in n.local_names and not n.funcs.names_function(func.value)):
        return False
    fv = n.funcs.value_of(func)
    return fv is not None and hasattr(fv.obj, "__s2s_listed__")


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
    body = node.body.visit(_Collect(parsed))  # (the user's nodes: refusals located)
    stmts, ends = _ends_loops(list(body.body))
    stmts[0] = stmts[0].with_changes(leading_lines=[])
    made_list = cst.parse_statement(f"{ITEMS} = []; {ENDED} = False\n" if ends else
                                    f"{ITEMS} = []\n")
    fdef = node.with_changes(body=body.with_changes(body=[made_list, *stmts, cst.parse_statement(
        f"return {ITEMS}\n")]), decorators=[], leading_lines=[])
    text = cst.Module([fdef]).code
    # the list is made on a line of its own just above the body's first line, and the
    # `def` above it: the body keeps the user's line numbers (and errors show them)
    header = [line.strip().startswith(f"{ITEMS} = []") for line in text.split("\n")].index(
        True)
    display = DISPLAY.get(parsed.filename) or (parsed.filename, parsed.lines,
                                                parsed.col_offset)  # (a nested def's: the user's)
    start = max(first_line - header - 1, 1)
    display = display[:3] + (_moved(fdef, parsed, start),)
    made = synthesize(text, fn.__name__, fn.__globals__, f"lifted-{fn.__name__}", start,
                      display, cells=cells or None)
    made.__defaults__, made.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    made.__qualname__ = fn.__qualname__
    made.__s2s_listed__ = fn  # type: ignore[attr-defined]
    _LISTED[key] = (fn, made)
    return made


def _moved(fdef: Any, parsed: Any, start: int) -> dict:
    """``{line: (the user's line, ((column, shift), ...))}`` for the lines of the copy
    ``fdef`` (its ``def`` on the file's line ``start``) whose text stands elsewhere than
    the user's (``source.py`` moves positions back): the user's nodes it holds, where
    the copy writes them, against where the user wrote them.  A line holding none (a
    flag the copy adds) reads as the line above it."""
    wrapper = MetadataWrapper(cst.Module([fdef]), unsafe_skip_copy=True)
    found: dict[int, dict[int, tuple[int, int]]] = {}
    for node, at in wrapper.resolve(PositionProvider).items():
        mine = parsed.positions.get(node)
        if mine is not None:
            line = start + at.start.line - 1
            found.setdefault(line, {})[at.start.column] = (
                mine.start.line + parsed.line_offset, at.start.column - mine.start.column)
    out: dict[int, tuple[int, tuple]] = {}
    user = None
    for line in range(start, start + len(cst.Module([fdef]).code.split("\n"))):
        nodes = found.get(line)
        if not nodes:
            if user is not None:
                out[line] = (user, ())
            continue
        user = min(u for u, _ in nodes.values())
        shifts = tuple(sorted(((c, d) for c, (_, d) in nodes.items()), reverse=True))
        if user != line or any(d for _, d in shifts):
            out[line] = (user, shifts)
    return out


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

    def visit_While(self, node: cst.While) -> bool:
        test = node.test
        if isinstance(test, cst.Name) and test.value == "True" or isinstance(
                test, cst.Integer) and literal_value(test.value):
            raise _refused(self.parsed, node, "a generator that never ends (`while "
                           f"{test.value}:`) has no list of items: s2s runs a generator "
                           "to its end before its first item is read",
                           "bound it (`for i in range(n):`, with the count the "
                           "function reads: `zip(range(len(x)), x)`, `enumerate(x)`)")
        return True

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

    def leave_SimpleStatementLine(self, original: Any, updated: Any) -> Any:
        # `yield from gen(x)` (a list grown in a loop, an array's rows): one line,
        # `for _s2s_item in gen(x): _s2s_items.append(_s2s_item)`; a literal or a
        # comprehension is `_s2s_items.extend(...)` (its items known one by one)
        if len(original.body) != 1 or not isinstance(original.body[0], cst.Expr):
            return updated
        value = original.body[0].value
        if not (isinstance(value, cst.Yield) and isinstance(value.value, cst.From)) or (
                isinstance(value.value.item, (cst.List, cst.Tuple, cst.ListComp,
                                              cst.GeneratorExp))):
            return updated
        item = updated.body[0].value.args[0].value  # (`_s2s_items.extend(it)`'s `it`)
        line = cst.SimpleStatementLine([cst.Expr(_items_call("append", cst.Name(ITEM)))])
        return cst.For(cst.Name(ITEM), item, cst.SimpleStatementSuite(
            line.body, leading_whitespace=cst.SimpleWhitespace(" ")),
            leading_lines=updated.leading_lines)

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


def _ends_loops(stmts: list[Any]) -> tuple[list[Any], bool]:
    """A ``return`` inside a loop of the generator (``if v > c: return``) ends it: the
    loop is left by ``break`` with a flag set (out of each loop around it), and what
    follows the loop runs under ``if not _s2s_ended:``, so the copy keeps its one
    return at its end.  (Returning the list from inside the loop would read it where
    the loop still appends to it.)  Also whether any loop here may end it."""
    out: list[Any] = []
    for k, stmt in enumerate(stmts):
        if isinstance(stmt, (cst.For, cst.While)) and leaves_somewhere(stmt):
            out.append(_EndLoop().transform(stmt))
        elif isinstance(stmt, cst.If) and leaves_somewhere(stmt):
            body, ends = _ends_loops(list(stmt.body.body))
            orelse, ends_else = _ends_else(stmt.orelse)
            out.append(stmt.with_changes(body=stmt.body.with_changes(body=body),
                                         orelse=orelse))
            if not (ends or ends_else):
                continue
        else:
            out.append(stmt)
            continue
        rest = _ends_loops(stmts[k + 1:])[0]
        if rest:
            out.append(cst.If(cst.parse_expression(f"not {ENDED}"),
                              cst.IndentedBlock(rest)))
        return out, True
    return out, False


def _ends_else(orelse: Any) -> tuple[Any, bool]:
    if isinstance(orelse, cst.If):
        made, ends = _ends_loops([orelse])
        return made[0], ends
    if isinstance(orelse, cst.Else):
        body, ends = _ends_loops(list(orelse.body.body))
        return orelse.with_changes(body=orelse.body.with_changes(body=body)), ends
    return orelse, False


def _line(text: str) -> Any:
    return cst.parse_statement(text)


class _EndLoop(cst.CSTTransformer):
    """In one loop: ``return`` -> ``_s2s_ended = True; break``; after an inner loop
    that may end the generator, ``if _s2s_ended: break``."""

    def transform(self, loop: Any) -> Any:
        return loop.with_changes(body=loop.body.visit(self))

    def visit_FunctionDef(self, node: Any) -> bool:
        return False

    def visit_For(self, node: Any) -> bool:
        return False  # (an inner loop: transformed on its own, below)

    visit_While = visit_For

    def leave_SimpleStatementLine(self, original: Any, updated: Any) -> Any:
        # (also `if i >= n: return`, a statement on the `if`'s line)
        if not any(isinstance(s, cst.Return) for s in updated.body):
            return updated
        body = []
        for small in updated.body:
            if isinstance(small, cst.Return):
                body += [cst.parse_statement(f"{ENDED} = True").body[0], cst.Break()]
                break  # (what follows a return never runs)
            body.append(small)
        return updated.with_changes(body=body)

    def leave_For(self, original: Any, updated: Any) -> Any:
        if not leaves_somewhere(original):
            return updated
        return cst.FlattenSentinel([_EndLoop().transform(updated),
                                    _line(f"if {ENDED}: break\n")])

    leave_While = leave_For
    leave_SimpleStatementSuite = leave_SimpleStatementLine


def _items_call(method: str, value: Any) -> cst.Call:
    return cst.Call(cst.Attribute(cst.Name(ITEMS), cst.Name(method)), [cst.Arg(value)])


def function_value(obj: Any, text: str) -> FnValue:
    """A Python function of the user's (or an object's method) as a function value; a
    generator function the code consumes is the copy returning the list of its items
    (a method's: bound to the same object)."""
    if isinstance(obj, types.MethodType) and is_generator(obj.__func__):
        return FnValue(types.MethodType(listed(obj.__func__), obj.__self__), text)
    return FnValue(listed(obj), text) if is_generator(obj) else FnValue(obj, text,
                                                                         spelled=True)


def consumed(fv: FnValue) -> FnValue:
    """A nested generator ``def`` lifted out of the function (``functions.lift``): its
    copy returning the list of its items."""
    return replace(fv, obj=listed(fv.obj)) if is_generator(fv.obj) else fv
