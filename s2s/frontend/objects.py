"""A method's ``self``: an object's attributes and methods read in its body.

Two ways a method's body runs under a transform:

* the object is **called inside** the transformed function (``net(x)`` for a module
  object ``net``, ``self.other(x)`` in a method of ``net``): the method is normalized
  bound to the object, and ``self`` is the object itself, a constant that emitted code
  spells by a name of its own (``net_self``) and reads at each call, as it reads a
  module object's attributes (``cfg.lr``): ``self.w`` is ``net_self.w``, read when the
  code runs, and ``self.other`` is the object's own method (its class's, a subclass's
  override included);
* the object is **given to a transform** (``s2s.grad(net.loss)``, ``s2s.grad(net)``):
  ``self`` is an argument, the dict of its data attributes (``api/methods.py``), and
  ``self.other(x)`` calls ``Class.other(self, x)`` for the class that defines the
  method being transformed.  Which function that is for the object given is checked
  when the transform is called (``self_methods.check_self_methods``): a subclass
  overriding it is refused, located.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from typing import Any

import libcst as cst

from ..errors import TransformError
from ..ir.nodes import Const, Index, Var
from .built_objects import computed_call, returned_record
from .fnvalues import FnValue
from .resolve import is_library
from .self_methods import SELF_METHODS, defining_class, for_class


def bind_instance(n: Any) -> None:
    """For a method bound to an object (not a class), ``self`` denotes the object."""
    fn = n.fn
    if not (inspect.ismethod(fn) and not isinstance(fn.__self__, type)):
        return
    code = fn.__func__.__code__
    if not code.co_argcount:
        return
    first = code.co_varnames[0]
    obj = fn.__self__
    base = type(obj).__name__
    base = base.lower() if base.isidentifier() else "object"
    n.resolver.aliases[first] = (obj, _spelling(obj, f"{base}_{first}"))
    n.bound_object = first


_SPELLED: dict[int, tuple[Any, str]] = {}  # id(object) -> (it, its name in emitted code)


def _spelling(obj: Any, base: str) -> str:
    """One name per object, process-wide (emitted modules merge callees' names)."""
    hit = _SPELLED.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    taken = {name for _, name in _SPELLED.values()}
    name, i = base, 2
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    _SPELLED[id(obj)] = (obj, name)
    return name


def is_instance_self(n: Any, name: str) -> bool:
    """Is ``name`` the ``self`` of a method bound to an object (read as the object)?"""
    return name in n.resolver.aliases and name not in n.env


def self_method(n: Any, node: cst.Attribute) -> Any:
    """``self.other`` in a method whose ``self`` is the dict of the object's attributes
    (the object given to a transform): ``Class.other`` with ``self`` passed first, as
    a FnValue; None where it is not that."""
    base, name = (node, "__call__") if isinstance(node, cst.Name) else (
        node.value, node.attr.value)  # (`self(x)`: its __call__)
    if not (isinstance(base, cst.Name) and base.value in n.env):
        return None
    made = record_method(n, base.value, name, node)
    if made is not None:  # (a method of an object the function built: `m.energy(x)`)
        return made
    owner = defining_class(n.fn)
    code = getattr(n.fn, "__code__", None)
    if owner is None or code is None or not code.co_argcount or (
            base.value != code.co_varnames[0]):
        return None
    found = inspect.getattr_static(owner, name, None)
    if not isinstance(found, types.FunctionType):
        return None
    where = node.attr if isinstance(node, cst.Attribute) else node  # (at `other`)
    used = for_class(found, owner)  # (`other` of a subclass's object: its own class's)
    SELF_METHODS.setdefault(n.fn, {})[name] = (found, n.loc(where), n.display, used)
    cls_text = owner.__name__
    spelled = n.fn.__globals__.get(cls_text) is owner
    if spelled:
        n.resolver.bind_namespace(cls_text, node)
    return FnValue(used, f"{cls_text}.{name}" if spelled else name.strip("_"),
                   head=(Var(n.env[base.value]),), spelled=spelled)


def record_of(n: Any, name: str) -> Any:
    """The ``Built`` of the object a local name holds, where the function built it
    (``m = Model(x)``: a class of its own, not a NamedTuple), else None."""
    made = record_of_atom(n, Var(n.env[name]) if name in n.env else None)
    return made if made is not None else object_param(n, name)


def record_of_atom(n: Any, atom: Any) -> Any:
    for _ in range(8):  # (through `m2 = m`)
        let = n.lets.get(atom.name) if isinstance(atom, Var) else None
        if let is None:
            break
        if let.prim == "identity":
            atom = let.args[0]
            continue
        made = let.params.get("built") if let.prim == "make_dict" else None
        if let.prim == "call":  # (a function or method returning an object it built)
            made = returned_record(let.params.get("callee"))
        if made is not None and (made.plain or made.record):
            return made
        break
    return None


def object_param(n: Any, name: str) -> Any:
    """The ``Built`` of a parameter the caller passes an object it built (a callee
    written for that class: ``records_methods``), else None."""
    return getattr(n.fn, OBJECT_PARAMS, {}).get(name)


OBJECT_PARAMS = "__s2s_object_params__"  # a callee's parameter -> the object's Built


def record_method(n: Any, base: str, name: str, node: Any) -> FnValue | None:
    """``m.energy`` (``m(x)``: its ``__call__``) for an object ``m`` the function
    built: the class's function with the object's record passed as ``self``."""
    made = record_of(n, base)
    return None if made is None else _method(n, made, Var(n.env[base]), name)


def _method(n: Any, made: Any, atom: Any, name: str) -> FnValue | None:
    cls = made.cls
    found = inspect.getattr_static(cls, name, None)
    head: tuple = (atom,)
    if isinstance(found, staticmethod):
        found, head = found.__func__, ()
    if not isinstance(found, types.FunctionType):
        return None
    used = for_class(found, cls)
    if head:  # (its `self`: this object's record, so `self.m(...)` is the class's)
        code = used.__code__
        used = for_objects(used, {code.co_varnames[0]: made}, (
            f"{cls.__name__}_{name.strip('_')}")) if code.co_argcount else used
    # (a name of its own, no dot: emitted code calls it given the object made again)
    base_name = f"{cls.__name__}_{name.strip('_')}"
    text, i = base_name, 2
    while n.resolver.namespace.get(text, used) is not used or (
            text in n.names.taken and text not in n.resolver.namespace):
        text, i = f"{base_name}_{i}", i + 1
    n.resolver.namespace[text] = used
    n.names.taken.add(text)
    return FnValue(used, text, head=head, spelled=True)


def _method_of_built(n: Any, func: cst.Attribute) -> FnValue | None:
    try:
        cls, _ = n.resolver.resolve_dotted(func.value.func)
    except TransformError:
        return None
    if not isinstance(cls, type) or is_library(cls) or (
            cls.__module__ or "builtins").split(".")[0] == "builtins":
        return None
    atom = n.exprs.expr(func.value)
    made = record_of_atom(n, atom)
    found = None if made is None else _method(n, made, atom, func.attr.value)
    if found is None:
        raise n.unsupported(func, f"`.{func.attr.value}(...)` of the `{cls.__name__}` "
                            "built here: s2s calls the methods (functions) of your own "
                            "classes' objects", f"bind the object first (`obj = "
                            f"{cls.__name__}(...)`) and read its fields")
    return found


_FOR_OBJECTS: dict[tuple, Any] = {}


def for_objects(fn: Any, objects: dict[str, Any], name: str | None = None) -> Any:
    """``fn`` (your function or method) as a function of its own whose parameters
    named in ``objects`` are given an object of that ``Built``'s class: its body's
    ``p.method(...)`` and ``p.<class attribute>`` resolve on that class.  One per
    function and classes (the IR cache is keyed by the function)."""
    if not isinstance(fn, types.FunctionType) or not objects:
        return fn
    known = getattr(fn, OBJECT_PARAMS, {})
    if all(k in known and known[k].cls is v.cls for k, v in objects.items()):
        return fn  # (written for these objects already)
    name = name or fn.__name__
    base = getattr(fn, "__s2s_objects_of__", fn)
    key = (base, name, tuple(sorted((k, v.cls, tuple(v.keys)) for k, v in objects.items())))
    hit = _FOR_OBJECTS.get(key)
    if hit is None:
        hit = types.FunctionType(base.__code__, base.__globals__, name,
                                 base.__defaults__, base.__closure__)
        hit.__kwdefaults__ = base.__kwdefaults__
        hit.__dict__.update(base.__dict__)
        hit.__qualname__, hit.__module__ = base.__qualname__, base.__module__
        setattr(hit, OBJECT_PARAMS, dict(objects))
        hit.__s2s_objects_of__ = base  # type: ignore[attr-defined]
        _FOR_OBJECTS[key] = hit
    return hit


def passing_objects(n: Any, fn: Any, args: list, kwargs: dict) -> Any:
    """``helper(m, x)`` passing an object the function built: ``helper`` written for
    its class (``for_objects``), so its body may call ``m``'s methods."""
    if not isinstance(fn, types.FunctionType) or is_library(fn):
        return fn
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs).arguments
    except TypeError:
        return fn
    found = {}
    hint = n.rebuilt_hint or {}  # (emitted code read again: the objects it passes)
    for i, (name, value) in enumerate(bound.items()):
        let = n.lets.get(value.name) if isinstance(value, Var) else None
        made = let.params.get("built") if let is not None and let.prim == "make_dict" \
            else None
        if made is None and isinstance(value, Var):
            made = hint.get(i) if i < len(args) else None
            made = made or (object_param(n, value.name) if let is None else None)
        if made is not None and (made.plain or made.record):
            found[name] = made
    return for_objects(fn, found)


def class_attribute(n: Any, node: cst.Attribute) -> Any:
    """``c.scale`` (``self.scale`` in its method) for an object the function built,
    where ``scale`` is its class's attribute, not one its constructor sets: the
    class's, spelled ``Const.scale`` and read at each call; None otherwise."""
    base, attr = node.value, node.attr.value
    made = record_of(n, base.value) if isinstance(base, cst.Name) else None
    if made is None or attr in made.keys:
        return None
    cls = made.cls
    found = inspect.getattr_static(cls, attr, None)
    if found is None or callable(found) or isinstance(found, (property, staticmethod,
                                                              classmethod)):
        return None
    if n.fn.__globals__.get(cls.__name__) is not cls:
        raise n.unsupported(node, f"`.{attr}` is an attribute of the class "
                            f"`{cls.__name__}`, which this module does not name",
                            f"read it as `{cls.__name__}.{attr}` where the class is "
                            "a global, or set it in `__init__`")
    n.resolver.bind_namespace(cls.__name__, node)
    return Const(getattr(cls, attr), f"{cls.__name__}.{attr}")


def replace_call(n: Any, node: cst.Call, target: str | None) -> Any:
    """``dataclasses.replace(c, lr=v)`` of a dataclass object the function built: its
    constructor called again (``__post_init__`` too, as Python does) with the fields
    given and the others read from ``c``."""
    args = list(node.args)
    first = args[0].value if args and not args[0].keyword and not args[0].star else None
    made = record_of(n, first.value) if isinstance(first, cst.Name) else None
    if made is None or not dataclasses.is_dataclass(made.cls) or any(
            a.star or a.keyword is None for a in args[1:]):
        raise n.unsupported(node, "`dataclasses.replace` is supported here on a "
                            "dataclass object this function built, its new fields "
                            "given by keyword", "build the object in the function, then "
                            "`dataclasses.replace(obj, field=value)`")
    base = n.exprs.expr(first)
    kwargs = {a.keyword.value: n.exprs.expr(a.value) for a in args[1:]}
    for f in dataclasses.fields(made.cls):
        if f.init and f.name not in kwargs:
            index = Index((Const(f.name, repr(f.name)),), False, attribute=True)
            kwargs[f.name] = n.emit(n.exprs.target(None, f.name), "getitem", (base,),
                                    {"index": index}, node)
    return computed_call(n, made, node, made.cls.__name__, target, ([], kwargs))


def object_call(n: Any, node: cst.Call, target: str | None) -> Any:
    """A call of an object's method: ``self.other(x)`` or ``self(x)`` in a method,
    ``net.loss(x)`` for a module object; None where the callee is not one."""
    func, fv = node.func, None
    if isinstance(func, cst.Attribute):
        root = func
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or root.value in n.local_names:
            fv = n.funcs.value_of(func)  # (`self.other`: frontend/functions.py)
        else:
            try:
                obj, text = n.resolver.resolve_dotted(func)
            except TransformError:
                return None
            if isinstance(obj, types.MethodType) and not isinstance(obj.__self__, type) \
                    and isinstance(obj.__func__, types.FunctionType):
                fv = n.funcs.of_object(obj, text, func)
    elif isinstance(func, cst.Name) and func.value in n.env:
        fv = self_method(n, func)  # (`self(x)`: its __call__)
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) and (
            fv is None):  # `Model(x).energy(x)`: built, then its method
        fv = _method_of_built(n, func)
    return n.funcs.call(fv, node, target) if fv is not None else None
