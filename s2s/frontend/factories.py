"""Function factories: a function of yours whose body defines a nested function and
returns it (``def make_loss(scale, power=2): def loss(v): ...; return loss``), or
returns a lambda, called inside the transformed function (``f = make_loss(2.0)``,
``[make_loss(s) for s in (1.0, 0.5)]``).

The call denotes the nested function with the factory's parameters bound, as Python's
closure holds them: s2s writes the nested function once, at module level, with the
factory's parameters as extra trailing parameters (``def loss(v, scale=None,
power=None)``), and the call's value is that function with them given by keyword, as
a ``functools.partial`` is (``fnvalues.FnValue.keywords``).  Calls of it are then
planned and differentiated like any callee's, the arguments (a forward value too)
carried by the keywords.

Recognised: a factory whose body (a docstring aside) is ``def inner(...): ...`` then
``return inner``, or ``return lambda ...: ...``, with plain parameters whose defaults
are literals; anything else is not a factory here (its call is lowered as a value,
and a returned function refused where it is used, as before).
"""

from __future__ import annotations

import builtins
import inspect
import types
import weakref
from typing import Any, NamedTuple

import libcst as cst

from ..errors import UnsupportedSyntaxError
from ..ir.nodes import Const
from .draws import is_draw
from .fnvalues import FnValue
from .loop_functions import names_read
from .resolve import FreeVar, is_library, is_literal
from .source import literal_value, parse_function
from .synthesize import DISPLAY, synthesize

# factory -> (its code, the function written from it, its parameter names, what its
# defaults that are not literals read: see _Made)
_MADE: "weakref.WeakKeyDictionary[Any, tuple[Any, _Made]]" = weakref.WeakKeyDictionary()
# what the statements before the nested ``def`` may call (they run at each call of it:
# functions that only compute a value)
_PURE_BUILTINS = frozenset({abs, bool, divmod, float, int, len, max, min, pow, range,
                            round, sum, tuple, list, zip, enumerate})


class _Made(NamedTuple):
    function: Any  # the nested function, written at module level
    params: tuple[str, ...]  # the factory's parameters it takes as trailing ones
    # (its parameter, the factory's parameter or module name its default is)
    dynamic: tuple[tuple[str, str], ...]


def made_function(lowerer: Any, fv: FnValue, node: cst.Call) -> FnValue | None:
    """The function ``node`` (a call of the factory ``fv``) returns, with the call's
    arguments bound to the factory's parameters; None where ``fv`` is no factory."""
    fn = fv.obj
    if fv.head or fv.keywords or fv.choice is not None or not isinstance(
            fn, types.FunctionType) or is_library(fn) or fn.__kwdefaults__:
        return None
    try:
        made = _made(fn)
    except _Refused as refused:
        raise refused.error.with_func(fn.__name__) from None
    if made is None:
        return None
    inner, params = made.function, made.params
    if any(a.star for a in node.args):
        return None
    signature = inspect.signature(fn)
    args, kwargs = lowerer.args_of(node.args)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise lowerer.n.unsupported(node, f"this call of `{fn.__name__}` does not match "
                                    f"its parameters: {e}", "pass what it takes") from None
    captured = dict(lowerer.resolved(fv, node).captured)
    values = {}
    for name in {*params, *(src for _, src in made.dynamic if src in params)}:
        if name in bound.arguments:
            values[name] = bound.arguments[name]
        elif name in captured:  # (a nested factory's names of the enclosing function)
            values[name] = captured[name]
        else:
            default = signature.parameters[name].default
            values[name] = Const(default, repr(default))
    # a default that is not a literal, by keyword: a parameter of the factory is the
    # value this call gave it (as `def g(x, w=w0)` run by this call binds it); a module
    # name is read when the code runs, as the factory's `def` reads it (`w=W0`)
    for own, src in made.dynamic:
        if src not in params:
            values[src] = lowerer.n.resolver.constant(fn.__globals__[src], src, node)
            lowerer.n.resolver.depends_on(FreeVar(src, scope=fn.__globals__), node)
    return FnValue(inner, inner.__name__, keywords=tuple(
        [(name, values[name]) for name in params] +
        [(own, values[src]) for own, src in made.dynamic]))


def without_given_defaults(fn: Any, args: list[Any], kwargs: dict[str, Any],
                           passed: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` of a call of ``fn`` (a factory's nested function) without the
    defaults the factory gives by keyword for parameters the call gives by position."""
    given = getattr(fn, "__s2s_defaulted__", ())
    if not given:
        return kwargs
    code = fn.__code__
    names = code.co_varnames[:code.co_argcount]
    return {k: v for k, v in kwargs.items() if k in passed or k not in given or (
        k not in names or names.index(k) >= len(args))}


def _cells(fn: Any) -> dict[str, Any]:
    return {k: c.cell_contents for k, c in zip(fn.__code__.co_freevars,
                                                fn.__closure__ or ())}


def _made(fn: types.FunctionType) -> _Made | None:
    hit = _MADE.get(fn)
    if hit is not None and hit[0] is fn.__code__:
        return hit[1]
    try:
        parsed = parse_function(fn)
    except Exception:  # noqa: BLE001 - no source: not a factory s2s can read
        return None
    found = _returned(parsed.node)
    if found is None:
        return None
    before, inner = found
    params = parsed.node.params
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None or (
            params.kwonly_params or params.posonly_params):
        return None
    names = tuple(p.name.value for p in params.params)
    for p in params.params:  # (a default written in emitted code: a literal only)
        default = inspect.signature(fn).parameters[p.name.value].default
        if default is not inspect.Parameter.empty and not is_literal(default):
            return None
    own = _own(inner.params)
    local = _assigned(before, parsed)
    bad = _impure(before, fn)
    if bad is not None:
        raise _refusal(parsed, bad, f"a call of `{_text(bad)}` before the nested function: "
                       "s2s writes what the factory computes before its `def` into the "
                       "nested function, which runs it at each of its calls, where "
                       "Python runs it once per call of the factory (a draw, a print, a "
                       "function of yours)", "make the value before calling the factory "
                       "and pass it in as an argument (`noise = rng.normal(size=n)`, then "
                       "`make(act, noise)`)")
    if local & own:
        raise _refusal(parsed, before[0], f"the factory binds `{min(local & own)}`, a "
                       "parameter of the nested function too", "give one of them another "
                       "name")
    nonlocals = [m for m in _walk(inner) if isinstance(m, cst.Nonlocal)]
    if nonlocals:  # (the body moved in before it would bind the name: a SyntaxError)
        raise _refusal(parsed, nonlocals[0], "`nonlocal` in a nested function: s2s "
                       "passes it the names it reads, never writing the enclosing "
                       "function's", "return the new value and assign it where it is called")
    if isinstance(inner, cst.Lambda):
        name = "lam"
        body = cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(inner.body)])])
        fdef = cst.FunctionDef(cst.Name(name), inner.params, body)
    else:
        name = inner.name.value
        fdef = inner.with_changes(leading_lines=[], decorators=[])
        if name in names_read(inner):
            return None  # (a recursive nested function: not written here)
    ps, dynamic = _split_defaults(fdef.params, set(names), local, fn, parsed)
    extra = [m for m in names if m not in own]
    new = [cst.Param(cst.Name(m), default=cst.Name("None")) for m in extra]
    if isinstance(ps.star_arg, cst.Param) or ps.kwonly_params:
        ps = ps.with_changes(kwonly_params=[*ps.kwonly_params, *new])
    else:
        ps = ps.with_changes(params=[*ps.params, *new])
    fdef = fdef.with_changes(params=ps)
    loc = parsed.loc(inner)
    first = max(loc.line - (1 if isinstance(inner, cst.Lambda) else 0), 1)
    if before:  # (written above the nested def's body, on their own lines, as they are)
        fdef, first, loc = _with_before(parsed, fdef, before, inner)
    shown = DISPLAY.get(parsed.filename)
    display = (shown[0], shown[1], (shown[2] or 0) + loc.col - 1) if shown else (
        parsed.filename, parsed.lines, parsed.col_offset + loc.col - 1)
    made = synthesize(cst.Module([fdef]).code, name, fn.__globals__, f"made-{name}",
                      first, display, cells=_cells(fn) or None)
    made.__qualname__ = f"{fn.__qualname__}.<locals>.{name}"
    # (the code object alone has no defaults: the ones written, as `def` sets them)
    value = (lambda p: literal_value(cst.Module([]).code_for_node(p.default))
             if _literal(p.default) else eval(  # noqa: S307 - constants of NumPy's
                 cst.Module([]).code_for_node(p.default), fn.__globals__))
    made.__defaults__ = tuple(value(p) for p in (*ps.posonly_params, *ps.params)
                              if p.default is not None) or None
    made.__kwdefaults__ = {p.name.value: value(p) for p in ps.kwonly_params
                           if p.default is not None} or None
    made.__s2s_defaulted__ = frozenset(own for own, _ in dynamic)
    result = _Made(made, tuple(extra), dynamic)
    _MADE[fn] = (fn.__code__, result)
    return result


def _split_defaults(ps: cst.Parameters, factory: set[str], local: set[str],
                    fn: Any, parsed: Any) -> tuple:
    """The nested function's parameters with each default that is not a literal
    written ``None`` and given by keyword at each call of the factory: one that is a
    parameter of the factory (``w=w0``), or a module's value (``w=W0``, not a function);
    one of constants only (``w=np.ones(3)``) is written as it is; any other (a name the
    factory computes, an expression of arguments) is refused at its line."""
    dynamic = []

    def one(p: cst.Param) -> cst.Param:
        if p.default is None or _literal(p.default):
            return p
        read = {n.value for n in _names(p.default)}
        if isinstance(p.default, cst.Name) and p.default.value in factory - local:
            dynamic.append((p.name.value, p.default.value))
        elif isinstance(p.default, cst.Name) and not read & (factory | local) and not (
                callable(fn.__globals__.get(p.default.value, len)) or isinstance(
                    fn.__globals__[p.default.value], types.ModuleType)):
            dynamic.append((p.name.value, p.default.value))
        elif not read & (factory | local) and all(isinstance(
                fn.__globals__.get(r, builtins), types.ModuleType) or hasattr(builtins, r)
                and r not in fn.__globals__ for r in read) and _pure([p.default], fn):
            return p
        else:
            raise _refusal(parsed, p.default, "a default of a factory's nested function "
                           "that is neither a literal, a parameter of the factory, a module's "
                           "value nor made of constants: s2s writes the nested function at "
                           "module level", "name a parameter of the factory (`def make(act, "
                           "w0): def g(x, w=w0)`), or pass the value at the call")
        return p.with_changes(default=cst.Name("None"))

    return ps.with_changes(params=[one(p) for p in ps.params],
                           kwonly_params=[one(p) for p in ps.kwonly_params],
                           posonly_params=[one(p) for p in ps.posonly_params]), tuple(dynamic)


class _Refused(Exception):
    def __init__(self, error: UnsupportedSyntaxError) -> None:
        self.error = error


def _refusal(parsed: Any, node: Any, what: str, hint: str) -> _Refused:
    return _Refused(UnsupportedSyntaxError(what, parsed.loc(node), hint))


def _text(node: Any) -> str:
    return cst.Module([]).code_for_node(node)


def _with_before(parsed: Any, fdef: cst.FunctionDef, before: list[Any],
                 inner: Any) -> tuple[cst.FunctionDef, int, Any]:
    """``fdef`` with the factory's statements before the nested ``def`` first, each on
    its line of the file, and the nested function's body under ``if True:`` where its
    ``def`` was (its lines and columns stay the file's)."""
    first_line = parsed.loc(before[0]).line
    header = first_line - 1 - len(before[0].leading_lines)
    if isinstance(inner, cst.Lambda):
        at = parsed.loc(inner).line  # (`return lambda v: ...`: on the return's line)
        block = [cst.SimpleStatementLine([cst.Return(inner.body)])]
        opening = at - 1
    else:
        block = list(inner.body.body)
        at = parsed.loc(block[0]).line
        opening = parsed.loc(inner).line
    lead = getattr(block[0], "leading_lines", ())
    pad = [cst.EmptyLine()] * max(at - opening - 1 - len(lead), 0)
    block[0] = block[0].with_changes(leading_lines=[*lead, *pad])
    guard = cst.If(cst.Name("True"), cst.IndentedBlock(block),
                   leading_lines=[cst.EmptyLine()] * max(opening - parsed.loc(
                       before[-1]).line - 1, 0))
    body = [before[0].with_changes(leading_lines=before[0].leading_lines), *before[1:],
            guard]
    return fdef.with_changes(body=cst.IndentedBlock(body)), max(header, 1), parsed.loc(
        parsed.node)


def _returned(node: Any) -> tuple[list[Any], Any] | None:
    """The statements before it and the nested ``def`` (or lambda) a factory's body
    returns, or None."""
    if not isinstance(node, cst.FunctionDef) or node.decorators:
        return None
    body = list(node.body.body)
    if body and _docstring(body[0]):
        body = body[1:]
    if body and _returns(body[-1], cst.Lambda):
        return body[:-1], body[-1].body[0].value
    if len(body) >= 2 and isinstance(body[-2], cst.FunctionDef) and not body[-2].decorators \
            and body[-2].asynchronous is None and _returns(body[-1], cst.Name) and (
            body[-1].body[0].value.value == body[-2].name.value):
        return body[:-2], body[-2]
    return None


def _assigned(before: list[Any], parsed: Any) -> set[str]:
    """The names statements before the nested ``def`` bind; refused where one is not
    ``name = value`` (a write into an object, ``+=``, a call for its effect...)."""
    out: set[str] = set()
    for stmt in before:
        smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
        for small in smalls:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) \
                else [small.target] if isinstance(small, cst.AnnAssign) and small.value \
                else [None]
            for t in targets:
                items = [e.value for e in t.elements] if isinstance(
                    t, (cst.Tuple, cst.List)) else [t]
                if not all(isinstance(i, cst.Name) for i in items):
                    raise _refusal(parsed, small, "a statement before a factory's nested "
                                   "function that does more than bind names to values "
                                   "(`d[k] = v`, `+=`, an `if`, a call for its effect): "
                                   "s2s writes those statements into the nested function, "
                                   "which runs them at each of its calls", "compute the "
                                   "value with `name = ...` (`w = w0 + 1.0`), or pass it in "
                                   "as an argument")
                out.update(i.value for i in items)
    return out


def _pure(nodes: list[Any], fn: Any) -> bool:
    return _impure(nodes, fn) is None


def _impure(nodes: list[Any], fn: Any) -> Any:
    """The first call in ``nodes`` of anything but NumPy's (not its random draws),
    ``math``'s and Python's value-computing functions, or None.  The statements run at
    each call of the function written."""
    calls: list[Any] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            calls.append(call.func)

    for node in nodes:
        node.visit(Calls())
    cells = _cells(fn)
    for called in calls:
        func, parts = called, []
        while isinstance(func, cst.Attribute):
            parts.append(func.attr.value)
            func = func.value
        if not isinstance(func, cst.Name) or func.value in cells:
            return called
        obj = fn.__globals__.get(func.value, getattr(builtins, func.value, None))
        for part in reversed(parts):
            obj = getattr(obj, part, None)
        if any(obj is b for b in _PURE_BUILTINS):
            continue
        module = getattr(obj, "__module__", None) or getattr(
            getattr(obj, "__self__", None), "__name__", "") or ""
        if obj is None or not is_library(obj) or "random" in module or is_draw(obj):
            return called
    return None


def _names(node: Any) -> list[cst.Name]:
    found: list[cst.Name] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.append(name)

        def visit_Attribute(self, attr: cst.Attribute) -> bool:
            attr.value.visit(self)
            return False

    node.visit(Names())
    return found


def _literal(node: Any) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(node, cst.Name) and node.value in ("None", "True", "False"))


def _returns(stmt: Any, kind: type) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(
        stmt.body[0], cst.Return) and isinstance(stmt.body[0].value, kind)


def _docstring(stmt: Any) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(
        stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.SimpleString)


def _own(params: cst.Parameters) -> set[str]:
    own = {p.name.value for p in (*params.posonly_params, *params.params,
                                   *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            own.add(star.name.value)
    return own



def _walk(node: Any) -> list[Any]:
    """``node`` and every node under it."""
    found: list[Any] = []

    class Visit(cst.CSTVisitor):
        def on_visit(self, child: Any) -> bool:
            found.append(child)
            return True

    node.visit(Visit())
    return found
