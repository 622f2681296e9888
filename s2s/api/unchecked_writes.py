"""In-place array writes ``s2s.jit(f, backend="jax")`` cannot run as written.

A plain function given to the JAX jit runs its own text on ``jax.numpy``, where arrays
are values: ``z += v`` rebinds ``z`` alone (and ``z[i] = v`` or ``np.add.at(z, i, v)``
become ``z = z.at[i]...``), where NumPy writes into the array every other name, view,
container or caller holding it sees.  The frontend refuses such writes
(``errors.mark_shared_write``) when it reads the function; a function it refuses for
another reason first (an ``import`` inside, a ``try``, a ``class`` inside) is read here
instead, by a check that does not need the subset: :func:`unchecked_write` finds the
first write into an array (in the function, a function it defines, or a user function
or class it names) that it cannot show no other name sees, and returns its refusal,
located at the write.  The check is conservative and flow-insensitive: a write counts
as unseen only where the written name is a local bound to new values alone (an
argument of the jitted function, whose arrays jit gives as copies; arithmetic; a
NumPy function that returns a new array; a literal of such values) and every read of
it can make no second reference to it (arithmetic, a NumPy function, a reduction, a
``return``).  A function with no write at all runs as before.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import os
import sysconfig
import textwrap
import types
from typing import Any, Iterator

import numpy as np

from .. import syntax
from ..errors import Loc, TransformError, UnsupportedSyntaxError, mark_shared_write
from .unchecked_scope import _LIBRARIES, _MISSING, _NP_WRITES, _WRITE_METHODS, _Scope

__all__ = ["unchecked_write", "callee_write"]

SITE_DIRS = tuple(  # (where installed libraries live: jax_backend's, without JAX)
    p + os.sep for p in {sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")}
)



def unchecked_write(fun: Any, why: BaseException | None = None) -> TransformError | None:
    """The refusal (located, marked a shared write) of the first in-place write of
    ``fun`` or of what it calls that another name may see; None if it has none.
    ``why``: the frontend's own refusal of ``fun``, quoted in the hint."""
    reason = str(getattr(why, "what", "") or "").strip()
    seen: set[int] = set()
    queue: list[tuple[Any, bool]] = [(fun, True)] if isinstance(
        fun, types.FunctionType) else [(f, False) for f in _user_callables(fun)]
    while queue:
        fn, top = queue.pop(0)
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        found = _Function(fn, top, reason)
        if found.refusal is not None:
            return found.refusal.with_func(getattr(fun, "__name__", "f"))
        queue += [(c, False) for c in found.callees if id(c) not in seen]
    return None


def callee_write(fn: Any, top: Any, why: str) -> TransformError | None:
    """:func:`unchecked_write` of ``fn``, a user function the code of ``top`` (a
    function the frontend refused, checked by :func:`unchecked_write` when jitted)
    reaches while JAX traces it: a function given as a static argument, a method of an
    argument's class, which no name in ``top`` says (its arguments: another name's)."""
    found = _Function(fn, False, why)
    if found.refusal is not None:
        return found.refusal.with_func(getattr(top, "__name__", "f"))
    return None


class _Function:
    """One function's writes checked (``top``: the jitted function itself, whose
    arguments are copies), and the user functions it names."""

    def __init__(self, fn: Any, top: bool, reason: str) -> None:
        self.fn, self.reason, self.refusal = fn, reason, None
        self.callees: list[Any] = []
        code = getattr(fn, "__code__", None)
        if code is None:
            return
        self.env = _environment(fn)
        node, self.first, self.shift = _function_node(fn)
        if node is None:  # (no source: its bytecode says whether it writes at all)
            if _writes_in_bytecode(code):
                self.refusal = self._refuse(None, f"`{fn.__name__}`",
                                            "its source cannot be read")
            self.callees = [v for v in (self._lookup(n) for n in _bytecode_names(code))
                            if v is not _MISSING]
            self.callees = [c for v in self.callees for c in _user_callables(v)]
            return
        self.file = inspect.getsourcefile(fn) or code.co_filename
        self.lines = _source_lines(fn)
        scopes = [(node, top)]
        while scopes and self.refusal is None:
            scope, fresh_args = scopes.pop(0)
            checked = _Scope(scope, fresh_args, self)
            self.refusal = checked.refusal
            scopes += [(s, False) for s in checked.nested if not isinstance(s, ast.ClassDef)]
            scopes += [(m, False) for s in checked.nested if isinstance(s, ast.ClassDef)
                       for m in s.body if isinstance(m, (ast.FunctionDef,
                                                         ast.AsyncFunctionDef))]
            for name in checked.free:
                value = self._lookup(name)
                if value is not _MISSING:
                    self.callees += _user_callables(value)
            for value in checked.imports.values():
                self.callees += _user_callables(value)
            for chain in checked.chains:
                value = self._resolve(chain)
                if value is not _MISSING:
                    self.callees += _user_callables(value)

    def _lookup(self, name: str) -> Any:
        return self.env.get(name, _MISSING)

    def _resolve(self, expr: ast.expr, local: dict | None = None) -> Any:
        """The object a name or a dotted name from a module means, or _MISSING."""
        if isinstance(expr, ast.Name):
            if local is not None and expr.id in local:
                return local[expr.id]
            return self._lookup(expr.id)
        if isinstance(expr, ast.Attribute):
            base = self._resolve(expr.value, local)
            if isinstance(base, (types.ModuleType, np.ufunc)) or _user_class(base):
                return getattr(base, expr.attr, _MISSING)
        return _MISSING

    def _refuse(self, node: ast.AST | None, act: str, why: str, name: str = "",
                update: str = "") -> TransformError:
        """The refusal of the write ``act`` at ``node`` (None: the function's line)."""
        if node is None:
            code = self.fn.__code__
            text = "".join(_source_lines(self.fn)[:1]) or ""
            loc = Loc(code.co_filename, code.co_firstlineno, 1, text.rstrip("\n"))
        else:
            text = self.lines[node.lineno - 1].rstrip("\n") if node.lineno <= len(
                self.lines) else ""
            loc = Loc(self.file, self.first + node.lineno - 1,
                      node.col_offset + self.shift + 1, text)
        new = f"`{name} = {update}` (a new array) and read `{name}`" if name else \
            "a new array to a name and read that name"
        subset = f"; or bring the function into the subset ({self.reason})" if \
            self.reason else ""
        return mark_shared_write(UnsupportedSyntaxError(
            f"{act} writes into an array in place (in `{self.fn.__name__}`), and {why}: "
            "s2s cannot rule out here, outside the subset it reads, that another name, "
            "view, container or the caller sees that array, and on JAX, whose arrays "
            "are values, only the written name would change",
            loc, f"write {new} where the update must show{subset}"))


def _environment(fn: Any) -> dict:
    env = dict(vars(builtins))
    env.update(getattr(fn, "__globals__", {}) or {})
    code = fn.__code__
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            env[name] = cell.cell_contents
        except ValueError:
            pass
    return env


def _source_lines(fn: Any) -> list[str]:
    try:
        return inspect.getsourcelines(fn)[0]
    except (OSError, TypeError):
        return []


def _function_node(fn: Any) -> tuple[ast.AST | None, int, int]:
    """``fn``'s ``def`` node, its first line in the file and its indentation."""
    if fn.__code__.co_name == "<lambda>":
        return None, 0, 0
    try:
        lines, first = inspect.getsourcelines(fn)
        text = "".join(lines)
        dedented = textwrap.dedent(text)
        tree = syntax.parse(dedented)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None, 0, 0
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef,
                                                             ast.AsyncFunctionDef)):
        return None, 0, 0
    shift = len(lines[0]) - len(lines[0].lstrip()) - (
        len(dedented.splitlines()[0]) - len(dedented.splitlines()[0].lstrip()))
    return tree.body[0], first, shift


def _writes_in_bytecode(code: types.CodeType) -> bool:
    import dis

    for ins in dis.get_instructions(code):
        if ins.opname in ("STORE_SUBSCR", "DELETE_SUBSCR") or ins.opname.startswith(
                "INPLACE_") or (ins.opname == "BINARY_OP" and "=" in ins.argrepr):
            return True
        if ins.opname in ("LOAD_METHOD", "LOAD_ATTR") and ins.argval in (
                _WRITE_METHODS | _NP_WRITES):
            return True
        if ins.opname == "KW_NAMES" and "out" in (ins.argval or ()):
            return True
    return any(_writes_in_bytecode(c) for c in code.co_consts
               if isinstance(c, types.CodeType))


def _bytecode_names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _bytecode_names(c)


def _user_module(value: Any) -> bool:
    name = getattr(value, "__name__", "") or ""
    file = getattr(value, "__file__", None) or ""
    return bool(file) and name.split(".")[0] not in _LIBRARIES and not file.startswith(
        SITE_DIRS)


def _user_function(value: Any) -> bool:
    if not isinstance(value, types.FunctionType):
        return False
    module = (getattr(value, "__module__", None) or "").split(".")[0]
    return module not in _LIBRARIES and not value.__code__.co_filename.startswith(
        SITE_DIRS)


def _user_class(value: Any) -> bool:
    return isinstance(value, type) and (value.__module__ or "").split(".")[0] not in (
        _LIBRARIES) and not issubclass(value, BaseException)


def _user_callables(value: Any) -> list[Any]:
    """The user functions ``value`` may run: itself, a class's methods, a partial's
    function, a bound method's, the functions a dict, list or tuple holds."""
    if isinstance(value, types.MethodType):
        value = value.__func__
    if isinstance(value, types.FunctionType):
        return [value] if _user_function(value) else []
    if isinstance(value, type):
        if not _user_class(value):
            return []
        out: list[Any] = []
        for klass in value.__mro__[:-1]:
            for member in vars(klass).values():
                member = getattr(member, "__func__", getattr(member, "fget", member))
                if _user_function(member):
                    out.append(member)
        return out
    if hasattr(value, "func") and callable(getattr(value, "func", None)) and \
            type(value).__name__ == "partial":
        return _user_callables(value.func)
    if type(value) in (tuple, list) or type(value) is dict:
        items = value.values() if isinstance(value, dict) else value
        return [c for v in list(items)[:64] for c in _user_callables(v)]
    if not isinstance(value, types.ModuleType) and _user_class(type(value)) and any(
            _user_function(getattr(v, "__func__", v)) for k in type(value).__mro__[:-1]
            for v in vars(k).values()):
        return _user_callables(type(value))  # (an object of the user's: its methods)
    return []

