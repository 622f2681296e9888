"""What a module constant that is a container (a dict, a list, a tuple of dicts) holds,
for the signature fast path to check it at each call (api/signatures.py
``FreeSnapshot``): such a value can change in place, where its name still holds the
same object (``SPECS[0]["w"] = 3.0``, ``f.__defaults__[0][0]["w"] = 3.0``).

``Contents`` keeps the container's structure (each dict's keys in order, each list's
and tuple's length, each array's shape and dtype) and every object in it (the nested
containers, the numbers and strings, the arrays), and a later call takes the fast path
only while the container holds the same structure and the same objects: a value
written in place is another object, a key added changes the structure, and the call
then goes the generic way (which reads the constants again, and makes the code again
where their structure changed).  An array in it may change its values in place, as a
module array may: the code reads them when it runs.  Containers of anything else (an
object, a function, a set) or of more than ``MAX_ITEMS`` objects get no snapshot (no
fast path, as before)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

MAX_ITEMS = 64
_SCALARS = frozenset({float, int, bool, str, complex, bytes, type(None)})


class Contents:
    """A container's structure and objects when the fast path was cached."""

    __slots__ = ("shape", "objects")

    def __init__(self, shape: list, objects: list) -> None:
        self.shape, self.objects = shape, objects

    def same(self, value: Any) -> bool:
        """Does ``value`` (the same container) hold the same structure and objects?"""
        shape: list = []
        objects: list = []
        return _walk(value, shape, objects) and shape == self.shape and all(
            map(operator.is_, objects, self.objects))


def contents(value: Any) -> Contents | None:
    """``value``'s structure and objects, or None where it holds something else than
    dicts, lists, tuples, numbers, strings and arrays, or too many of them."""
    shape: list = []
    objects: list = []
    return Contents(shape, objects) if _walk(value, shape, objects) else None


def _walk(value: Any, shape: list, objects: list) -> bool:
    t = type(value)
    objects.append(value)
    if len(objects) > MAX_ITEMS:
        return False
    if t is dict:
        shape.append((dict, len(value)))
        for k, v in value.items():
            shape.append((type(k), k))
            if not _walk(v, shape, objects):
                return False
        return True
    if t is tuple or t is list:
        shape.append((t, len(value)))
        for v in value:
            if not _walk(v, shape, objects):
                return False
        return True
    if t is np.ndarray:
        shape.append((value.shape, value.dtype))
        return True
    return t in _SCALARS or isinstance(value, np.generic)
