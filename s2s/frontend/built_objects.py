"""Objects of your own classes built inside the function (issue 23): an unregistered
dataclass (defaults, ``default_factory``, keywords, ``frozen``, ``__post_init__``) or
a class whose ``__init__`` computes, calls your functions, or sets attributes on a
static test.

The object is the record of its fields: its constructor is written as a function of
the constructor's parameters that returns the dict of the attributes it sets, and the
call ``Model(x)`` is a call of that function (``objects.computed_call``), whose
result the transforms carry as any dict (a pytree of its fields).  The function is
your ``__init__`` (or ``__post_init__``) itself, its ``self.w = v`` written as
``self["w"] = v`` after a first line ``self = {...}``; its lines keep your file's
numbers, so an error in it quotes your line.  A dataclass's generated ``__init__``
has no source: its fields become the parameters (their defaults the ``__init__``'s,
a ``default_factory`` called where the field is not passed).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
import types
from typing import Any

import libcst as cst
import libcst.matchers as matchers

from .. import syntax
from ..ir.nodes import Const, Let, Return, Var, walk
from . import record_methods
from .init_lists import HeldLists, grown_in_loop, local_lists
from .number_fields import fresh_lists, is_number, number_fields
from .record_spelling import mark
from .source import literal_value
from .synthesize import signature_text, synthesize

_LIBRARIES = ("numpy", "scipy", "jax", "builtins", "s2s", "collections", "functools")


class RecordInit:
    """How ``cls(...)`` builds the record: ``fn(*params)`` returns the dict of its
    fields (``keys``: every attribute it may set)."""

    def __init__(self, fn: Any, params: tuple[str, ...], keys: tuple[str, ...],
                 factories: dict[str, bool] | None = None) -> None:
        self.fn, self.params, self.keys = fn, params, keys
        self.factories = factories or {}  # a dataclass's fields with a default_factory


_CACHE: dict[tuple, Any] = {}
_EMPTY = {list: "[]", dict: "{}", tuple: "()"}  # (factories written as literals)


def record_init(cls: type, static: tuple = ()) -> RecordInit | str | None:
    """The constructor of an unregistered class as a function returning its fields;
    a string says why s2s cannot build it, None: not a class of yours.  ``static``:
    ``(parameter, value)`` pairs of booleans, None and strings the call passes (or
    leaves at their default), written into the function as literals, so a test on
    them (``if bias:``) is decided when transforming: one function per values."""
    init, post = getattr(cls, "__init__", None), getattr(cls, "__post_init__", None)
    key = (cls, init, getattr(init, "__code__", None), post, getattr(post, "__code__", None),
           static, _methods_now(cls))
    if key not in _CACHE:
        _CACHE[key] = _record_init(cls, dict(static))
    return _CACHE[key]


def _methods_now(cls: type) -> tuple:
    """The class's functions (its bases' too): a constructor calls them, so one
    replaced makes the constructor's function again."""
    return tuple((k, v, v.__code__) for c in cls.__mro__[:-1] for k, v in vars(c).items()
                 if isinstance(v, types.FunctionType))


def field_key(let: Any) -> Any:
    """The key ``let`` reads (``getitem`` of one constant: ``m.w``, ``self["w"]``)."""
    index = let.params.get("index") if let.prim == "getitem" else None
    items = getattr(index, "items", None)
    if not items or len(items) != 1 or not isinstance(items[0], Const):
        return None
    return items[0].value if isinstance(items[0].value, str) else None


class Items:
    """A field holding a list (or tuple) of objects of one class (``self.layers =
    [Layer(w) for w in ws]``): made again item by item."""

    def __init__(self, built: Any) -> None:
        self.built = built
        self.record = self.plain = True

    def make(self, value: Any) -> Any:
        return type(value)(self.built.make(v) if isinstance(v, dict) else v for v in value)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Items) and other.built == self.built

    def __hash__(self) -> int:
        return hash(("items", self.built))


class _Spelled:
    """A class attribute ``self.scale`` reads: spelled ``Cls.scale`` (read each call);
    ``maybe``: a method sets it on the object too (``self.get("scale", Cls.scale)``)."""

    def __init__(self, text: str, maybe: bool = False) -> None:
        self.text, self.maybe = text, maybe


class _NotNone:
    """A static argument known not to be None (an object the caller built): only its
    ``is None`` tests are decided."""

    def __repr__(self) -> str:
        return "<not None>"


NOT_NONE = _NotNone()
FACTORY = "<s2s: its default_factory>"  # (a field left out: its factory is called)


def specialized(made: Any, args: list, kwargs: dict, objects: Any = None
                ) -> tuple[Any, list, dict]:
    """The record's function for this call (its static arguments written in) and
    the arguments left to pass.  ``objects(atom)``: does ``atom`` hold an object?"""
    try:
        sig = inspect.signature(made.init)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return made.init, args, kwargs
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY)
           for p in sig.parameters.values()):
        return made.init, args, kwargs
    static = {}
    for name, p in sig.parameters.items():
        value = bound.arguments.get(name, p.default)
        value = value.value if isinstance(value, Const) else value
        if name in bound.arguments and not isinstance(bound.arguments[name], Const):
            if objects is not None and objects(bound.arguments[name]):
                static[name] = NOT_NONE  # (`first is not None` decided)
            continue
        if name not in bound.arguments and made.factories.get(name):
            static[name] = FACTORY  # (a default_factory's field left out: its factory)
            continue
        if isinstance(value, (bool, str)) or value is None:
            static[name] = value
    if not static:
        return made.init, args, kwargs
    found = record_init(made.cls, tuple(sorted(static.items(), key=lambda kv: kv[0])))
    if not isinstance(found, RecordInit):
        return made.init, args, kwargs
    return found.fn, [], {k: v for k, v in bound.arguments.items()
                          if k not in static or static[k] is NOT_NONE}


def _record_init(cls: type, static: dict[str, Any]) -> RecordInit | str | None:
    module = getattr(cls, "__module__", "") or ""
    if module.split(".")[0] in _LIBRARIES or not isinstance(cls.__dict__, types.MappingProxyType):
        return None
    why = creation_hooks(cls) or attribute_hooks(cls)
    if why:
        return why
    if dataclasses.is_dataclass(cls) and "__init__" not in _own_methods(cls):
        return _dataclass(cls, static)
    init = cls.__init__
    if init is object.__init__:  # (no constructor: a record of no fields)
        return RecordInit(_write(cls, "self = {}", "", None, {}), (), ())
    if not isinstance(init, types.FunctionType):
        return "its `__init__` is not a Python function"
    params = [p for p in list(inspect.signature(init).parameters)[1:]]
    return _from_method(cls, init, None, params, "self = {}", static=static)


def creation_hooks(cls: type) -> str:
    """Why Python's own construction of the class is not ``__init__`` on a fresh
    object ("" where it is): a ``__new__`` (which may return anything), a metaclass
    whose ``__call__`` is its own (``abc.ABCMeta``'s is ``type``'s: fine)."""
    if getattr(cls, "__new__", object.__new__) is not object.__new__:
        return "it defines `__new__` (which may make the object otherwise, or another)"
    if type(cls).__call__ is not type.__call__:
        return "its metaclass defines `__call__` (construction is not `__init__`)"
    return ""


def attribute_hooks(cls: type) -> str:
    """Why a class's attributes are not plain fields ("" where they are): it defines
    ``__setattr__``, ``__getattr__``... (a frozen dataclass's own are fine)."""
    frozen = dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen  # type: ignore
    for special in ("__setattr__", "__getattr__", "__getattribute__", "__delattr__"):
        if getattr(cls, special, None) is not getattr(object, special, None) and not (
                frozen and special in ("__setattr__", "__delattr__")):
            return f"it defines `{special}` (its attributes are not plain fields)"
    return ""


def _own_methods(cls: type) -> set[str]:
    return {k for c in cls.__mro__[:-1] if not dataclasses.is_dataclass(c)
            for k in vars(c)}


def _dataclass(cls: type, static: dict[str, Any]) -> RecordInit | str:
    fields = dataclasses.fields(cls)
    initvars = [f.name for f in cls.__dataclass_fields__.values()  # type: ignore
                if f._field_type is getattr(dataclasses, "_FIELD_INITVAR", None)]
    static = {k: v for k, v in static.items() if v is not NOT_NONE}  # (objects: passed)
    params = [p for p in list(inspect.signature(cls.__init__).parameters)[1:]
              if p not in static]
    cells: dict[str, Any] = {}
    items = []
    factories = {}
    for f in fields:
        value = repr(static[f.name]) if f.name in static else f.name
        if f.default_factory is not dataclasses.MISSING:
            factories[f.name] = True
            made = _EMPTY.get(f.default_factory) or literal_factory(  # type: ignore
                f.default_factory) or f"{f.name}_factory()"
            if made.endswith("_factory()"):
                cells[f"{f.name}_factory"] = f.default_factory
            left_out = static.get(f.name) == FACTORY or not f.init
            items.append(f"{f.name!r}: {made}" if left_out else f"{f.name!r}: {value}")
        elif f.init:
            items.append(f"{f.name!r}: {value}")
        elif f.default is not dataclasses.MISSING:  # (`init=False`: its default)
            cells[f"{f.name}_default"] = f.default
            items.append(f"{f.name!r}: {f.name}_default")
    prologue = "self = {" + ", ".join(items) + "}"
    post = cls.__dict__.get("__post_init__") or getattr(cls, "__post_init__", None)
    init = cls.__init__
    defaults = {p.name: (None if p.default.__class__.__name__ == "_HAS_DEFAULT_FACTORY_CLASS"
                         else p.default)
                for p in list(inspect.signature(init).parameters.values())[1:]
                if p.default is not inspect.Parameter.empty}
    if post is None:
        fn = _write(cls, prologue, _signature(params, defaults), None, cells)
        _set_defaults(fn, params, defaults)
        return RecordInit(fn, tuple(params), tuple(f.name for f in fields), factories)
    if not isinstance(post, types.FunctionType):
        return "its `__post_init__` is not a Python function"
    given = list(inspect.signature(post).parameters.values())[1:]
    if len(given) != len(initvars) or any(p.kind not in (
            p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in given):
        return "its `__post_init__` does not take its `InitVar` fields one by one"
    for p, name in zip(given, initvars):  # (an InitVar: a parameter of the record's
        value = repr(static[name]) if name in static else name  # function, given to
        if p.name != value:  # __post_init__ under its own parameter's name)
            prologue += f"; {p.name} = {value}"
    if cls.__dataclass_params__.frozen and _writes_attributes(post):  # type: ignore
        return ("it is frozen and its `__post_init__` sets `self.<name> = ...` (Python "
                "raises FrozenInstanceError: use `object.__setattr__(self, ...)`)")
    made = _from_method(cls, post, _signature(params, defaults), params, prologue, cells,
                        [f.name for f in fields],
                        attrs={k: v for k, v in static.items() if v != FACTORY})
    if isinstance(made, RecordInit):
        _set_defaults(made.fn, params, defaults)
        made.factories = factories
    return made


def literal_factory(factory: Any) -> str | None:
    """``field(default_factory=lambda: [1.0, 0.5])``: the literal its lambda returns,
    as source (a new list at each call, as Python's call of the factory makes), so its
    length and items are known when s2s transforms (``sum(self.scales)``); None for
    any other factory (called when the code runs)."""
    code = getattr(factory, "__code__", None)
    if not isinstance(factory, types.FunctionType) or factory.__name__ != "<lambda>" or (
            code.co_argcount or factory.__closure__):
        return None
    try:
        tree = syntax.parse(textwrap.dedent(inspect.getsource(factory)).strip())
    except (OSError, TypeError, SyntaxError):
        return None  # (a lambda on a line of its own parses; one in a call may not)
    bodies = [node.body for node in ast.walk(tree) if isinstance(node, ast.Lambda)]
    try:
        value = ast.literal_eval(bodies[0]) if len(bodies) == 1 else None
    except ValueError:
        return None
    if not isinstance(value, (list, tuple)) or not all(
            type(v) in (int, float) for v in value) or value != factory():
        return None
    return repr(value)


def _signature(params: list[str], defaults: dict[str, Any]) -> str:
    return ", ".join(p + ("=None" if p in defaults else "") for p in params)


def _set_defaults(fn: Any, params: list[str], defaults: dict[str, Any]) -> None:
    fn.__defaults__ = tuple(defaults[p] for p in params if p in defaults) or None


def _write(cls: type, prologue: str, signature: str, body: str | None,
           cells: dict[str, Any], first: int = 1, display: Any = None,
           me: str = "self", name: str | None = None, namespace: Any = None,
           tail: bool = True) -> Any:
    name = name or f"{cls.__name__}_init"
    lines = [f"def {name}({signature}):", f"    {prologue}"]
    lines += [body] if body else []
    lines += [f"    return {me}\n"] if tail else [""]
    text = "\n".join(lines)
    if namespace is None:
        namespace = vars(inspect.getmodule(cls)) if inspect.getmodule(cls) else {}
    return synthesize(text, name, namespace, "record", first, display, cells=cells)


def _parsed(method: Any) -> tuple | str:
    """The method's lines, first line number and ``def`` (libcst), or why not."""
    where = f"`{method.__name__}`"
    try:
        lines, first = inspect.getsourcelines(method)
    except (OSError, TypeError):
        return f"its {where} has no source to read"
    try:
        fdef = cst.parse_module(textwrap.dedent("".join(lines))).body[0]
    except cst.ParserSyntaxError:
        return f"its {where} cannot be parsed"
    setter = isinstance(fdef, cst.FunctionDef) and all(  # (`@w.setter`, `@property`:
        matchers.matches(d.decorator, matchers.Attribute(attr=matchers.Name(  # its
            "setter")) | matchers.Name("property")) for d in fdef.decorators)  # function)
    if not isinstance(fdef, cst.FunctionDef) or not setter or \
            not isinstance(fdef.body, cst.IndentedBlock) or not fdef.params.params:
        return f"its {where} is not a plain `def` with `self` first"
    return lines, first, fdef.with_changes(decorators=[])


def _from_method(cls: type, method: Any, signature: str | None, params: list[str],
                 prologue: str, cells: dict[str, Any] | None = None,
                 keys: list[str] | None = None, static: dict[str, Any] | None = None,
                 attrs: dict[str, Any] | None = None, kind: str = "init") -> Any:
    """``__init__`` (or ``__post_init__``) as the function building the record;
    ``kind="method"``: a method it calls (``record_methods.py``), a function of its
    parameters and of the fields (``**self``)."""
    where = f"`{method.__name__}`"
    parsed = _parsed(method)
    if isinstance(parsed, str):
        return parsed.replace(f"its {where} ", "") if kind == "method" else parsed
    lines, first, fdef = parsed
    me = fdef.params.params[0].name.value
    owner = record_methods.owner_of(cls, method) or cls
    calls = record_methods.SelfCalls(cls, owner, me, method.__globals__, lambda f, star: (
        _method_record(cls, f, star)), {m.value for m in _walk(fdef)
                                        if isinstance(m, cst.Name)})
    original, fdef = fdef, fdef.with_changes(body=fdef.body.visit(calls))
    if calls.why:
        return calls.why if kind == "method" else f"its {where} {calls.why}"
    writes = kind == "init" or calls.threads or record_methods.sets_attributes(fdef, me)
    paired = kind == "paired"  # (returns a value too: `(value, record)`, stateful.py)
    why = _unreadable(fdef, me, returns=writes and not paired)
    if why and kind == "method":
        return why.replace("returns a value", "sets attributes of the object and "
                           "returns a value (use it as a statement, or return the value "
                           "from a method that sets nothing)")
    held = local_lists(fdef, me) if kind == "init" else {}
    why = why or (grown_in_loop(original, me, held, cls) if kind == "init" else "")
    if why:
        return f"its {where} {why}"
    assigned = _set_attributes(fdef, me)
    if held:  # (a list field grown: a local name while it runs, init_lists.py)
        lister = HeldLists(me, held)
        fdef = fdef.with_changes(body=lister.finish(fdef.body.visit(lister)))
    static = {k: v for k, v in (static or {}).items() if k not in _assigned_names(fdef)}
    written = {k for k, v in static.items() if v is not NOT_NONE}  # (as literals)
    attrs = {k: v for k, v in (attrs or {}).items() if k not in assigned}
    if signature is None:
        signature = cst.Module([]).code_for_node(fdef.params.with_changes(params=[
            p for p in fdef.params.params[1:] if p.name.value not in written]))
        params = [p for p in params if p not in written]
    attrs = _class_attributes(cls, me, fdef, assigned, attrs, keys)
    if isinstance(attrs, str):
        return attrs if kind != "init" else f"its {where} {attrs}"
    rewritten = fdef.body.visit(_Record(me, static, attrs, returns=writes, paired=paired,
                                        numbers=number_fields(cls), lists=fresh_lists(
                                            fdef, me) if kind == "init" else frozenset()))
    assert isinstance(rewritten, cst.IndentedBlock)
    body = rewritten.with_changes(body=[rewritten.body[0].with_changes(leading_lines=[]),
                                        *rewritten.body[1:]])
    wrapper = cst.parse_module("def f():\n    pass\n").body[0]
    assert isinstance(wrapper, cst.FunctionDef)
    text = cst.Module([wrapper.with_changes(body=body)]).code
    body_text = text.split("\n", 1)[1].rstrip("\n")
    line = _body_line(lines, first)
    display = (inspect.getsourcefile(method) or "", {first + i: t.rstrip("\n") for i, t in
                                                    enumerate(lines)},
               len(lines[0]) - len(lines[0].lstrip()))
    if kind != "init":
        prologue = "self = {**self}" if writes else "pass"
    prologue = prologue.replace("self = ", f"{me} = ", 1).replace("**self", f"**{me}")
    name = f"{owner.__name__}_{method.__name__.strip('_')}" if kind != "init" else None
    if name and any(isinstance(v, property) and v.fset is method for k in cls.__mro__
                    for v in vars(k).values()):
        name += "_setter"  # (its getter: `Cls_w`)
    if paired and not isinstance(_last(rewritten), cst.Return):
        body_text += f"\n    return None, {me}"  # (falling off its end: None)
    fn = _write(cls, prologue, signature, body_text, {**(cells or {}), **calls.cells},
                max(line - 2, 1), display if line > 2 else None, me, name,
                method.__globals__, tail=writes and not paired)
    mark(fn, f"{owner.__name__}.{method.__name__}", me, held)  # (its errors: yours)
    found = keys or []
    found += [k for k in assigned if k not in found]
    for called in calls.cells.values():
        found += [k for k in getattr(called, record_methods.THREADS, ()) if k not in found]
    if writes and not paired:
        setattr(fn, record_methods.THREADS, tuple(found))
    if method.__name__ == "__init__" or kind != "init":  # (its defaults)
        _defaults_of(fn, method)
    return RecordInit(fn, tuple(params), tuple(found))


def _class_attributes(cls: type, me: str, fdef: Any, assigned: list[str],
                      attrs: dict[str, Any], keys: list[str] | None) -> dict | str:
    """The attributes of the class body the method reads as ``self.scale``, spelled
    ``Cls.scale`` (read at each call); where a method of the class sets it on the
    object too, ``self.get("scale", Cls.scale)``: the object's where it has one, as
    Python finds it.  A string where the module does not name the class."""
    read = {node.attr.value for node in _walk(fdef.body) if isinstance(
        node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == me}
    set_anywhere = record_methods.field_names(cls) | set(assigned)
    module = inspect.getmodule(cls)
    named = module is not None and getattr(module, cls.__name__, None) is cls
    out = dict(attrs)
    for klass in cls.__mro__[:-1]:
        for k, v in vars(klass).items():
            if k not in read or k in out or k in (keys or ()) or k.startswith("__") or (
                    callable(v)) or isinstance(v, (property, classmethod, staticmethod)):
                continue
            if not named:
                return (f"reads `{me}.{k}`, an attribute of the class `{cls.__name__}`, "
                        "which its module does not name (s2s reads it as "
                        f"`{cls.__name__}.{k}` at each call): define the class at "
                        "module level, or set the attribute in `__init__`")
            text = f"{cls.__name__}.{k}"
            out[k] = _Spelled(text, k in set_anywhere)
    return out


def _last(block: Any) -> Any:
    """The last simple statement of a body (None where it ends in a compound one)."""
    last = block.body[-1] if block.body else None
    return last.body[-1] if isinstance(last, cst.SimpleStatementLine) else None


def _body_line(lines: list[str], first: int) -> int:
    """The file's line of a method's first body statement."""
    pos = cst.MetadataWrapper(cst.parse_module(textwrap.dedent("".join(lines))))
    start = pos.resolve(cst.metadata.PositionProvider)
    stmt = pos.module.body[0]
    assert isinstance(stmt, cst.FunctionDef) and isinstance(stmt.body, cst.IndentedBlock)
    return first + start[stmt.body.body[0]].start.line - 1


def _defaults_of(fn: Any, method: Any) -> None:
    """``fn``'s defaults: the method's, for the parameters it has."""
    given = inspect.signature(method).parameters
    code = fn.__code__
    pos = code.co_varnames[:code.co_posonlyargcount + code.co_argcount]
    pos = code.co_varnames[:code.co_argcount]
    kw = code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]
    fn.__defaults__ = tuple(given[p].default for p in pos if p in given
                            and given[p].default is not given[p].empty) or None
    fn.__kwdefaults__ = {p: given[p].default for p in kw if p in given
                         and given[p].default is not given[p].empty} or None


def _method_record(cls: type, method: Any, forwarding: bool = False,
                   paired: bool = False) -> Any:
    """A method the constructor calls on its object, as a function over the record:
    ``(function, sets attributes, positional-only count, defaults)``, or why not;
    ``forwarding``: called with ``*args``/``**kwargs``, no parameter positional-only;
    ``paired``: a method returning a value, written returning ``(value, record)``."""
    def make() -> Any:
        sig = inspect.signature(method)
        ps = list(sig.parameters.values())[1:]
        if any(p.kind is p.VAR_KEYWORD for p in ps):
            return "takes `**kwargs`"
        posonly = 0 if forwarding else record_methods.colliding(
            method, record_methods.field_names(cls))
        plain = [p.name for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        star = next((p.name for p in ps if p.kind is p.VAR_POSITIONAL), None)
        kwonly = [p.name for p in ps if p.kind is p.KEYWORD_ONLY]
        defaulted = {p.name for p in ps if p.default is not p.empty}
        parts = [signature_text(plain[:posonly], [], defaulted)] if posonly else []
        parts += ["/"] if posonly else []
        rest = signature_text(plain[posonly:], kwonly, defaulted, star)
        parts += [rest] if rest else []
        parsed = _parsed(method)
        me = parsed[2].params.params[0].name.value if not isinstance(parsed, str) else "self"
        if me in plain or me in kwonly or me == star:
            return "has a parameter named like its `self`"
        signature = ", ".join(parts + [f"**{me}"])
        made = _from_method(cls, method, signature, plain, "", kind="paired" if paired
                            else "method")
        if isinstance(made, str):
            return made
        defaults = {p.name: p.default for p in ps[:posonly] if p.default is not p.empty}
        return made.fn, hasattr(made.fn, record_methods.THREADS), posonly, defaults
    return record_methods.cached((cls, method, forwarding, _methods_now(cls), paired),
                                 make)


def _assigned_names(fdef: cst.FunctionDef) -> set[str]:
    """Names the body binds (a parameter rebound is not written in as a literal)."""
    out: set[str] = set()
    for node in _walk(fdef.body):
        targets: list[Any] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For)):
            targets = [node.target]
        elif isinstance(node, cst.NamedExpr):
            targets = [node.target]
        for t in targets:
            out |= _bound_by(t)
    return out


def _bound_by(target: Any) -> set[str]:
    """The names an assignment target binds: not an attribute's or an item's
    (``self.kind, self.scale = kind, scale`` binds no name: ``kind`` stays static)."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for e in target.elements for n in _bound_by(e.value)}
    if isinstance(target, cst.StarredElement):
        return _bound_by(target.value)
    return set()


def _writes_attributes(method: Any) -> bool:
    """Does the method's body assign ``self.<name> = ...``?"""
    try:
        fdef = cst.parse_module(textwrap.dedent(inspect.getsource(method))).body[0]
    except (OSError, TypeError, cst.ParserSyntaxError):
        return False
    if not isinstance(fdef, cst.FunctionDef) or not fdef.params.params:
        return False
    me = fdef.params.params[0].name.value
    return any(isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and any(
        isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and
        t.value.value == me for t in ([a.target for a in node.targets]
                                      if isinstance(node, cst.Assign) else [node.target]))
        for node in _walk(fdef.body))


def _set_attributes(fdef: cst.FunctionDef, me: str) -> list[str]:
    out: list[str] = []
    for node in _walk(fdef):
        targets: list[Any] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            targets = [node.target]
        elif isinstance(node, cst.Call) and _setattr_call(node, me):
            out.append(literal_value(node.args[1].value.value))  # type: ignore[attr-defined]
        for t in targets:
            if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and \
                    t.value.value == me and t.attr.value not in out:
                out.append(t.attr.value)
    return out


def _walk(node: cst.CSTNode) -> Any:
    yield node
    for child in node.children:
        yield from _walk(child)


def _setattr_call(node: cst.Call, me: str) -> bool:
    """``object.__setattr__(self, "w", v)`` (a frozen dataclass's ``__post_init__``)."""
    f = node.func
    return (isinstance(f, cst.Attribute) and f.attr.value == "__setattr__"
            and isinstance(f.value, cst.Name) and f.value.value == "object"
            and len(node.args) == 3 and isinstance(node.args[0].value, cst.Name)
            and node.args[0].value.value == me
            and isinstance(node.args[1].value, cst.SimpleString))


def _unreadable(fdef: cst.FunctionDef, me: str, returns: bool = True) -> str:
    """Why s2s cannot write the method's body as a function ("" where it can); its
    calls of the object's own methods are rewritten already (``SelfCalls``):
    ``returns``: it gives back the record, so it returns no value of its own."""
    for node in _walk(fdef.body):
        if isinstance(node, cst.Call):
            f = node.func
            if isinstance(f, cst.Name) and f.value == "super":
                return "calls `super()` other than as `super().method(...)`"
            if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and \
                    f.value.value == me:
                return (f"calls `{me}.{f.attr.value}(...)`, which is not a method of "
                        "its class (an attribute holding a function)")
        if isinstance(node, cst.Return) and node.value is not None and returns and not (
                isinstance(node.value, cst.Name) and node.value.value == me):  # (`self`)
            return "returns a value"
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return "defines a function or class"
    return ""


class _Record(cst.CSTTransformer):
    """``self.w`` as ``self["w"]``; ``object.__setattr__(self, "w", v)`` as
    ``self["w"] = v``; a bare ``return`` as ``return self``."""

    def __init__(self, me: str, static: dict[str, Any], attrs: dict[str, Any],
                 returns: bool = True, numbers: frozenset[str] = frozenset(),
                 lists: frozenset[str] = frozenset(), paired: bool = False) -> None:
        super().__init__()
        self.me, self.static, self.attrs, self.returns = me, static, attrs, returns
        self.paired = paired  # (`return v` as `return v, self`)
        self.numbers = numbers  # (fields only ever a Python number: number_fields.py)
        self.lists = lists  # (list fields `__init__` builds and appends to)
        self.skip = 0  # (inside an attribute's name or a keyword: not a read)
        self.targets: set[int] = set()  # (`self.count = ...`: no read of the class's)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.targets |= {id(t) for t in _walk(node.target)}

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.targets.add(id(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.targets.add(id(node.target))

    def visit_Attribute_attr(self, node: cst.Attribute) -> None:
        self.skip += 1

    def leave_Attribute_attr(self, node: cst.Attribute) -> None:
        self.skip -= 1

    def visit_Arg_keyword(self, node: cst.Arg) -> None:
        self.skip += 1

    def leave_Arg_keyword(self, node: cst.Arg) -> None:
        self.skip -= 1

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
        if not self.skip and updated.value in self.static and (
                self.static[updated.value] is not NOT_NONE):  # (a static argument)
            return cst.parse_expression(repr(self.static[updated.value]))
        return updated

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> Any:
        """``first is None`` (``is not``) of a static argument: decided."""
        if len(updated.comparisons) != 1 or not isinstance(updated.left, cst.Name):
            return updated
        test = updated.comparisons[0]
        if not (isinstance(test.operator, (cst.Is, cst.IsNot)) and isinstance(
                test.comparator, cst.Name) and test.comparator.value == "None"):
            return updated
        name = updated.left.value
        if name == "None":
            known = True
        elif self.static.get(name, None) is NOT_NONE:
            known = False
        else:
            return updated
        return cst.Name(str(known == isinstance(test.operator, cst.Is)))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> Any:
        if isinstance(updated.value, cst.Name) and updated.value.value == self.me and \
                updated.attr.value in self.attrs:  # (a dataclass's static field)
            value = self.attrs[updated.attr.value]
            if isinstance(value, _Spelled) and value.maybe:  # (the object's, if it has it)
                key = repr(updated.attr.value)
                return cst.parse_expression(f"{self.me}[{key}]" if id(original) in (
                    self.targets) else f"{self.me}.get({key}, {value.text})")
            return cst.parse_expression(value.text if isinstance(value, _Spelled)
                                        else repr(value))
        if isinstance(updated.value, cst.Name) and updated.value.value == self.me:
            return cst.Subscript(updated.value, [cst.SubscriptElement(
                cst.Index(cst.SimpleString(repr(updated.attr.value))))])
        return updated

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr) -> Any:
        value = updated.value
        f = original.value.func if isinstance(original.value, cst.Call) else None
        if isinstance(f, cst.Attribute) and f.attr.value == "append" and isinstance(
                f.value, cst.Attribute) and isinstance(f.value.value, cst.Name) and (
                f.value.value.value == self.me and f.value.attr.value in self.lists):
            field = value.func.value  # (`self["terms"]`; `self.terms + [v]`)
            return cst.Assign([cst.AssignTarget(field)], cst.BinaryOperation(
                field, cst.Add(), cst.List([cst.Element(value.args[0].value)])))
        if isinstance(value, cst.Call) and _setattr_call(value, self.me):
            key = value.args[1].value
            return cst.Assign([cst.AssignTarget(cst.Subscript(
                cst.Name(self.me), [cst.SubscriptElement(cst.Index(key))]))],
                value.args[2].value)
        return updated

    def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign) -> Any:
        """``self.steps += 1`` of a field only ever a Python number: Python's
        ``self.steps = self.steps + 1`` exactly (a number is not changed in place)."""
        target = original.target
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == self.me and target.attr.value in self.numbers
                and is_number(updated.value)):
            return updated
        op = getattr(cst, type(updated.operator).__name__.replace("Assign", ""))()
        value = self.attrs.get(target.attr.value)
        read = cst.parse_expression(f"{self.me}.get({target.attr.value!r}, {value.text})") \
            if isinstance(value, _Spelled) and value.maybe else updated.target
        return cst.Assign([cst.AssignTarget(updated.target)], cst.BinaryOperation(
            read, op, updated.value))

    def leave_Return(self, original: cst.Return, updated: cst.Return) -> Any:
        if self.paired:
            value = updated.value or cst.Name("None")
            return updated.with_changes(value=cst.Tuple([cst.Element(value), cst.Element(
                cst.Name(self.me))]))
        return updated.with_changes(value=cst.Name(self.me)) if (
            updated.value is None and self.returns) else updated


def returned_dict(fn: Any) -> Any:
    """The ``make_dict`` statement whose dict a function's IR returns, or None."""
    ret = next((s for s in reversed(getattr(fn, "body", [])) if isinstance(s, Return)),
               None)
    if ret is None or not isinstance(ret.value, Var):
        return None
    lets = [s for s in walk(fn.body) if isinstance(s, Let) and s.target == ret.value.name]
    if len(lets) != 1 or lets[0].prim != "make_dict" or "keys" not in lets[0].params:
        return None
    return lets[0]


def returned_keys(fn: Any) -> tuple[str, ...] | None:
    """The keys of the record a constructor's function returns (those the path
    decided when transforming sets), or None where its IR does not say."""
    let = returned_dict(fn)
    return None if let is None else tuple(let.params["keys"])


def returned_record(fn: Any) -> Any:
    """The ``Built`` of the object a function returns (``return Model(self.w * k)``),
    or None."""
    let = returned_dict(fn)
    return None if let is None else let.params.get("built")
