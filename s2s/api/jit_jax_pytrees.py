"""Objects of a user's class made by code s2s.jit runs on JAX (``jit_jax.Translator``
translates the class: a subclass whose methods run on JAX) are pytrees there, so an
``if`` on a traced value chooses one with ``lax.cond``/``jnp.where`` as JAX would
choose a registered pytree: a registered class's by its own flattening (its objects
made again by its ``tree_unflatten``, then given the translated class), any other's
as the dict of its attributes."""

from __future__ import annotations

import copy
import functools
import types
from typing import Any

import jax
import numpy as np

from . import tree_util, trees
from .jit_jax_objects import _ObjectOnJax, _user_class
from .tree_util import NODES


def register_translated(found: type, cls: type) -> None:
    """Register ``found``, the translation of the user's ``cls``, as a pytree with
    JAX (and with s2s, for a registered ``cls``: results of jit are flattened)."""
    if cls in NODES:
        flatten, unflatten = NODES[cls]
        rebuild = functools.partial(_unflattened_as, found, unflatten)
        jax.tree_util.register_pytree_node(found, flatten, rebuild)
        tree_util.register_pytree_node(found, flatten, rebuild)
    elif not issubclass(cls, tuple):  # (a NamedTuple's is a pytree already)
        jax.tree_util.register_pytree_node(found, _fields_of,
                                           functools.partial(_object_of, found))


class RebuiltOnJax:
    """An object of a registered class made again as its class makes it, then given
    the translated class (methods on JAX): its ``tree_unflatten`` makes the user's."""

    def __init__(self, made: Any, on_jax: type) -> None:
        self.made, self.on_jax = made, on_jax

    def make(self, fields: dict) -> Any:
        obj = self.made.make(fields)
        try:
            obj.__class__ = self.on_jax
        except TypeError:  # (another layout: its methods stay NumPy code)
            pass
        return obj


def _unflattened_as(cls: type, unflatten: Any, aux: Any, children: Any) -> Any:
    obj = unflatten(aux, children)
    try:
        obj.__class__ = cls
    except TypeError:  # (another layout: its methods stay NumPy code)
        pass
    return obj


def _fields_of(obj: Any) -> tuple:
    fields = vars(obj)
    return tuple(fields.values()), tuple(fields)


def _object_of(cls: type, keys: tuple, children: Any) -> Any:
    obj = object.__new__(cls)
    for k, v in zip(keys, children):
        object.__setattr__(obj, k, v)
    return obj


def reading_translated(method: types.FunctionType, translator: Any) -> types.FunctionType:
    """``method`` (a translated method of a user's class) called with the plain form
    of an object (``trees.Fields``, whose other attributes are its class's methods:
    ``self.apply(x)`` in ``__call__``): the plain form reads the methods of its class's
    translation, so that a method calling another runs it on JAX too, not the NumPy
    code on tracers."""

    @functools.wraps(method)
    def on_jax(*args: Any, **kwargs: Any) -> Any:
        first = args[0] if args else None
        if isinstance(first, trees.Fields) and first.of_class is not None and not getattr(
                first.of_class, "__s2s_translator__", None):
            first = trees.of_class(copy.copy(first), translator._class(first.of_class))
            args = (first, *args[1:])
        return method(*args, **kwargs)

    return on_jax


_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, np.ufunc, functools.partial)


def as_translated(value: Any, translator: Any) -> Any:
    """An argument of a function jit runs on JAX that is an object of a user's class
    with methods (``p.apply(x)``, ``model(x)`` in the function): the same fields, as
    an object of the class's translation, so that its methods run on JAX."""
    cls = type(value)
    if isinstance(value, _FUNCTIONS):  # (`layer(x, np.sin)`: a parameter holding a
        return translator(value)  # function, called on JAX values: JAX's function)
    if getattr(cls, "__s2s_translator__", None) is not None or not _user_class(cls):
        return value
    found = translator._class(cls)
    if isinstance(value, tuple):  # (a NamedTuple)
        return tuple.__new__(found, value)
    if hasattr(value, "__dict__") and not hasattr(cls, "__slots__"):
        made = object.__new__(found)
        made.__dict__.update(vars(value))
        return made
    return _ObjectOnJax(value, translator)
