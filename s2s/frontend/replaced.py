"""Objects made again with some fields changed: ``p._replace(w=v)`` of a NamedTuple and
``dataclasses.replace(c, lr=v)`` of a dataclass object.

Inside the emitted code such an object is the dict of its fields (``objects.py``), so
the new object is a new dict marked with the same ``Built``: the fields given by
keyword, the others read from the old object (``p["b"]``), as Python copies them.  The
old object is not changed.  Where the object is an argument or a default, its class
is the call's (``bound_params.py``: a transform made per call's classes); a refusal
marked ``per_call`` asks for that transform where the class is not known yet.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import libcst as cst

from ..ir.nodes import Const, Index, Var
from . import objects
from .built_objects import field_key
from .object_fields import object_fields
from .objects import computed_call, record_of_atom, typed_param


def replaced_call(n: Any, node: cst.Call, target: str | None) -> Any:
    """``obj._replace(w=v)`` of a NamedTuple the code knows the class of: the new
    NamedTuple; None for any other call."""
    func = node.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "_replace"):
        return None
    root = func.value
    while isinstance(root, (cst.Attribute, cst.Subscript)):
        root = root.value
    if not (isinstance(root, cst.Name) and root.value in n.local_names):
        return None  # (a module's NamedTuple: Python's own method, read as a constant)
    base = n.exprs.expr(func.value)
    made = named_tuple_of(n, base)
    if made is None:
        raise _per_call(n.unsupported(
            node, "`._replace(...)` is supported here on a NamedTuple whose class s2s "
            "knows when it transforms the function (one the function built, an argument "
            "or a field of an object given one)", "build the NamedTuple again: "
            "`P(w=..., b=p.b)`"))
    kwargs = _keywords(n, node, "._replace")
    unknown = [k for k in kwargs if k not in made.keys]
    if unknown:
        raise n.unsupported(node, f"`._replace(...)` got a field `{unknown[0]}` that "
                            f"`{made.cls.__name__}` does not have (Python's ValueError)",
                            f"give one of its fields: {', '.join(made.keys)}")
    values = tuple(kwargs[k] if k in kwargs else _field(n, base, k, node) for k in made.keys)
    name = n.exprs.target(target, f"{made.cls.__name__.lower()}_replaced")
    return n.emit(name, "make_dict", values, {"keys": tuple(made.keys), "built": made}, node)


def replace_call(n: Any, node: cst.Call, target: str | None) -> Any:
    """``dataclasses.replace(c, lr=v)`` of a dataclass object the function built, or
    an argument or default of a class this transform knows: its constructor called
    again (``__post_init__`` too, as Python does) with the fields given and the
    others read from ``c``."""
    args = list(node.args)
    first = args[0].value if args and not args[0].keyword and not args[0].star else None
    base = n.exprs.expr(first) if first is not None else None
    made = _object_of(n, base) if isinstance(base, Var) else None
    if made is None or not dataclasses.is_dataclass(made.cls) or any(
            a.star or a.keyword is None for a in args[1:]):
        error = n.unsupported(
            node, "`dataclasses.replace` is supported here on a dataclass object this "
            "function built or was given, its new fields given by keyword",
            "`dataclasses.replace(obj, field=value)`")
        raise _per_call(error) if made is None and isinstance(base, Var) else error
    kwargs = _keywords(n, node, "dataclasses.replace")
    for f in dataclasses.fields(made.cls):
        if f.init and f.name not in kwargs:
            kwargs[f.name] = _field(n, base, f.name, node)
    return computed_call(n, made, node, made.cls.__name__, target, ([], kwargs))


def named_tuple_of(n: Any, atom: Any) -> Any:
    """The ``Built`` of the NamedTuple ``atom`` holds, where the code knows its class
    (built here, a parameter of a class known per call, an object's field); else
    None."""
    for _ in range(8):  # (through `q = p`)
        let = n.lets.get(atom.name) if isinstance(atom, Var) else None
        if let is None:
            made = typed_param(n, atom.name) if isinstance(atom, Var) else None
            return made if getattr(made, "positional", False) else None
        if let.prim == "identity":
            atom = let.args[0]
            continue
        made = let.params.get("built") if let.prim == "make_dict" else None
        key = field_key(let)
        if made is None and key is not None:  # (`self.p`: a field holding one)
            outer = record_of_atom(n, let.args[0])
            made = getattr(outer, "fields", {}).get(key) if outer is not None else None
        return made if getattr(made, "positional", False) else None
    return None


def _object_of(n: Any, atom: Any, depth: int = 0) -> Any:
    """The ``Built`` of the object ``atom`` holds: ``record_of_atom``'s, a parameter's
    of a class known per call, or the one class of a tuple's items read by a loop's
    index (``for c in (cfg, fine)``); else None."""
    let = n.lets.get(atom.name) if isinstance(atom, Var) else None
    if let is None and isinstance(atom, Var):
        return typed_param(n, atom.name) or _left_default(n, atom.name)
    if let is not None and let.prim == "identity" and depth < 8:
        return _object_of(n, let.args[0], depth + 1)
    made = record_of_atom(n, atom)
    if made is not None or let is None or let.prim != "getitem" or field_key(let) or depth:
        return made
    seq = n.lets.get(let.args[0].name) if isinstance(let.args[0], Var) else None
    if seq is None or seq.prim not in ("make_tuple", "make_list") or not seq.args:
        return None
    items = [_object_of(n, a, depth + 1) for a in seq.args]
    first = items[0]
    return first if all(m is not None and m.cls is first.cls and tuple(m.keys) == tuple(
        first.keys) for m in items) else None


def _left_default(n: Any, name: str) -> Any:
    """The ``Built`` of a callee's parameter the call leaves at its default object (a
    dataclass's or NamedTuple's: the plan's ``default`` entry), else None."""
    if n.env.get(name) != name or n.plan is None or ("default", name) not in {
            entry[:2] for entry in n.plan.entries}:
        return None
    try:
        default = inspect.signature(n.fn).parameters[name].default
    except (KeyError, TypeError, ValueError):
        return None
    made = objects.BUILT(type(default)) if objects.BUILT is not None and object_fields(
        default) is not None else None
    return made if hasattr(made, "make") else None


def _keywords(n: Any, node: cst.Call, what: str) -> dict[str, Any]:
    args = list(node.args)
    start = 0 if what == "._replace" else 1
    if any(a.star or a.keyword is None for a in args[start:]):
        raise n.unsupported(node, f"`{what}` takes the new fields by keyword here",
                            "give each field by name: `w=value`")
    return {a.keyword.value: n.exprs.expr(a.value) for a in args[start:]}


def _field(n: Any, base: Any, key: str, node: Any) -> Any:
    index = Index((Const(key, repr(key)),), False, attribute=True)
    return n.emit(n.exprs.target(None, key), "getitem", (base,), {"index": index}, node)


def _per_call(error: Any) -> Any:
    """A refusal a transform made per call's classes may lower (``api/callables.py``)."""
    error.per_call = True
    return error
