"""The classes of an argument object and of the objects its fields hold, per call.

A transform made per call's classes (``callables.PerFunctionArgs``) calls the methods
of an argument of your class (``p.apply(x)``) and of the objects its fields hold
(``for l in net.layers: h = l(h)``) as those classes' functions.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import numpy as np

from ..frontend.synthesize import BoundType
from . import trees
from .trees import Fields

FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType, np.ufunc, functools.partial,
                  types.MethodType)  # (callables._FUNCTION_TYPES: plain functions)

_PLAIN_TYPES = (list, tuple, dict, set, str, bytes, int, float, complex, bool, range,
                type(None), types.ModuleType, type)


def object_type(value: Any, depth: int = 0) -> BoundType | None:
    """The class of an object of the user's (a NamedTuple, a dataclass, a registered
    class), whose methods a call of ``value.method(...)`` runs, with the classes of
    the objects its fields hold (``net.layers``' items); None for values of Python's
    own types and arrays."""
    cls = getattr(value, "of_class", None) if isinstance(value, Fields) else type(value)
    if cls is None:
        return None  # (a plain form of no class: a dict)
    if cls in _PLAIN_TYPES or isinstance(value, (np.ndarray, np.generic, type)) or (
            cls.__module__.split(".")[0] in ("builtins", "numpy", "jax", "jaxlib", "scipy",
                                             "collections")) or isinstance(value, FUNCTION_TYPES):
        return None
    nested = []
    for key, v in _field_items(value) if depth < 3 else ():
        items = v if type(v) in (list, tuple) else None
        held = tuple(object_type(i, depth + 1) for i in items) if items else \
            object_type(v, depth + 1) if items is None else None
        if held is not None and (not isinstance(held, tuple) or None not in held):
            nested.append((key, held))
    return BoundType(cls, tuple(nested))


def _field_items(value: Any) -> list:
    """``(field, value)`` of an argument object's fields (a NamedTuple's, a registered
    class's, its plain form's)."""
    if isinstance(value, Fields):
        return list(value.items())
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return list(zip(value._fields, value))
    found = trees._fields(value)
    return list(zip(found[0], found[1])) if found is not None else []
