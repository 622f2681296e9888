"""How a user's objects, modules and classes look to code s2s runs on JAX
(``s2s.jit(f, backend="jax")``): attributes read at each access, methods and functions
translated by ``jit_jax.Translator``, ``isinstance`` of a translated class holding for the
user's own.  (Split from ``jit_jax.py``.)"""

from __future__ import annotations

import functools
import operator
import types
import weakref
from typing import Any

import jax

from ..frontend.kept_vmap import KeptVmap
from . import jit_jax_free, records
from .tree_util import NODES

_LIBRARIES = {"numpy", "jax", "jaxlib", "scipy", "s2s", "libcst", "black", "pytest",
              "_pytest", "builtins"}


def _user_object(value: Any) -> bool:
    """An object of a user's class with a ``__call__`` written in Python."""
    call = getattr(type(value), "__call__", None)
    return isinstance(call, types.FunctionType) and not isinstance(value, type) and (
        (type(value).__module__ or "").split(".")[0] not in _LIBRARIES)


def _followed(value: Any) -> bool:
    """An object of a user's class a free name holds (its attributes the code reads
    are read at every call: api/jit_jax_free.py)."""
    return jit_jax_free.followed(value) and (
        type(value).__module__ or "").split(".")[0] not in _LIBRARIES


class _ObjectOnJax:
    """A user's object as code on JAX reads it (``self.w``, ``self.other(x)``, ``obj(x)``):
    attributes read from the object at each access, methods translated."""

    def __init__(self, obj: Any, translator: Any) -> None:
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_translator", translator)

    def __getattr__(self, name: str) -> Any:
        obj = self._obj
        value = getattr(obj, name)
        if jit_jax_free.followed(obj) and not (callable(value) and name not in getattr(
                obj, "__dict__", ())):  # (an object a free name holds: `cfg.W` passed,
            value = jit_jax_free.read(  # `cfg.scale` guarded, at every call; not a method)
                *jit_jax_free.attribute_key(obj, name), value)
        if (callable(value) and not isinstance(value, type)) or type(value) in (
                tuple, list, dict):  # (`self.act`, `self.layers`: their functions on JAX)
            return self._translator(value)
        return value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        call = self._translator(type(self._obj).__call__)
        return call(self, *args, **kwargs)


def _protocol(name: str) -> Any:
    """``_ObjectOnJax``'s ``name`` (``__getitem__``, ``__len__``...): the user's class's
    method, translated, on the object as JAX code reads it (Python looks these up on
    the type, never through ``__getattr__``: emitted code keeps ``GRID[0.5]`` and
    ``len(GRID)`` of a module's object)."""

    def method(self: _ObjectOnJax, *args: Any) -> Any:
        own = getattr(type(self._obj), name, None)
        if own is None:  # (an operator: the other operand's; else Python's TypeError)
            return _PLAIN[name](self._obj, *args) if name in _PLAIN else NotImplemented
        return self._translator(own)(self, *args)

    method.__name__ = name
    return method


_PLAIN = {"__getitem__": operator.getitem, "__len__": len, "__contains__": operator.contains,
          "__neg__": operator.neg, "__pos__": operator.pos, "__abs__": abs,
          "__bool__": bool}  # (`__len__` given: Python's truth then asks `__bool__` first)
for _name in (*_PLAIN, *(f"__{p}{op}__" for op in (
        "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul") for p in ("", "r"))):
    setattr(_ObjectOnJax, _name, _protocol(_name))


class _ModuleOnJax(types.ModuleType):
    """A module of the user's (``import mylib``) as code on JAX reads it: each
    attribute read from the module at each access (a constant rebound is seen), its
    functions, classes and modules translated (``mylib.helper(x)`` runs on JAX)."""

    def __init__(self, module: types.ModuleType, translator: Any) -> None:
        super().__init__(module.__name__, module.__doc__)
        object.__setattr__(self, "_s2s_module", module)
        object.__setattr__(self, "_s2s_translator", translator)

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("_s2s_") or name in ("__class__", "__dict__", "__name__"):
            return object.__getattribute__(self, name)
        module = object.__getattribute__(self, "_s2s_module")
        value = getattr(module, name)
        names = getattr(module, "__dict__", None)
        if names is not None and name in names:  # (`mylib.XB`: read at every call too,
            value = jit_jax_free.read(  # a batch passed, a number guarded: jit_jax_free)
                ("var", "scope", id(names), name),
                functools.partial(operator.getitem, names, name), value)
        return object.__getattribute__(self, "_s2s_translator")(value)


class _KeptVmapOnJax:
    """``h = s2s.vmap(g)`` kept as a value, as emitted code on JAX calls it (an
    adapter passing it to your function): ``jax.vmap`` of ``g`` on JAX (``kept_fn``:
    ``g`` with the values it carries, made by the adapter's code on JAX)."""

    def __init__(self, kept: KeptVmap, translator: Any) -> None:
        self.kept, self.translator = kept, translator

    def __call__(self, *args: Any, kept_fn: Any = None) -> Any:
        fn = kept_fn if kept_fn is not None else self.translator(
            self.kept.named.runtime(iter(())))
        return jax.vmap(fn, **self.kept.options())(*args)


def _user_class(value: Any) -> bool:
    """A plain class of the user's with Python methods (not a pytree node, an
    exception or a tuple)."""
    if not (isinstance(value, type) and type(value).__call__ is type.__call__ and (
            value.__module__ or "").split(".")[0] not in _LIBRARIES and not issubclass(
            value, BaseException) and (not issubclass(value, tuple) or hasattr(
                value, "_fields")) and any(
            isinstance(getattr(v, "__func__", v), types.FunctionType)  # (a staticmethod's)
            for k in value.__mro__[:-1] for v in vars(k).values())):
        return False
    if value not in _RECORD_CLASSES:  # (only a class s2s builds as a record of fields)
        made = records.built(value)
        _RECORD_CLASSES[value] = isinstance(made, records.Built) and (
            made.record or made.plain or made.positional  # (a NamedTuple's methods)
            or value in NODES)  # (a registered class's: made again given them)
    return _RECORD_CLASSES[value]


_RECORD_CLASSES: "weakref.WeakKeyDictionary[type, bool]" = weakref.WeakKeyDictionary()


def _meta(meta: type) -> type:
    """The metaclass of a translated class: ``_OnJaxClass``, with the user's own
    (``abc.ABCMeta``, whose construction is ``type``'s) where the class has one."""
    if meta is type:
        return _OnJaxClass
    if meta not in _METAS:
        _METAS[meta] = type(f"_OnJax{meta.__name__}", (_OnJaxClass, meta), {})
    return _METAS[meta]


_METAS: "weakref.WeakKeyDictionary[type, type]" = weakref.WeakKeyDictionary()


class _OnJaxClass(type):
    """The class of a user's class translated for JAX: ``isinstance(obj, Model)`` of
    an object of the user's own ``Model`` holds there too."""

    def __instancecheck__(cls, obj: Any) -> bool:
        if isinstance(obj, _ObjectOnJax):  # (a module object, its methods on JAX)
            obj = object.__getattribute__(obj, "_obj")
        return isinstance(obj, cls.__s2s_numpy_original__)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return issubclass(sub, cls.__s2s_numpy_original__)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        """An object made here: the objects its fields hold (one a dataclass's
        factory made) get their methods on JAX too."""
        obj = super().__call__(*args, **kwargs)
        on_jax = cls.__s2s_translator__._object
        for k, v in list(getattr(obj, "__dict__", {}).items()):
            if isinstance(v, (list, tuple)) and any(_user_class(type(i)) for i in v):
                object.__setattr__(obj, k, type(v)(on_jax(i) for i in v))
            elif _user_class(type(v)):
                object.__setattr__(obj, k, on_jax(v))
        return obj
