"""``super().name(...)`` in a method (objects.super_method): the function ``name`` of the next class after
the one defining the method, in the method's object's class order (its MRO), called
with the method's own ``self``, as Python's zero-argument ``super()`` does.

Each way a method's ``self`` is held (frontend/objects.py) keeps it: an object the
function built (a record: the parent's function lowered for that object, its
``self.other(...)`` the object's own), the object given to the transform (the dict
of its attributes) or a module object called inside (the object itself, a
constant: the parent's function bound to it).  A method given to a transform with
its object (``s2s.grad(obj.method)``: ``self`` the dict of its attributes) is
refused, located."""

from __future__ import annotations

import builtins
from typing import Any

import libcst as cst


def is_super(n: Any, node: Any) -> bool:
    """Is ``node`` Python's zero-argument ``super()`` (not a name of the function's)?"""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
            and node.func.value == "super" and not node.args):
        return False
    return "super" not in n.local_names and n.fn.__globals__.get(
        "super", builtins.super) is builtins.super


def class_function(obj: Any, text: str) -> bool:
    """``Layer.act`` written as ``Layer.act(self, v)`` (a module-level class's
    function, spelled through the class): given an object the caller built, emitted
    code calls it through normalize's ``_rebuilding`` wrapper, as a plain function (it
    called it with the dict of the object's fields: an AttributeError at
    ``self.scale``)."""
    return "." not in text or (text.count(".") == 1 and getattr(obj, "__qualname__", None) == text)
