"""``p.get("s")``, ``p.items()``, ``opt.update(g)`` of an argument object whose class
defines that method itself (a dataclass, a NamedTuple, a plain class of yours).

The emitted code reads such an object as the dict of its fields, and a method named
as a dict's, an array's, a list's or a string's (``get``, ``keys``, ``items``,
``values``, ``update``, ``sum``, ``copy``...) is lowered as that value's method unless
the parameter's class is known to the transform (``callables._called_names``: a
method of no value's name called on it too).  Python runs the class's own method:
the two differ (``Store.get`` scaling a field read as ``fields["s"]``: a wrong
number), so such a call is refused at its line.

The object may reach the call through the functions it is passed to
(``inner(w, st)`` whose body calls ``st.get("s")``): the check follows it into every
function of yours the body calls with it (by name, a module's attribute, a method of
the object's classes, a constructor), through names bound from it (``q = st``,
``for o in st.items_list``).  Where it is passed to a callee s2s cannot name when
checking (a function held in a local name or a container), the call is refused too:
the callee might run a value's method on the object's fields."""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import types
from typing import Any, Callable

import numpy as np

from .. import syntax
from ..errors import Loc, TransformError

# (code, the arguments' classes) -> the names the check resolved: (namespace, name,
# object), all still bound so for the pass to hold
_PASSED: dict = {}
# code -> the function's facts (``_Facts``), or None where its source cannot be read
_FACTS: dict = {}
# (callables.py's: a value's method names, and the parameters whose class a transform
# knows; the latter installed by callables, which imports this module)
_VALUE_METHODS = frozenset(
    name for t in (np.ndarray, dict, list, tuple, set, str) for name in dir(t))
CALLED_NAMES: Callable[[Any], frozenset] = lambda fn: frozenset()  # noqa: E731
_LIBRARY = ("builtins", "typing", "collections", "dataclasses", "abc", "numpy", "types",
            "enum", "functools", "jax", "jaxlib", "s2s", "scipy", "math")


def refuse_value_methods(fn: Any, args: tuple, kwargs: dict | None = None) -> None:
    """Raise a located TransformError where ``fn``'s body, or a function of yours it
    passes an argument object to, calls ``p.m(...)`` on the object (or on a name bound
    from it) whose class defines ``m`` and the code would run a value's ``m``
    instead."""
    code = getattr(fn, "__code__", None)
    if code is None or not (args or kwargs):
        return
    try:
        key = (code, tuple(type(a) for a in args), tuple(
            (k, type(v)) for k, v in (kwargs or {}).items()))
        resolved = _PASSED.get(key)
    except TypeError:
        return
    if resolved is not None and all(ns.get(name, _GONE) is obj for ns, name, obj in resolved):
        return
    given = [*enumerate(args), *(kwargs or {}).items()]
    owned = [_owned(a) for _, a in given]
    if not any(own or nested for own, nested in owned):
        _PASSED[key] = ()
        return
    classes = {c for _, a in given for c in _classes(a)}
    methods = frozenset(m for own, nested in owned for m in own | nested)
    nested = frozenset(m for _, found in owned for m in found)
    facts = _facts_of(fn)
    if facts is None:
        return
    typed = CALLED_NAMES(fn)  # (a class known per call: its methods are the class's)
    tainted = {name for (slot, _), (own, inner) in zip(given, owned) if own or inner
               for name in _slot(facts, slot)}
    walk = _Walk(methods, nested, classes, getattr(fn, "__name__", "f"))
    walk.function(fn, facts, tainted, typed, self_name=None)
    _PASSED[key] = tuple(walk.resolved)


_GONE = object()


def _owned(value: Any, depth: int = 0) -> tuple[frozenset, frozenset]:
    """The value-named methods the class of ``value`` (an object of yours) defines
    itself, and those the classes of the objects its fields hold define."""
    cls = getattr(value, "of_class", None) or type(value)
    own = _own_methods(cls) if _yours(cls) else frozenset()
    nested: frozenset = frozenset()
    for v in _field_values(value) if depth < 3 else ():
        for item in (v if type(v) in (list, tuple) else (v,)):
            inner, deeper = _owned(item, depth + 1)
            nested |= inner | deeper
    return own, nested


_OWN: dict = {}


def _own_methods(cls: type) -> frozenset:
    key = (cls, tuple(id(v) for c in cls.__mro__[:-1] for v in vars(c).values()))
    if key not in _OWN:
        _OWN[key] = frozenset(m for m in _VALUE_METHODS if not m.startswith("__") and (
            _own_method(cls, m)))
    return _OWN[key]


def _classes(value: Any, depth: int = 0) -> set:
    cls = getattr(value, "of_class", None) or type(value)
    out = {cls} if _yours(cls) else set()
    for v in _field_values(value) if depth < 3 else ():
        for item in (v if type(v) in (list, tuple) else (v,)):
            out |= _classes(item, depth + 1)
    return out


def _field_values(value: Any) -> list:
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return list(value)
    if type(value) in (list, tuple):
        return list(value)
    found = getattr(value, "__dict__", None)
    return list(found.values()) if isinstance(found, dict) and _yours(type(value)) else []


def _yours(cls: type) -> bool:
    module = (getattr(cls, "__module__", None) or "builtins").split(".")[0]
    return isinstance(cls, type) and module not in _LIBRARY


def _own_method(cls: type, method: str) -> bool:
    """Whether ``cls`` (a class of yours) defines ``method`` as a function itself."""
    for c in cls.__mro__[:-1]:
        if method in vars(c):
            if (c.__module__ or "builtins").split(".")[0] in _LIBRARY:
                return False
            return isinstance(vars(c)[method], (types.FunctionType, staticmethod,
                                                classmethod))
    return False


class _Facts:
    """What the check reads of one function's body: its parameters, its method calls
    on names (``(root name, method, line, column, text)``), its calls (``(callee
    node, [(position or keyword, root names)], spread)``) and its bindings (``(target
    names, names read)``)."""

    def __init__(self, params: list[str], rest: list[str], nested: set[str]) -> None:
        self.params, self.rest, self.nested = params, rest, nested  # (rest: *a, **k)
        self.positional = len(params)
        self.methods: list[tuple] = []
        self.calls: list[tuple] = []
        self.binds: list[tuple] = []


def _facts_of(fn: Any) -> _Facts | None:
    code = fn.__code__
    if code not in _FACTS:
        _FACTS[code] = _read_facts(fn)
    return _FACTS[code]


def _root(node: Any) -> str | None:
    """``p`` of ``p``, ``p.inner``, ``p.layers[0]``; None else."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _names(node: Any) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if node else set()


def _read_facts(fn: Any) -> _Facts | None:
    defined = syntax.function_node(fn)
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    if defined is None:
        return None
    source = "".join(lines)
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else len(source) - len(
        textwrap.dedent(source))
    code = fn.__code__
    count = code.co_argcount + code.co_kwonlyargcount
    params = list(code.co_varnames[:count])
    stars = bool(code.co_flags & inspect.CO_VARARGS) + bool(
        code.co_flags & inspect.CO_VARKEYWORDS)
    rest = list(code.co_varnames[count:count + stars])
    nested = {n.name for n in ast.walk(defined) if isinstance(
        n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not defined}
    facts = _Facts(params, rest, nested)
    facts.positional = code.co_argcount
    for node in ast.walk(defined):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and (
                node is not defined):  # (its parameters: bound from what it is given)
            inner = node.args
            names = {a.arg for a in (*inner.posonlyargs, *inner.args, *inner.kwonlyargs,
                                     *filter(None, (inner.vararg, inner.kwarg)))}
            facts.binds.append((names, {"<any>"}))
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            facts.binds.append(({n for t in targets for n in _names(t)}, _names(node.value)))
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            facts.binds.append((_names(node.target), _names(node.iter)))
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                facts.binds.append((_names(item.optional_vars), _names(item.context_expr)))
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and (root := _root(func.value)) is not None:
            line = first + func.lineno - 1
            text = lines[func.lineno - 1].rstrip("\n") if func.lineno <= len(lines) else ""
            facts.methods.append((root, func.attr, line, func.col_offset + indent + 1, text,
                                  isinstance(func.value, ast.Name)))
        given = [(i, _names(a)) for i, a in enumerate(node.args)]
        given += [(k.arg, _names(k.value)) for k in node.keywords]
        spread = any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords)
        line = first + node.lineno - 1
        text = lines[node.lineno - 1].rstrip("\n") if node.lineno <= len(lines) else ""
        facts.calls.append((func, given, spread, (line, node.col_offset + indent + 1, text)))
    return facts


def _slot(facts: _Facts, slot: int | str) -> list[str]:
    """The parameters an argument at a position (or keyword) may bind: its own, or
    every ``*args``/``**kwargs`` one where none is."""
    positional = facts.params[:facts.positional]
    if isinstance(slot, int) and slot < len(positional):
        return [positional[slot]]
    if isinstance(slot, str) and slot in facts.params:
        return [slot]
    return list(facts.rest)


class _Walk:
    """Follows the argument objects through the functions they are passed to."""

    def __init__(self, methods: frozenset, nested: frozenset, classes: set,
                 name: str) -> None:
        self.methods, self.nested, self.classes, self.name = methods, nested, classes, name
        self.seen: set = set()
        self.resolved: list[tuple] = []

    def function(self, fn: Any, facts: _Facts, tainted: set[str], typed: frozenset,
                 self_name: str | None) -> None:
        key = (fn.__code__, frozenset(tainted))
        if key in self.seen or not tainted:
            return
        self.seen.add(key)
        tainted = set(tainted)
        for _ in range(len(facts.binds) + 1):  # (names bound from the object's)
            grown = {t for targets, read in facts.binds if read & tainted or (
                "<any>" in read) for t in targets}
            if grown <= tainted:
                break
            tainted |= grown
        code = fn.__code__
        for root, method, line, col, text, direct in facts.methods:
            if root not in tainted or method not in (self.methods if direct else (
                    self.nested)) or direct and root in typed:
                continue  # (`st.w.sum()`: a field's, an object's only where fields
                # hold objects; `self.get(...)` in the class's method: a dict's too)
            raise TransformError(
                f"`.{method}(...)` is a method of your class, but s2s reads an argument "
                f"object as the dict of its fields and would run a dict's, an array's or "
                f"a list's `.{method}` instead",
                Loc(code.co_filename, line, col, text),
                f"call it as `YourClass.{method}(obj, ...)`, or rename the method",
                self.name)
        for func, given, spread, where in facts.calls:
            passed = [(slot, names & tainted) for slot, names in given if names & tainted]
            if not passed:
                continue
            for callee, head in self._callees(fn, facts, func, tainted):
                if callee is None:
                    line, col, text = where
                    raise TransformError(
                        "this call passes an argument object whose class defines a "
                        "method named as a dict's or an array's (" + ", ".join(
                            f"`{m}`" for m in sorted(self.methods)) + ") to a function "
                        "s2s cannot name here, which might run a value's method on the "
                        "object's fields", Loc(code.co_filename, line, col, text),
                        "call a function of yours by its name, or rename the method",
                        self.name)
                inner = _facts_of(callee)
                if inner is None:
                    continue
                hit = set(inner.params) | set(inner.rest) if spread else set()
                for slot, _ in passed:
                    hit |= set(_slot(inner, slot + head if isinstance(slot, int) else slot))
                own = inner.params[0] if head else None
                if isinstance(func, ast.Attribute) and _root(func.value) in tainted:
                    hit.add(inner.params[0]) if inner.params else None
                self.function(callee, inner, hit, frozenset(), own)
        for func, given, spread, where in facts.calls:  # (`st.scaled(k)`: its body)
            if isinstance(func, ast.Attribute) and _root(func.value) in tainted:
                for cls in self.classes:
                    found = inspect.getattr_static(cls, func.attr, None)
                    if isinstance(found, types.FunctionType) and (
                            inner := _facts_of(found)) is not None and inner.params:
                        self.function(found, inner, {inner.params[0]}, frozenset(),
                                      inner.params[0])

    def _callees(self, fn: Any, facts: _Facts, func: Any, tainted: set[str]) -> list:
        """``(function, parameters its call does not pass)`` the call ``func`` may
        run; ``(None, 0)`` where s2s cannot name it; [] for a library's."""
        if isinstance(func, ast.Attribute) and _root(func.value) in tainted:
            out = []
            for cls in self.classes:  # (`st.scaled(k)`: the class's function)
                found = inspect.getattr_static(cls, func.attr, None)
                if isinstance(found, types.FunctionType):
                    out.append((found, 1))
                elif isinstance(found, staticmethod) and isinstance(
                        found.__func__, types.FunctionType):
                    out.append((found.__func__, 0))
            return out  # (a value's method of a field: checked as a method call)
        if isinstance(func, ast.Name) and func.id in facts.nested:
            return []  # (a nested function: its body walked as part of this one's)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and (
                func.value.id in fn.__code__.co_varnames):  # (`model.apply(st)`)
            found = [inspect.getattr_static(c, func.attr, None) for c in self.classes]
            out = [(f, 1) for f in found if isinstance(f, types.FunctionType)]
            return out or [(None, 0)]
        obj = self._lookup(fn, func)
        if obj is _GONE:
            return [(None, 0)]
        return _runs(obj)

    def _lookup(self, fn: Any, func: Any) -> Any:
        """The object a callee's name or dotted name denotes where ``fn`` is defined,
        each lookup kept for the pass's key; ``_GONE`` where it cannot be named."""
        if isinstance(func, ast.Name):
            code = fn.__code__
            if func.id in code.co_varnames:
                return _GONE  # (a local name or parameter)
            if func.id in code.co_freevars and fn.__closure__:
                cell = fn.__closure__[code.co_freevars.index(func.id)]
                try:
                    return cell.cell_contents
                except ValueError:
                    return _GONE
            ns = fn.__globals__
            if func.id in ns:
                self.resolved.append((ns, func.id, ns[func.id]))
                return ns[func.id]
            builtins = ns.get("__builtins__")
            found = getattr(builtins, func.id, None) if not isinstance(builtins, dict) \
                else builtins.get(func.id)
            return found if found is not None else _GONE
        if isinstance(func, ast.Attribute):
            base = self._lookup(fn, func.value)
            if isinstance(base, (types.ModuleType, type)):
                return getattr(base, func.attr, _GONE)
        return _GONE


def _runs(obj: Any) -> list:
    """The functions of yours a call of ``obj`` runs, with how many leading
    parameters the call does not pass (a method's ``self``)."""
    module = (getattr(obj, "__module__", None) or "builtins").split(".")[0]
    if isinstance(obj, functools.partial):  # (its arguments: moved to the parameters)
        return [(None, 0)] if obj.args or obj.keywords else _runs(obj.func)
    if isinstance(obj, types.FunctionType):
        return [] if module in _LIBRARY else [(obj, 0)]
    if isinstance(obj, type):
        if not _yours(obj):
            return []
        return [(f, 1) for name in ("__init__", "__post_init__", "__new__")
                if isinstance(f := inspect.getattr_static(obj, name, None),
                              types.FunctionType) and _yours_fn(f)]
    if isinstance(obj, types.MethodType):
        return [] if module in _LIBRARY else [(obj.__func__, 1)] if isinstance(
            obj.__func__, types.FunctionType) else [(None, 0)]
    if module in _LIBRARY or isinstance(obj, (types.BuiltinFunctionType, np.ufunc)):
        return []
    call = inspect.getattr_static(type(obj), "__call__", None)
    if isinstance(call, types.FunctionType):
        return [(call, 1)]
    return [(None, 0)]


def _yours_fn(fn: Any) -> bool:
    return (getattr(fn, "__module__", None) or "builtins").split(".")[0] not in _LIBRARY
