"""``obj.w = value`` in your function (issue 23), for an object of your class the
function built: a property's setter called (``Weights.w.fset(obj, value)``, its body
a function of the value and the fields returning the fields it leaves, as a
constructor's methods are: built_objects.py), or the field set where the class has
no setter; the name then holds the object with its new fields.

s2s holds the object as the dict of its fields, a value: rebinding the name is
Python's change of the object only where no other name, container, object, closure
or method's result holds it, and the caller did not pass it.  Each of those is
refused, located, as is a property without a setter (Python's AttributeError), a
class with ``__setattr__`` or ``__slots__``, and a frozen dataclass."""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import textwrap
import types
from typing import Any

import libcst as cst

from .. import syntax
from ..errors import mark_shared_write
from ..ir.nodes import Const, Index, Let, Var, walk
from .buffers import ALIASING, VIEWS
from .built_objects import (
    _method_record,
    _writes_attributes,
    field_key,
    returned_dict,
    returned_keys,
)
from .expressions import in_place
from .fnvalues import FnValue
from .number_fields import number_fields
from .objects import object_param, record_of_atom


def set_attribute(n: Any, target: cst.Attribute, value: Any) -> bool:
    """``obj.attr = value`` lowered (True), or False where ``obj`` is not a local
    name holding an object of your class."""
    base = target.value
    if not isinstance(base, cst.Name) or base.value not in n.env:
        return False
    name, attr = base.value, target.attr.value
    var = Var(n.env[name])
    made = record_of_atom(n, var)
    if made is None or not isinstance(getattr(made, "cls", None), type):
        return False
    cls = made.cls
    why = _why_not(n, target, name, var, cls, attr)
    if why:
        raise n.unsupported(target, f"`{name}.{attr} = ...` of a `{cls.__name__}` object "
                            f"(an object of your class): {why}",
                            "build a new object with the new value (`obj = "
                            f"{cls.__name__}(...)`), or compute with a local name")
    atom = n.exprs.expr(value)
    if attr in number_fields(cls) and not _number(n, atom):
        raise n.unsupported(target, f"`{name}.{attr} = ...` of a `{cls.__name__}` object: "
                            f"its class's methods update `{attr}` in place (`+=`) as a "
                            "Python number, and this value may be an array, which `+=` "
                            "would change for every name that holds it",
                            "set a Python number (an int or float literal), or keep "
                            "the array in a field the class does not update with `+=`")
    found = inspect.getattr_static(cls, attr, None)
    if isinstance(found, property):
        keys, values = _call_method(n, target, made, var, found.fset, attr, [atom])
    else:
        keys = tuple(made.keys) + (() if attr in made.keys else (attr,))
        values = [atom if k == attr else _field(n, var, k, target) for k in keys]
    _rebind(n, target, name, made, keys, values)
    return True


def augmented_attribute(n: Any, node: cst.AugAssign, assign: Any) -> bool:
    """``p.steps += 2`` (``p.w *= v``) of an object of your class the function built:
    Python's ``p.steps = p.steps + 2`` where the field holds a number, or an array no
    other name, field or argument holds (NumPy's in-place write then changes nothing
    else); otherwise refused, located.  The write is ``p.w = ...`` (set_attribute: a
    setter called, the same checks).  False where ``p`` is not such a name."""
    target = node.target
    assert isinstance(target, cst.Attribute)
    base = target.value
    if not isinstance(base, cst.Name) or base.value not in n.env:
        return False
    var = Var(n.env[base.value])
    made = record_of_atom(n, var)
    if made is None or not isinstance(getattr(made, "cls", None), type):
        return False
    name, attr = base.value, target.attr.value
    field = _getter_field(made.cls, attr)  # (`p.w` of a property reading `self._w`:
    fresh = _fresh_field(n, var, field)  # _w's array; checked before its getter's call)
    if _number(n, n.exprs.expr(target)):
        fresh = None
    if fresh is False:
        raise _shared(n, node, name, attr)
    op_node = getattr(cst, type(node.operator).__name__.replace("Assign", ""))()
    value = cst.BinaryOperation(left=target, operator=op_node, right=node.value)
    n.desugar.alias(value, node)
    in_place(n, value)  # (a field's array keeps its dtype: NumPy writes into it)
    assign(target, value)
    if fresh and n.loops:  # (a later statement of the loop, or the next iteration's
        n.__dict__.setdefault("augmented_fields", []).append(  # write: checked last)
            (var, n.env[name], field, node))
    return True


def _getter_field(cls: type, attr: str) -> str:
    """The field whose array ``obj.attr`` is: ``attr``, or for a property with a
    setter whose getter only returns a field (``return self._w``) that field, which
    NumPy's ``p.w += v`` adds into before the setter stores the sum."""
    found = inspect.getattr_static(cls, attr, None)
    fget = found.fget if isinstance(found, property) and found.fset is not None else None
    try:
        tree = syntax.parse(textwrap.dedent(inspect.getsource(fget))) if isinstance(
            fget, types.FunctionType) else None
    except (OSError, TypeError, SyntaxError):
        tree = None
    fn = tree.body[0] if tree is not None and tree.body else None
    body = [st for st in getattr(fn, "body", ()) if not (isinstance(st, ast.Expr) and
                                                         isinstance(st.value, ast.Constant))]
    args = fn.args.args if isinstance(fn, ast.FunctionDef) else []
    ret = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
    if args and isinstance(ret, ast.Attribute) and isinstance(ret.value, ast.Name) and (
            ret.value.id == args[0].arg):
        return ret.attr
    return attr  # (a getter computing: refused, as `attr` is no field)


def _shared(n: Any, node: cst.AugAssign, name: str, attr: str) -> Exception:
    op = node.operator._get_token()  # (marked: `s2s.jit(f, backend="jax")` runs the
    return mark_shared_write(n.unsupported(  # text as written, where `+=` rebinds)
        node, f"`{name}.{attr} {op} ...` would change in place the array `{name}.{attr}` "
        "holds, which another name, field or the caller's argument may hold too (NumPy's "
        "in-place operator changes it for all of them)",
        f"write `{name}.{attr} = {name}.{attr} {op[:-1]} ...` (a new array)"))


def check_augmented_fields(n: Any) -> None:
    """``p.w += v`` in a loop: neither the array it writes into nor the one it leaves
    (the next iteration's to write into) is held by a name, view or container the
    rest of the loop made (``vs.append(p.w)``)."""
    for before, after, attr, node in getattr(n, "augmented_fields", ()):
        for ssa in (before.name, after):
            record = n.lets.get(ssa)
            keys = list(record.params.get("keys", ())) if record is not None and (
                record.prim == "make_dict") else []
            if attr in keys and isinstance(record.args[keys.index(attr)], Var) and (
                    _held_elsewhere(n, record, record.args[keys.index(attr)], attr, (
                        ssa, n.env.get(node.target.value.value)))):
                raise _shared(n, node, node.target.value.value, node.target.attr.value)


def _fresh_field(n: Any, var: Var, attr: str) -> bool | None:
    """Does the field ``attr`` of the object ``var`` hold an array only it holds:
    computed in your function (``p.w = np.cos(x)``) or in the constructor (``self.w =
    w * 2``), or given to it so (``Model(np.cos(x))``): not an argument, a view,
    another field's or another name's?  None: it holds a Python number."""
    let = n.lets.get(var.name)
    keys = let.params.get("keys", ()) if let is not None and let.prim == "make_dict" else ()
    if attr not in keys:
        return False
    return _fresh(n, let, let.args[list(keys).index(attr)], attr)


def _fresh(n: Any, record: Any, atom: Any, attr: str) -> bool | None:
    """``_fresh_field`` of the item ``atom`` of the dict ``record`` builds, followed
    back through the object's earlier versions (``p.steps = 3`` before) to the
    constructor's record."""
    current = record.target
    for _ in range(64):
        if isinstance(atom, Const):
            return None if type(atom.value) in (int, float) else False
        if not isinstance(atom, Var) or sum(a == atom for a in record.args) != 1 or (
                _held_elsewhere(n, record, atom, attr, (current,))):
            return False
        inner = n.lets.get(atom.name)
        if inner is None or field_key(inner) != attr or not isinstance(inner.args[0], Var):
            return inner is not None and inner.prim not in VIEWS
        source = n.lets.get(inner.args[0].name)
        keys = list(source.params.get("keys", ())) if source is not None and (
            source.prim == "make_dict") else []
        if attr not in keys:
            return _constructed(n, source, attr)
        record, atom = source, source.args[keys.index(attr)]  # (an earlier version)
    return False


def _constructed(n: Any, call: Any, attr: str) -> bool | None:
    """``_fresh`` of the field ``attr`` of the record a constructor's call returns:
    computed there, or given to it as an array only the call holds; None: a number."""
    callee = call.params.get("callee") if call is not None and call.prim == "call" else None
    ret = returned_dict(callee) if callee is not None else None
    if ret is None or attr not in ret.params["keys"] or len(call.args) != len(
            callee.params):
        return False
    made = ret.args[list(ret.params["keys"]).index(attr)]
    lets = {s.target: s for s in walk(callee.body) if isinstance(s, Let)}
    while isinstance(made, Var) and made.name in lets and lets[made.name].prim == (
            "identity"):
        made = lets[made.name].args[0]
    if isinstance(made, Const):
        return None if type(made.value) in (int, float) else False
    if not isinstance(made, Var) or sum(a == made for a in ret.args) != 1:
        return False
    if made.name in lets:
        return lets[made.name].prim not in VIEWS
    if made.name not in callee.params:
        return False
    given = call.args[callee.params.index(made.name)]  # (`self.w = w`: the call's)
    if isinstance(given, Const):
        return None if type(given.value) in (int, float) else False
    if not isinstance(given, Var) or sum(a == given for a in call.args) != 1:
        return False
    produced = n.lets.get(given.name)
    return produced is not None and produced.prim not in VIEWS and not _held_elsewhere(
        n, call, given, None, ())


_HOLDS = VIEWS | ALIASING | {"setitem", "insert", "extend"}


def _held_elsewhere(n: Any, record: Any, atom: Var, attr: str | None,
                    current: tuple) -> bool:
    """Does a name, view or container other than the object (``record`` and its
    earlier versions) refer to the array ``atom``, directly or through a read of the
    field (``v = p.w``)?"""
    bound, aliases, versions = set(n.env.values()), {atom.name}, {record.target}
    for let in n.lets.values():
        if let is record or let.prim not in _HOLDS or not any(
                isinstance(a, Var) and a.name in aliases | versions for a in let.args):
            continue
        keys = list(let.params.get("keys", ())) if let.prim == "make_dict" else []
        if attr in keys and isinstance(let.args[keys.index(attr)], Var) and (
                let.args[keys.index(attr)].name in aliases) and sum(
                isinstance(a, Var) and a.name in aliases for a in let.args) == 1 and (
                let.target not in bound or let.target in current):
            versions.add(let.target)  # (`p` before or after a write: the object)
            continue
        if let.prim == "identity" and isinstance(let.args[0], Var) and (
                let.args[0].name in versions) and let.target not in bound:
            versions.add(let.target)  # (the object carried by a loop)
            continue
        if let.prim == "getitem" and isinstance(let.args[0], Var) and (
                let.args[0].name in versions) and field_key(let) == attr:
            aliases.add(let.target)  # (`p.w` read: the array itself)
            continue
        if let.prim == "getitem" and isinstance(let.args[0], Var) and (
                let.args[0].name in versions):
            continue  # (another field read)
        return True
    return bool((aliases - {atom.name}) & bound) or atom.name in bound


def method_statement(n: Any, node: cst.Expr) -> bool:
    """``p.bump(v)`` as a statement, of an object of your class the function built,
    a method that sets attributes: its function over the fields called, the name then
    holding the object with the fields it leaves (as ``p.w = v`` through a setter);
    False where ``p`` is not such a name or the method sets nothing."""
    call = node.value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            and isinstance(call.func.value, cst.Name) and call.func.value.value in n.env):
        return False
    name, attr = call.func.value.value, call.func.attr.value
    var = Var(n.env[name])
    made = record_of_atom(n, var)
    if made is None or not isinstance(getattr(made, "cls", None), type):
        return False
    cls = made.cls
    method = inspect.getattr_static(cls, attr, None)
    if not isinstance(method, types.FunctionType) or not _writes_attributes(method):
        return False
    why = _why_not(n, call.func, name, var, cls, attr, method=True)
    if why:
        raise n.unsupported(call, f"`{name}.{attr}(...)` sets attributes of a "
                            f"`{cls.__name__}` object (an object of your class): {why}",
                            "return a new object from the method (`obj = obj.method"
                            "(...)`), or compute with a local name")
    keys, values = _call_method(n, call, made, var, method, attr, None)
    _rebind(n, call, name, made, keys, values)
    return True


def chained_method(n: Any, target: cst.Name, value: Any) -> bool:
    """``d = d.with_w(v)``: a method of an object the function built that sets
    attributes and returns ``self`` (for chaining), given back to the name that
    holds the object: ``d.with_w(v)`` as a statement (``method_statement``), the name
    then holding the changed object, as in Python.  False for any other statement."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and
            isinstance(value.func.value, cst.Name) and value.func.value.value == (
                target.value) and target.value in n.env):
        return False
    made = record_of_atom(n, Var(n.env[target.value]))
    method = inspect.getattr_static(getattr(made, "cls", None), value.func.attr.value,
                                    None) if made is not None else None
    if not isinstance(method, types.FunctionType) or not _returns_self(method):
        return False
    statement = cst.Expr(value)
    n.desugar.alias(statement, value)
    return method_statement(n, statement)


def _returns_self(method: Any) -> bool:
    """Does every ``return`` of the method return its ``self``, the last statement
    one of them?"""
    try:
        fdef = cst.parse_module(textwrap.dedent(inspect.getsource(method))).body[0]
    except (OSError, TypeError, cst.ParserSyntaxError):
        return False
    if not isinstance(fdef, cst.FunctionDef) or not fdef.params.params or not isinstance(
            fdef.body, cst.IndentedBlock):
        return False
    me = fdef.params.params[0].name.value
    last = fdef.body.body[-1]
    returns = [node for node in _walk(fdef.body) if isinstance(node, cst.Return)]
    return isinstance(last, cst.SimpleStatementLine) and isinstance(
        last.body[-1], cst.Return) and all(
        isinstance(r.value, cst.Name) and r.value.value == me for r in returns)


def _walk(node: Any) -> Any:
    yield node
    for child in node.children:
        yield from _walk(child)


def _rebind(n: Any, node: Any, name: str, made: Any, keys: tuple, values: list) -> None:
    if keys != tuple(made.keys):
        made = copy.copy(made)
        made.keys = keys
    ssa = n.names.fresh(name)
    n.emit(ssa, "make_dict", tuple(values), {"keys": keys, "built": made}, node)
    n.bound.add(name)
    n._bind(name, ssa)


_ARITHMETIC = ("add", "subtract", "multiply", "divide", "true_divide", "floor_divide",
               "power", "negative", "mod")


def _number(n: Any, atom: Any, depth: int = 0) -> bool:
    """Is ``atom`` a Python number (a literal, ``p.steps + 1`` of one)?"""
    if isinstance(atom, Const):
        return type(atom.value) in (int, float, bool)
    if not isinstance(atom, Var) or depth > 20:
        return False
    if n.buffer.immutable(atom.name):
        return True
    let = n.lets.get(atom.name)
    if let is not None and let.prim == "getitem" and isinstance(let.args[0], Var):
        made = record_of_atom(n, let.args[0])  # (`p.steps` of such a field: a number,
        cls = getattr(made, "cls", None)  # as every write of it is one, this one too)
        return isinstance(cls, type) and field_key(let) in number_fields(cls)
    return let is not None and let.prim in _ARITHMETIC and all(
        _number(n, a, depth + 1) for a in let.args)


def _field(n: Any, atom: Any, key: str, node: Any) -> Any:
    index = Index((Const(key, repr(key)),), False, attribute=True)
    return n.emit(n.exprs.target(None, key), "getitem", (atom,), {"index": index}, node)


def _call_method(n: Any, node: Any, made: Any, var: Any, setter: Any, attr: str,
                 atoms: list | None) -> tuple:
    """The property's setter (``atoms``: its value) or a method (``atoms`` None: the
    call ``node``'s arguments) called on the fields: ``(keys, values)`` it leaves."""
    cls = made.cls
    what = f"the setter of `{cls.__name__}.{attr}`" if atoms is not None else (
        f"`{cls.__name__}.{attr}`")
    record = _method_record(cls, setter)
    if isinstance(record, str):
        raise n.unsupported(node, f"{what} {record}",
                            "set the fields in a method that returns a new object")
    base = f"{cls.__name__}_{attr}" + ("_setter" if atoms is not None else "")
    result, callee = call_on_fields(n, node, made, var, record[0], base, what, atoms)
    keys = returned_keys(callee) if callee is not None else None
    if keys is None:
        raise n.unsupported(node, f"s2s cannot tell which fields {what} sets",
                            "set the fields in "
                            "`__init__`, or build a new object")
    return tuple(keys), [_field(n, result, k, node) for k in keys]


def call_on_fields(n: Any, node: Any, made: Any, var: Any, fn: Any, base: str, what: str,
                   atoms: list | None) -> tuple[Any, Any]:
    """A method's function over the record ``fn`` (built_objects._method_record's)
    called, under a name of its own from ``base``, with the call ``node``'s arguments
    (``atoms``: a setter's value) and the object ``var``'s fields as keywords:
    ``(result, the callee's IR or None)``."""
    text = name_for(n, base, fn)
    args, kwargs = ([], {}) if atoms is None else (atoms, {})
    if atoms is None:
        args, kwargs = n.funcs.args_of(node.args)
        clash = sorted(set(kwargs) & set(made.keys))
        if clash:
            raise n.unsupported(node, f"{what} is given the keyword `{clash[0]}`, the "
                                "name of a field of its object", "pass it by position")
    fields = {k: _field(n, var, k, node) for k in made.keys}
    result = n.funcs.call(FnValue(fn, text, spelled=True), node, None,
                          passed=(list(args), {**kwargs, **fields}))
    let = n.lets.get(result.name) if isinstance(result, Var) else None
    return result, let.params.get("callee") if let is not None and let.prim == "call" \
        else None


def name_for(n: Any, base: str, fn: Any) -> str:
    """A name of emitted code for ``fn``: ``base``, or ``base_2``... where taken."""
    text, i = base, 2
    while n.resolver.namespace.get(text, fn) is not fn or (
            text in n.names.taken and text not in n.resolver.namespace):
        text, i = f"{base}_{i}", i + 1
    n.resolver.namespace[text] = fn
    n.names.taken.add(text)
    return text


def _why_not(n: Any, node: Any, name: str, var: Any, cls: type, attr: str,
             method: bool = False) -> str:
    """Why rebinding ``name`` is not Python's change of the object; "" where it is."""
    found = None if method else inspect.getattr_static(cls, attr, None)
    if isinstance(found, property) and not isinstance(found.fset, types.FunctionType):
        return f"its property `{attr}` has no setter (Python's AttributeError)"
    if any("__setattr__" in vars(k) or "__slots__" in vars(k) for k in cls.__mro__[:-1]):
        return "its class defines `__setattr__` or `__slots__`"
    if dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen:
        return "it is a frozen dataclass (Python's FrozenInstanceError)"
    if not isinstance(found, property) and found is not None and hasattr(
            type(found), "__set__"):
        return f"its class's `{attr}` is a descriptor"
    root = _root(n, var)
    if root is None and object_param(n, name) is not None:  # (a method's `self`)
        return ("the caller passed it, or calls this method inside an expression (s2s "
                "lowers a call of a method setting attributes of an object the function "
                "built where the call is a statement of its own, or all of `y = "
                "obj.method(...)`)")
    if root is None:
        return ("the caller passed it (Python changes the caller's object too; s2s "
                "holds it as the dict of its fields, a value)")
    shared = _held(n, name) or _leaked(n, root)
    if shared:
        return (f"{shared} holds it too, and would see the change in Python (s2s holds "
                "the object as the dict of its fields, a value)")
    return ""


def _root(n: Any, var: Any) -> str | None:
    """The statement's target that built the object here (through ``q = p``), or
    None where the function did not build it."""
    for _ in range(8):
        let = n.lets.get(var.name)
        if let is None:
            return None
        if let.prim == "identity" and isinstance(let.args[0], Var):
            var = let.args[0]
            continue
        return var.name if let.prim == "make_dict" and "built" in let.params else None
    return None


def _held(n: Any, name: str) -> str:
    """Where the function's source uses ``name`` other than as ``name.attr`` or a
    target of ``name = ...`` (another name, a list, a call given it, a closure)."""
    found = []

    class Uses(cst.CSTVisitor):
        def __init__(self) -> None:
            self.nested = 0

        def visit_Lambda(self, node: cst.Lambda) -> None:
            self.nested += 1

        def leave_Lambda(self, node: cst.Lambda) -> None:
            self.nested -= 1

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.nested += node is not n.p.node

        def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.nested -= node is not n.p.node

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            if isinstance(node.value, cst.Name) and node.value.value == name:
                if self.nested:
                    found.append("a nested function or lambda")
                return False
            return True

        def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
            return not (isinstance(node.target, cst.Name) and node.target.value == name)

        def visit_Param(self, node: cst.Param) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> bool:
            if isinstance(node.func, cst.Name) and node.func.value == name:
                for arg in node.args:  # (`bn(x)`: its `__call__`, as `bn.__call__(x)`)
                    arg.visit(self)
                return False
            return True

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name:
                found.append("another name, a container or a call given the object")

    n.p.node.visit(Uses())
    return found[0] if found else ""


def _leaked(n: Any, root: str) -> str:
    """Whether a method called on the object may hand it out (returns it, or passes
    it on): its IR uses its ``self`` other than to read a field."""
    for let in list(n.lets.values()):
        if let.prim != "call" or not any(_root(n, a) == root for a in let.args
                                         if isinstance(a, Var)):
            continue
        callee = let.params.get("callee")
        params = getattr(callee, "params", None)
        if params is None:
            return "a method's result"
        for i, a in enumerate(let.args):
            if isinstance(a, Var) and _root(n, a) == root and i < len(params) and (
                    _hands_out(callee, params[i])):
                return "a method's result"
    return ""


def _hands_out(callee: Any, param: str) -> bool:
    for s in walk(callee.body):
        uses = [a for a in getattr(s, "args", ()) if isinstance(a, Var) and a.name == param]
        if isinstance(s, Let) and uses and s.prim != "getitem":
            return True
        if not isinstance(s, Let) and isinstance(getattr(s, "value", None), Var) and (
                s.value.name == param):
            return True
    return False
