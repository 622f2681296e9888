"""``p.get("s")``, ``p.items()``, ``opt.update(g)`` of an argument object whose class
defines that method itself (a dataclass, a NamedTuple, a plain class of yours).

The emitted code reads such an object as the dict of its fields, and a method named
as a dict's, an array's, a list's or a string's (``get``, ``keys``, ``items``,
``values``, ``update``, ``sum``, ``copy``...) is lowered as that value's method unless
the parameter's class is known to the transform (``callables._called_names``: a
method of no value's name called on it too).  Python runs the class's own method:
the two differ (``Store.get`` scaling a field read as ``fields["s"]``: a wrong
number), so such a call is refused at its line."""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from typing import Any, Callable

import numpy as np

from .. import syntax
from ..errors import Loc, TransformError

# (code, the arguments' classes) whose check passed
_PASSED: set = set()
# code -> ((parameter position, method, line, column, line's text), ...)
_CALLS: dict = {}
# (callables.py's: a value's method names, and the parameters whose class a transform
# knows; the latter installed by callables, which imports this module)
_VALUE_METHODS = frozenset(
    name for t in (np.ndarray, dict, list, tuple, set, str) for name in dir(t))
CALLED_NAMES: Callable[[Any], frozenset] = lambda fn: frozenset()  # noqa: E731
_LIBRARY = ("builtins", "typing", "collections", "dataclasses", "abc", "numpy", "types",
            "enum", "functools", "jax", "jaxlib", "s2s")


def refuse_value_methods(fn: Any, args: tuple) -> None:
    """Raise a located TransformError where ``fn``'s body calls ``p.m(...)`` on a
    parameter ``p`` whose argument's class defines ``m`` and the code would run a
    value's ``m`` instead."""
    code = getattr(fn, "__code__", None)
    if code is None or not args:
        return
    try:
        key = (code, tuple(type(a) for a in args))
        if key in _PASSED:
            return
    except TypeError:
        return
    calls = _CALLS.get(code)
    if calls is None:
        calls = _CALLS[code] = _value_method_calls(fn)
    for pos, method, line, col, text in calls:
        if pos < len(args) and _own_method(type(args[pos]), method):
            cls = type(args[pos]).__name__
            raise TransformError(
                f"`.{method}(...)` is a method of your class `{cls}`, but s2s reads the "
                f"`{cls}` argument as the dict of its fields and would run a dict's, an "
                f"array's or a list's `.{method}` instead",
                Loc(code.co_filename, line, col, text),
                f"call it as `{cls}.{method}(obj, ...)`, or rename the method",
                getattr(fn, "__name__", "f"))
    _PASSED.add(key)


def _own_method(cls: type, method: str) -> bool:
    """Whether ``cls`` (a class of yours) defines ``method`` as a function itself."""
    for c in cls.__mro__[:-1]:
        if method in vars(c):
            if (c.__module__ or "builtins").split(".")[0] in _LIBRARY:
                return False
            return isinstance(vars(c)[method], (types.FunctionType, staticmethod,
                                                classmethod))
    return False


def _value_method_calls(fn: Any) -> tuple:
    """The calls ``p.m(...)`` in ``fn``'s body of a positional parameter ``p`` and a
    method ``m`` of a value's name that the transform lowers as the value's."""
    defined = syntax.function_node(fn)
    if defined is None:
        return ()
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return ()
    source = "".join(lines)
    indent = len(source) - len(textwrap.dedent(source)) if lines else 0
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else indent
    code = fn.__code__
    params = code.co_varnames[:code.co_argcount]
    typed = CALLED_NAMES(fn)
    out = []
    for node in ast.walk(defined):
        func = getattr(node, "func", None) if isinstance(node, ast.Call) else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id in params and func.value.id not in typed and \
                func.attr in _VALUE_METHODS and not func.attr.startswith("__"):
            line = first + func.lineno - 1
            text = lines[func.lineno - 1].rstrip("\n") if func.lineno <= len(lines) else ""
            out.append((params.index(func.value.id), func.attr, line,
                        func.col_offset + indent + 1, text))
    return tuple(out)
