"""A callee's parameter left at a default that is a dataclass or NamedTuple object
(``def step(w, cfg=OptConfig(lr=0.1, steps=3))`` called as ``step(w)``), and a
classmethod called on its class (``Quadratic.from_config(cfg)``).

Emitted code reads such an object's fields as a pytree argument's, ``cfg["steps"]``
(the structure is its fields, known when transforming); the value emitted code
holds is a view of the object whose items are read from it at each call, so a
default changed in place (``step.__defaults__[0].steps = 5``) is seen, as Python
sees it.  A classmethod is a callee whose ``cls`` is the class (``objects.bind_instance``:
``cls(a, c)`` constructs one), called as the function itself."""

from __future__ import annotations

import dataclasses
import inspect
import types
from typing import Any

from ..ir.kinds import LEAF, kind_of


class ObjectFields(dict):
    """The fields of ``obj`` by name (by position too for a NamedTuple), read from
    ``obj`` at each item read; the dict's own items are those read when it was made
    (what the structure of the code is derived from)."""

    def __init__(self, obj: Any, names: tuple[str, ...]) -> None:
        super().__init__((k, getattr(obj, k)) for k in names)
        self.obj = obj
        self.__s2s_positional__ = isinstance(obj, tuple)

    def __getitem__(self, key: Any) -> Any:
        if type(key) is int and isinstance(self.obj, tuple):
            return self.obj[key]
        if key not in self:
            raise KeyError(key)
        return getattr(self.obj, key)

    def __getattr__(self, name: str) -> Any:
        if name == "obj":
            raise AttributeError(name)
        return getattr(self.obj, name)


def object_fields(value: Any) -> ObjectFields | None:
    """A view of a dataclass, NamedTuple or ``types.SimpleNamespace`` object's fields,
    or None for any other
    value (or a field holding a container: its structure is not read this way)."""
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        names = tuple(type(value)._fields)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = tuple(f.name for f in dataclasses.fields(value))
    elif type(value) is types.SimpleNamespace:  # (its attributes now: its fields)
        names = tuple(vars(value))
    elif _plain_object(value):  # (`opt=Opt()`: its attributes, its class's data too)
        names = tuple(dict.fromkeys([k for c in reversed(type(value).__mro__[:-1])
                                     for k, v in vars(c).items() if not k.startswith("__")
                                     and not callable(v) and not hasattr(v, "__get__")]
                                    + list(vars(value))))
    else:
        return None
    return ObjectFields(value, names)


_OWN_ACCESS = ("__getattr__", "__getattribute__", "__setattr__", "__call__", "__slots__",
               "__iter__", "__getitem__", "__len__", "__array__", "__array_ufunc__",
               "__jax_array__", "__new__")
_LIBRARIES = ("builtins", "numpy", "scipy", "jax", "jaxlib", "s2s", "collections",
              "functools", "types", "typing", "abc", "enum", "math")


def _plain_object(value: Any) -> bool:
    """An object of a class of yours that only holds data in its attributes (no
    properties or other descriptors, no attribute hooks, not callable, no container
    or array protocol): its attributes are what ``opt.lr`` reads (as
    ``api/trees.plain_object`` has it for an argument)."""
    t = type(value)
    if isinstance(value, (type, tuple, list, dict)) or not isinstance(
            getattr(value, "__dict__", None), dict) or (t.__module__ or "builtins").split(
                ".")[0] in _LIBRARIES or type(t) is not type:
        return False
    return not any(k in _OWN_ACCESS or (hasattr(v, "__get__") and not k.startswith("__")
                                        and not isinstance(v, (types.FunctionType,
                                                               staticmethod, classmethod)))
                   for c in t.__mro__[:-1] for k, v in vars(c).items())


def const_kind(atom: Any) -> Any:
    """The kind of a call's argument that is no variable: a default object's fields
    (a tree of them), LEAF for any other constant."""
    return kind_of(atom.value) if isinstance(getattr(atom, "value", None), ObjectFields) \
        else LEAF


def is_classmethod(fn: Any) -> bool:
    """A user's classmethod bound to its class (``Quadratic.from_config``)."""
    cls = getattr(fn, "__self__", None)
    return isinstance(fn, types.MethodType) and isinstance(cls, type) and isinstance(
        fn.__func__, types.FunctionType) and not is_library(fn.__func__) and isinstance(
            inspect.getattr_static(cls, fn.__name__, None), classmethod)


def method_value(obj: Any) -> bool:
    """An object's method (``net.loss``) or a class's classmethod (``Cls.make``): a
    function value the call transforms (its ``self``/``cls`` bound: bind_instance)."""
    return isinstance(obj, types.MethodType) and isinstance(obj.__func__, types.FunctionType) \
        and not isinstance(obj.__self__, type) and not is_library(obj.__func__) or (
            is_classmethod(obj))


def plain_callee(obj: Any) -> bool:
    """A function (or a classmethod of a class) a call lowers as the callee itself."""
    return isinstance(obj, types.FunctionType) or is_classmethod(obj)


def as_fields(value: Any) -> Any:
    """A callee's default: a view of a dataclass's or NamedTuple's fields, read at
    each call (object_fields.py); any other value itself."""
    view = object_fields(value)
    return value if view is None else view


def is_library(fn: Any) -> bool:
    """``resolve.is_library``'s test (resolve loads libcst, which the transforms
    importing this module at ``import s2s`` must not)."""
    module = getattr(fn, "__module__", "") or ""
    return module.split(".")[0] in ("numpy", "scipy", "jax", "s2s", "math")
