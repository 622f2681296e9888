"""What the analysis of signature_facts reads of a function's text before it
interprets it: a user function's definition (checked against the code that runs) and
its defaults, how a call binds its parameters, and what the text says of its names:
the lists it only grows and shrinks (tapes), the names that may share a buffer, the
arrays something writes into, the parameters it only reads items of.
"""

from __future__ import annotations

import ast
import types
from typing import Any, Callable

from .. import syntax
from ..frontend.source import parse_function
from .calls import MAY_ALIAS, MUTATORS, call_name


def user_function(fn: types.FunctionType) -> tuple[ast.FunctionDef, dict] | None:
    """A user function's definition, checked against the code that runs, and the names
    it reads from its module and closure; None where that cannot be had."""
    try:
        parsed = parse_function(fn)
        import libcst as cst

        text = cst.Module(body=[parsed.node]).code  # type: ignore[list-item]
        tree = syntax.parse(text)
    except Exception:  # no source, a lambda, a changed file: nothing is known
        return None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef):
        return None
    namespace = dict(fn.__globals__)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            namespace[name] = cell.cell_contents
        except ValueError:
            return None
    return node, namespace


def bind_parameters(fn: ast.FunctionDef, args: list[Any], kwargs: dict[str, Any],
                     default: Callable[[str, ast.expr], Any]) -> dict[str, Any] | None:
    """The parameters' levels for a call (None where the call's form is not plain);
    ``default(name, expr)``: the level of a parameter left at its default."""
    a = fn.args
    if a.vararg or a.kwarg or a.posonlyargs:
        return None
    names = [p.arg for p in a.args]
    kwonly = [p.arg for p in a.kwonlyargs]
    if len(args) > len(names):
        return None
    env: dict[str, Any] = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in env or k not in names + kwonly:
            return None
        env[k] = v
    defaults = dict(zip(names[len(names) - len(a.defaults):], a.defaults))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    for p in names + kwonly:
        if p not in env:
            if p not in defaults:
                return None
            env[p] = default(p, defaults[p])
    return env


def tapes(fn: ast.FunctionDef) -> set[str]:
    """Lists the function grows and shrinks and nothing else holds: names bound only
    to a list display or ``list(...)``, read only by ``.append(v)``, ``.pop()``, an
    item ``name[k]`` or as a call's argument (a call of a user's function that may
    change it makes it unknown after)."""
    bound: dict[str, bool] = {}
    uses: set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                    not node.keywords and ((func.attr == "append" and len(node.args) == 1)
                                           or (func.attr == "pop" and not node.args)):
                uses.add(id(func.value))
            uses.update(id(a) for a in node.args)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            uses.add(id(node.value))
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    v = node.value
                    made = isinstance(v, ast.List) or (
                        isinstance(v, ast.Call) and isinstance(v.func, ast.Name)
                        and v.func.id == "list" and len(v.args) <= 1 and not v.keywords)
                    bound[t.id] = bound.get(t.id, True) and made
    bad: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                if node.id not in bound:
                    bad.add(node.id)  # (bound by a loop, a with, an unpacking...)
            elif id(node) not in uses:
                bad.add(node.id)
        elif isinstance(node, (ast.AugAssign, ast.Delete)):
            bad.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
    return {n for n, made in bound.items() if made and n not in bad}


def base_name(node: ast.AST) -> str | None:
    """The name whose buffer an expression may be (a view of): ``x``, ``x[1:]``,
    ``x.T``, ``np.reshape(x, s)``; None for values made anew."""
    while True:
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
        elif isinstance(node, ast.Call) and call_name(node) in MAY_ALIAS:
            node = node.args[0] if node.args else (
                node.func.value if isinstance(node.func, ast.Attribute) else node)
            if not isinstance(node, (ast.Name, ast.Subscript, ast.Attribute, ast.Call)):
                return None
        else:
            break
    return node.id if isinstance(node, ast.Name) else None


def shared_names(fn: ast.FunctionDef) -> list[tuple[str, str]]:
    """Pairs of names that may hold one buffer or container (``a = b``, ``a = b.T``)."""
    pairs = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            b = base_name(node.value)
            if b:
                pairs += [(t.id, b) for t in node.targets if isinstance(t, ast.Name)]
    return pairs


def written_or_aliased(fn: ast.FunctionDef) -> set[str]:
    """Names whose array something writes into, and every name that may share its
    buffer: none of them holds a value the signature settles (only a shape)."""
    written: set[str] = set()
    for node in ast.walk(fn):
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AugAssign) else [])
        for t in targets:
            if isinstance(t, (ast.Subscript, ast.Attribute)) or isinstance(
                    node, ast.AugAssign):
                b = base_name(t)
                if b:
                    written.add(b)
        if isinstance(node, ast.Call) and call_name(node) in MUTATORS:
            for a in node.args[:1]:
                b = base_name(a)
                if b:
                    written.add(b)
            if isinstance(node.func, ast.Attribute):
                b = base_name(node.func.value)
                if b:
                    written.add(b)
    return closure(written, shared_names(fn))


def closure(names: set[str], shares: list[tuple[str, str]]) -> set[str]:
    """``names`` and every name that may share a buffer (or a list) with one of them."""
    out = set(names)
    changed = True
    while changed:
        changed = False
        for a, b in shares:
            if (a in out) != (b in out):
                out |= {a, b}
                changed = True
    return out


def only_read(fn: ast.FunctionDef, param: str) -> bool:
    """Does ``fn`` only read items of its parameter ``param`` (``p[k]``, ``len(p)``,
    ``for v in p``), never change it or hand it on?"""
    allowed: set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            allowed.add(id(node.value))
        elif isinstance(node, ast.For):
            allowed.add(id(node.iter))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "len":
            allowed.update(id(a) for a in node.args)
    return all(id(n) in allowed for n in ast.walk(fn)
               if isinstance(n, ast.Name) and n.id == param)


def defaults_of(fn: types.FunctionType) -> dict[str, Any]:
    code = fn.__code__
    names = code.co_varnames[:code.co_argcount]
    out = dict(zip(names[len(names) - len(fn.__defaults__ or ()):], fn.__defaults__ or ()))
    out.update(fn.__kwdefaults__ or {})
    return out
