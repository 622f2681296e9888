"""Parameters whose Python type the function tests: ``isinstance(scale, int)``,
``type(x) is float``, ``isinstance(p, dict)``.

Python decides such a test by the type of the value the caller passes, so s2s
decides it when it transforms the function for a call: the type is part of the
call's signature (``api/callables.py``'s ``PerFunctionArgs`` keys its transforms
by it, so ``f(x, 2)`` and ``f(x, 2.0)`` each get their own code), the parameter
carries it (``ArgType``) and the test is a constant there
(``bound_params.type_test``), whose ``if`` keeps one branch.  A callee's test is
decided per call site the same way, from what the call passes (``functions.py``).

Read with ``ast`` (no libcst): ``import s2s`` loads this through ``api/callables``.
"""

from __future__ import annotations

import ast
import builtins
import operator
import weakref
from typing import Any

from .. import syntax
from .synthesize import BOUND, BoundType


class ArgType:
    """In ``synthesize.BOUND``: a parameter whose value at this call is of ``cls``
    (its type tests decided for that type)."""

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def key(self) -> Any:
        return ("type", self.cls)


def type_tested(fn: Any) -> frozenset[str]:
    """The names ``fn``'s body tests the type of (``isinstance(name, ...)``,
    ``type(name)``), read once per code object; empty where there is no source."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return frozenset()
    found = _TESTED.get(code)
    if found is None:
        found = _TESTED[code] = frozenset(_read(fn))
    # (an adapter s2s wrote for a call passing a nested tuple its callee tests the
    # items of: planned for that structure again where emitted code is read again)
    return found | getattr(fn, "__s2s_structured__", frozenset())


_TESTED: "weakref.WeakKeyDictionary[Any, frozenset[str]]" = weakref.WeakKeyDictionary()


def _read(fn: Any) -> set[str]:
    defined = syntax.function_node(fn)
    if defined is None:
        return set()
    out = set()
    # (`type(self)(v, self.b)`: the class called, a new object of it; no test)
    made = {id(node.func) for node in ast.walk(defined) if isinstance(node, ast.Call)}
    for node in ast.walk(defined):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
                node.func.id in ("isinstance", "type")) and node.args and (
                isinstance(node.args[0], ast.Name)) and id(node) not in made:
            out.add(node.args[0].id)
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Subscript) and (
                isinstance(node.iter.slice, ast.Slice)):  # (`for op in ops[:k]`: an int
            out |= {b.id for b in (node.iter.slice.lower, node.iter.slice.upper,  # k, or
                                   node.iter.slice.step)  # Python's TypeError, per call)
                    if isinstance(b, ast.Name)}
    return out


_COMPARE = {ast.Is: operator.is_, ast.IsNot: operator.is_not, ast.Eq: operator.eq,
            ast.NotEq: operator.ne, ast.In: lambda a, b: a in b,
            ast.NotIn: lambda a, b: a not in b}


def decide_in_ast(node: ast.FunctionDef, fn: Any) -> bool:
    """The type tests of ``fn``'s parameters whose types this call fixed (``fn`` a
    copy carrying them, ``synthesize.BOUND``) replaced by their truth in ``node``
    (``fn``'s parsed ``def``), as the JAX backend runs the user's own text; True when
    one was (a parameter the body rebinds is left as it is)."""
    bound = getattr(fn, BOUND, None) or {}
    known = {k: v.cls for k, v in bound.items() if isinstance(v, (ArgType, BoundType))}
    rebound = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
               and not isinstance(n.ctx, ast.Load)}
    known = {k: v for k, v in known.items() if k not in rebound}
    if not known:
        return False
    done = [False]

    def tested(call: Any, builtin: str, nargs: int) -> Any:
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                and call.func.id == builtin and len(call.args) == nargs
                and not call.keywords and isinstance(call.args[0], ast.Name)
                and call.args[0].id in known and builtin not in rebound):
            return None
        return known[call.args[0].id]

    def value(expr: Any) -> Any:
        if not all(isinstance(e, (ast.Name, ast.Attribute, ast.Tuple, ast.Load))
                   for e in ast.walk(expr)):
            return _UNKNOWN
        try:
            return eval(compile(ast.Expression(expr), "<s2s>", "eval"),  # noqa: S307
                        {"__builtins__": builtins, **fn.__globals__})
        except Exception:  # noqa: BLE001 - not decided: the test runs as written
            return _UNKNOWN

    class Decide(ast.NodeTransformer):
        def visit_Call(self, call: ast.Call) -> Any:
            self.generic_visit(call)
            cls = tested(call, "isinstance", 2)
            kinds = _UNKNOWN if cls is None else value(call.args[1])
            if kinds is _UNKNOWN:
                return call
            try:
                truth = issubclass(cls, kinds)
            except TypeError:
                return call
            done[0] = True
            return ast.copy_location(ast.Constant(truth), call)

        def visit_Compare(self, comp: ast.Compare) -> Any:
            self.generic_visit(comp)
            cls = tested(comp.left, "type", 1)
            compare = _COMPARE.get(type(comp.ops[0])) if len(comp.ops) == 1 else None
            other = _UNKNOWN if cls is None or compare is None else value(
                comp.comparators[0])
            if other is _UNKNOWN:
                return comp
            done[0] = True
            return ast.copy_location(ast.Constant(bool(compare(cls, other))), comp)

        def visit_If(self, stmt: ast.If) -> Any:
            self.generic_visit(stmt)
            if not isinstance(stmt.test, ast.Constant) or not done[0]:
                return stmt
            return stmt.body if stmt.test.value else stmt.orelse

        def visit_IfExp(self, expr: ast.IfExp) -> Any:
            self.generic_visit(expr)
            if not isinstance(expr.test, ast.Constant) or not done[0]:
                return expr
            return expr.body if expr.test.value else expr.orelse

    Decide().visit(node)
    for block in ast.walk(node):  # (a block left empty by a folded `if`)
        if getattr(block, "body", None) == []:
            block.body = [ast.Pass()]
    return done[0]


_UNKNOWN = object()
