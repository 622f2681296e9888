"""A constructor that calls other methods of its object (issue 23):
``super().__init__(w)`` up a chain of your base classes, ``Base.__init__(self, w)``,
``self.prepare(w)`` and ``y = self.norm()`` in ``__init__`` (or ``__post_init__``).

The record's constructor is a function returning the dict of the fields
(``built_objects.py``).  A method it calls is written the same way, as a function of
its own parameters and of the fields set so far, passed as keywords (``**self``):

* a method that sets attributes (``__init__`` of a base class, ``self.prepare(w)``)
  returns the record with its fields set: the call is the statement
  ``self = Base_init(w, **self)`` and the caller reads the fields it sets by key;
* a method that only reads them (``self.norm()``) is an expression
  ``Model_norm(**self)`` whose body reads ``self["w"]``.

Which function ``super().__init__`` is follows Python: the next class after the
method's own in the MRO of the class being built, so a chain (or a diamond of
cooperative ``super()`` calls) runs each base's body once, in Python's order.  A
parameter named like a field is passed by position (the function takes it
positional-only), so ``self.w = w; self.prepare(w)`` binds both.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
import types
from typing import Any

import libcst as cst

from .source import parse_ast

# (class built, the method's function) -> its function over the record, or why not
_CACHE: dict[tuple, Any] = {}
_BUILDING: set[tuple] = set()
THREADS = "__s2s_threads_record__"  # marks a method's function returning the record


def walk(node: cst.CSTNode) -> Any:
    yield node
    for child in node.children:
        yield from walk(child)


def sets_attributes(fdef: cst.FunctionDef, me: str) -> bool:
    """Does the body assign ``me.<name> = ...`` (or ``object.__setattr__(me, ...)``)?"""
    for node in walk(fdef.body):
        targets: list[Any] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            targets = [node.target]
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value == "__setattr__":
            return True
        if any(isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name)
               and t.value.value == me for t in targets):
            return True
    return False


def field_names(cls: type) -> set[str]:
    """Every attribute a method of the class (or a base) may set: the names a
    method's parameter must not share when the fields are passed as keywords."""
    functions = tuple(v for klass in cls.__mro__[:-1] for v in vars(klass).values()
                      if isinstance(v, types.FunctionType))
    hit = _FIELDS.get((cls, functions))
    if hit is not None:
        return hit
    out: set[str] = set()
    if dataclasses.is_dataclass(cls):
        out |= {f.name for f in dataclasses.fields(cls)}
    for klass in cls.__mro__[:-1]:
        for value in vars(klass).values():
            for fn in (value.fget, value.fset) if isinstance(value, property) else (value,):
                if isinstance(fn, types.FunctionType):  # (a setter's `self._w = v` too)
                    out |= set(_attribute_targets(fn))
    _FIELDS[(cls, functions)] = out
    return out


_FIELDS: dict[tuple, set[str]] = {}


def _attribute_targets(fn: Any) -> list[str]:
    try:
        tree = parse_ast(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return []
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fdef.args.args:
        return []
    me = fdef.args.args[0].arg
    out = []
    for node in ast.walk(fdef):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if \
            isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        out += [t.attr for t in targets if isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name) and t.value.id == me]
        if isinstance(node, ast.Call) and len(node.args) >= 2 and isinstance(
                node.args[1], ast.Constant) and isinstance(node.args[1].value, str) and \
                isinstance(node.func, ast.Attribute) and node.func.attr == "__setattr__":
            out.append(node.args[1].value)
    return out


def owner_of(cls: type, fn: Any) -> type | None:
    """The class in ``cls``'s MRO whose body defines ``fn``."""
    for klass in cls.__mro__:
        if any(v is fn for v in vars(klass).values()):
            return klass
    return None


def next_method(cls: type, owner: type, name: str) -> Any:
    """What ``super().name`` denotes in a method of ``owner`` for an object of
    ``cls``: the attribute of the next class after ``owner`` in ``cls.__mro__``."""
    mro = cls.__mro__
    for klass in mro[mro.index(owner) + 1:]:
        if name in vars(klass):
            return vars(klass)[name]
    return None


class Call:
    """One call of a method of the object, found in a method's body."""

    def __init__(self, fn: Any, args: list[cst.Arg], where: cst.CSTNode) -> None:
        self.fn, self.args, self.where = fn, args, where


def method_call(node: Any, cls: type, owner: type, me: str, namespace: dict) -> Any:
    """The method a call in ``owner``'s method calls on its object: ``super().f(...)``,
    ``super(Owner, self).f(...)``, ``me.f(...)``, ``Base.f(me, ...)``; a ``Call``, a
    string (why it cannot be built), or None (not a call of the object's method)."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return None
    base, name, args = node.func.value, node.func.attr.value, list(node.args)
    if isinstance(base, cst.Call) and isinstance(base.func, cst.Name) and \
            base.func.value == "super":
        if base.args and not (len(base.args) == 2 and isinstance(
                base.args[1].value, cst.Name) and base.args[1].value.value == me):
            return "calls `super(...)` with other arguments than its class and `self`"
        start = owner
        if base.args:
            first = base.args[0].value
            start = namespace.get(first.value) if isinstance(first, cst.Name) else None
            if not (isinstance(start, type) and start in cls.__mro__):
                return "calls `super(C, self)` with a class `C` s2s cannot find"
        found = next_method(cls, start, name)
        if found is None or found is getattr(object, name, None):
            return Call(None, args, node)  # (object's own: nothing to do)
        return _checked(found, name, args, node)
    if isinstance(base, cst.Name) and base.value == me:
        found = inspect.getattr_static(cls, name, None)
        if isinstance(found, staticmethod):
            return None
        if found is None or isinstance(found, (property, classmethod)):
            return None
        return _checked(found, name, args, node, bound=True)
    if isinstance(base, cst.Name) and args and not args[0].keyword and not args[0].star \
            and isinstance(args[0].value, cst.Name) and args[0].value.value == me:
        klass = namespace.get(base.value)
        if isinstance(klass, type) and klass in cls.__mro__:  # (`Base.__init__(self, w)`)
            found = vars(klass).get(name) if name in vars(klass) else next_method(
                cls, klass, name) if klass is not cls else None
            if found is None or found is getattr(object, name, None):
                return Call(None, args[1:], node)
            return _checked(found, name, args[1:], node)
    return None


def _checked(found: Any, name: str, args: list, node: Any, bound: bool = False) -> Any:
    if not isinstance(found, types.FunctionType):
        if bound:
            return None
        return f"calls `{name}`, which is not a Python function"
    return Call(found, args, node)


def bind_positionally(call: Call, posonly: int, defaults_cell: str) -> Any:
    """The call's arguments with the first ``posonly`` parameters given by position
    (a keyword for one of them moved to its place, a gap filled with the default
    read from a cell); a string where the call cannot be bound so."""
    sig = list(inspect.signature(call.fn).parameters.values())[1:]
    if not posonly:
        return call.args
    positional = [a for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
    out: list[cst.Arg] = []
    for i, p in enumerate(sig[:posonly]):
        if i < len(positional):
            out.append(positional[i].with_changes(comma=cst.MaybeSentinel.DEFAULT))
        elif p.name in keywords:
            out.append(cst.Arg(keywords.pop(p.name).value))
        elif p.default is not p.empty:
            out.append(cst.Arg(cst.parse_expression(f"{defaults_cell}[{p.name!r}]")))
        else:
            return f"leaves out the argument `{p.name}`"
    out += [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in positional[posonly:]]
    out += [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in keywords.values()]
    return out


def colliding(fn: Any, fields: set[str]) -> int:
    """How many leading parameters of ``fn`` (after ``self``) must be positional-only:
    up to the last one named like a field."""
    names = [p.name for p in list(inspect.signature(fn).parameters.values())[1:]
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY)]
    last = max((i + 1 for i, n in enumerate(names) if n in fields), default=0)
    return last


def cached(key: tuple, make: Any) -> Any:
    if key in _CACHE:
        return _CACHE[key]
    if key in _BUILDING:
        return "calls itself (a recursive method is not written as a record)"
    _BUILDING.add(key)
    try:
        _CACHE[key] = make()
    finally:
        _BUILDING.discard(key)
    return _CACHE[key]


class SelfCalls(cst.CSTTransformer):
    """Rewrites a method body's calls of its object's methods (``super().__init__(w)``,
    ``self.prepare(w)``, ``self.norm()``) as calls of their functions over the record,
    held in cells: ``self = Base_init(w, **self)`` for one that sets attributes, an
    expression ``Model_norm(**self)`` for one that reads them.  ``make(fn)`` gives
    ``(function, sets attributes, positional-only count, defaults)`` or why not;
    ``why`` is set where a call cannot be written so."""

    def __init__(self, cls: type, owner: type, me: str, namespace: dict,
                 make: Any, taken: set[str]) -> None:
        super().__init__()
        self.cls, self.owner, self.me, self.namespace = cls, owner, me, namespace
        self.make, self.taken = make, taken
        self.cells: dict[str, Any] = {}
        self.why = ""
        self.threads = False  # (a call that sets attributes: this method does too)
        self._statements: set[int] = set()  # calls that are a whole statement
        self._assign: set[int] = set()  # new calls returning the record
        self._dropped: set[int] = set()  # `super().__init__()` of `object`
        self._targets: set[int] = set()  # attributes assigned (not read)

    def visit_Expr(self, node: cst.Expr) -> None:
        self._statements.add(id(node.value))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets |= {id(t) for t in walk(node.target)}

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets.add(id(node.target))
        if self._property(node.target) is not None and not self.why:
            self.why = (f"updates the property `{node.target.attr.value}` in place "
                        f"(write `{self.me}.{node.target.attr.value} = "
                        f"{self.me}.{node.target.attr.value} + ...`)")

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets.add(id(node.target))

    def _property(self, node: Any) -> property | None:
        """The property ``self.w`` denotes, where ``w`` is one of the class's."""
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                and node.value.value == self.me):
            return None
        found = inspect.getattr_static(self.cls, node.attr.value, None)
        return found if isinstance(found, property) else None

    def _accessor(self, fn: Any, what: str) -> Any:
        """``(cell, positional-only count)`` of a property's getter or setter as a
        function over the record, or None (``why`` set)."""
        made = self.make(fn, False) if isinstance(fn, types.FunctionType) else (
            "is not a Python function")
        if isinstance(made, str):
            self.why = self.why or f"uses {what}, which {made}"
            return None
        cell = self._cell(made[0])
        if made[3]:
            self.cells[f"{cell}_defaults"] = made[3]
        return cell, made[2], made[1]

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> Any:
        """``self.scale`` of a ``@property``: its getter called on the record."""
        prop = self._property(original)
        if prop is None or id(original) in self._targets or self.why:
            return updated
        if prop.fget is None:
            self.why = f"reads the property `{original.attr.value}`, which has no getter"
            return updated
        found = self._accessor(prop.fget, f"the property `{original.attr.value}`")
        if found is None:
            return updated
        cell, _, writes = found
        if writes:
            self.why = f"reads the property `{original.attr.value}`, whose getter sets " \
                "attributes"
            return updated
        return cst.Call(cst.Name(cell), [cst.Arg(cst.Name(self.me), star="**")])

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> Any:
        """``self.w = v`` of a ``@property``: ``self = Cls_w(v, **self)``, its setter
        called on the record (Python's ``Cls.w.fset(self, v)``)."""
        hits = [t for a in original.targets for t in walk(a.target)
                if self._property(t) is not None]
        if not hits or self.why:
            return updated
        name = hits[0].attr.value
        if len(original.targets) != 1 or original.targets[0].target is not hits[0]:
            self.why = f"sets the property `{name}` in an unpacking or chained assignment"
            return updated
        prop = self._property(hits[0])
        if prop.fset is None:
            self.why = f"sets the property `{name}`, which has no setter (Python's " \
                "AttributeError)"
            return updated
        found = self._accessor(prop.fset, f"the setter of `{name}`")
        if found is None:
            return updated
        cell, posonly, _ = found
        args = bind_positionally(Call(prop.fset, [cst.Arg(updated.value)], original),
                                 posonly, f"{cell}_defaults")
        if isinstance(args, str):
            self.why = f"{args} (the setter of `{name}`)"
            return updated
        self.threads = True
        return cst.Assign([cst.AssignTarget(cst.Name(self.me))], cst.Call(cst.Name(cell), [
            *[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args],
            cst.Arg(cst.Name(self.me), star="**")]))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> Any:
        found = method_call(updated, self.cls, self.owner, self.me, self.namespace)
        if found is None or self.why:
            return updated
        if isinstance(found, str):
            self.why = found
            return updated
        statement = id(original) in self._statements
        if found.fn is None:  # (object.__init__: nothing)
            if not statement:
                self.why = "uses the value of `super().__init__(...)`"
                return updated
            self._dropped.add(id(updated))
            return updated
        made = self.make(found.fn, any(a.star for a in found.args))
        if isinstance(made, str):
            self.why = f"calls `{found.fn.__name__}`, which {made}"
            return updated
        fn, writes, posonly, defaults = made
        if writes and not statement:
            self.why = (f"uses the value of `{found.fn.__name__}(...)`, a method that "
                        "sets attributes of the object")
            return updated
        cell = self._cell(fn)
        args = bind_positionally(found, posonly, f"{cell}_defaults")
        if isinstance(args, str):
            self.why = f"{args} (`{found.fn.__name__}`)"
            return updated
        if defaults:
            self.cells[f"{cell}_defaults"] = defaults
        call = cst.Call(cst.Name(cell), [
            *[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args],
            cst.Arg(cst.Name(self.me), star="**")])
        if writes:
            self.threads = True
            self._assign.add(id(call))
        return call

    def _cell(self, fn: Any) -> str:
        for name, value in self.cells.items():
            if value is fn:
                return name
        base = fn.__name__
        name, i = base, 2
        while name in self.taken or name in self.cells:
            name, i = f"{base}_{i}", i + 1
        self.cells[name] = fn
        return name

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr) -> Any:
        if id(updated.value) in self._dropped:
            return cst.Pass()
        if id(updated.value) in self._assign:
            return cst.Assign([cst.AssignTarget(cst.Name(self.me))], updated.value)
        return updated
