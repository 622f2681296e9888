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

import inspect
import types
from typing import Any

import libcst as cst

from ..errors import TransformError
from ..ir.nodes import Var
from .fnvalues import FnValue
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
    return n.funcs.call(fv, node, target) if fv is not None else None
