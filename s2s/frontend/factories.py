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

import inspect
import types
import weakref
from typing import Any

import libcst as cst

from ..ir.nodes import Const
from .fnvalues import FnValue
from .loop_functions import names_read
from .resolve import is_library, is_literal
from .source import literal_value, parse_function
from .synthesize import DISPLAY, synthesize

# factory -> (its code, the nested function written from it, its parameter names)
_MADE: "weakref.WeakKeyDictionary[Any, tuple[Any, Any, tuple[str, ...]]]" = (
    weakref.WeakKeyDictionary())


def made_function(lowerer: Any, fv: FnValue, node: cst.Call) -> FnValue | None:
    """The function ``node`` (a call of the factory ``fv``) returns, with the call's
    arguments bound to the factory's parameters; None where ``fv`` is no factory."""
    fn = fv.obj
    if fv.head or fv.keywords or fv.choice is not None or not isinstance(
            fn, types.FunctionType) or is_library(fn) or fn.__kwdefaults__:
        return None
    made = _made(fn)
    if made is None:
        return None
    inner, params = made
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
    values = []
    for name in params:
        if name in bound.arguments:
            values.append((name, bound.arguments[name]))
        elif name in captured:  # (a nested factory's names of the enclosing function)
            values.append((name, captured[name]))
        else:
            default = signature.parameters[name].default
            values.append((name, Const(default, repr(default))))
    return FnValue(inner, inner.__name__, keywords=tuple(values))


def _made(fn: types.FunctionType) -> tuple[Any, tuple[str, ...]] | None:
    hit = _MADE.get(fn)
    if hit is not None and hit[0] is fn.__code__:
        return hit[1], hit[2]
    try:
        parsed = parse_function(fn)
    except Exception:  # noqa: BLE001 - no source: not a factory s2s can read
        return None
    found = _returned(parsed.node)
    if found is None:
        return None
    params = parsed.node.params
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None or (
            params.kwonly_params or params.posonly_params):
        return None
    names = tuple(p.name.value for p in params.params)
    for p in params.params:  # (a default written in emitted code: a literal only)
        default = inspect.signature(fn).parameters[p.name.value].default
        if default is not inspect.Parameter.empty and not is_literal(default):
            return None
    inner = found
    own = _own(inner.params)
    if isinstance(inner, cst.Lambda):
        name = "lam"
        body = cst.IndentedBlock([cst.SimpleStatementLine([cst.Return(inner.body)])])
        fdef = cst.FunctionDef(cst.Name(name), inner.params, body)
    else:
        name = inner.name.value
        fdef = inner.with_changes(leading_lines=[], decorators=[])
        if name in names_read(inner):
            return None  # (a recursive nested function: not written here)
    if not all(_literal(p.default) for p in (*inner.params.params, *inner.params.kwonly_params)
               if p.default is not None):
        return None  # (`def loss(v, p=power)`: read when the factory runs; not written)
    extra = [m for m in names if m not in own]
    new = [cst.Param(cst.Name(m), default=cst.Name("None")) for m in extra]
    ps = fdef.params
    if isinstance(ps.star_arg, cst.Param) or ps.kwonly_params:
        ps = ps.with_changes(kwonly_params=[*ps.kwonly_params, *new])
    else:
        ps = ps.with_changes(params=[*ps.params, *new])
    fdef = fdef.with_changes(params=ps)
    loc = parsed.loc(inner)
    shown = DISPLAY.get(parsed.filename)
    display = (shown[0], shown[1], (shown[2] or 0) + loc.col - 1) if shown else (
        parsed.filename, parsed.lines, parsed.col_offset + loc.col - 1)
    cells = {k: c.cell_contents for k, c in zip(fn.__code__.co_freevars,
                                                fn.__closure__ or ())}
    made = synthesize(cst.Module([fdef]).code, name, fn.__globals__, f"made-{name}",
                      max(loc.line - (1 if isinstance(inner, cst.Lambda) else 0), 1),
                      display, cells=cells or None)
    made.__qualname__ = f"{fn.__qualname__}.<locals>.{name}"
    # (the code object alone has no defaults: the literals written, as `def` sets them)
    value = (lambda p: literal_value(cst.Module([]).code_for_node(p.default)))
    made.__defaults__ = tuple(value(p) for p in (*ps.posonly_params, *ps.params)
                              if p.default is not None) or None
    made.__kwdefaults__ = {p.name.value: value(p) for p in ps.kwonly_params
                           if p.default is not None} or None
    _MADE[fn] = (fn.__code__, made, tuple(extra))
    return made, tuple(extra)


def _returned(node: Any) -> Any:
    """The nested ``def`` (or lambda) a factory's body returns, or None."""
    if not isinstance(node, cst.FunctionDef) or node.decorators:
        return None
    body = list(node.body.body)
    if body and _docstring(body[0]):
        body = body[1:]
    if len(body) == 1 and _returns(body[0], cst.Lambda):
        return body[0].body[0].value
    if len(body) == 2 and isinstance(body[0], cst.FunctionDef) and not body[0].decorators \
            and body[0].asynchronous is None and _returns(body[1], cst.Name) and (
            body[1].body[0].value.value == body[0].name.value):
        return body[0]
    return None


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

