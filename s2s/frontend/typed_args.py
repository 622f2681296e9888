"""What a call tells a callee's plan of the type of a value it passes
(``functions.py``'s ``_planned_call``): the class of a dataclass or NamedTuple object
(a default's, or one a parameter was given), and the type of a parameter the callee
tests (``typetests.py``).  The plan's key holds it, so a callee given an object of
another class is lowered again, and the callee knows the class (``arg_types``:
``dataclasses.replace(cfg, ...)`` of such a parameter, ``replaced.py``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..ir.nodes import Const, Var
from .object_fields import ObjectFields, object_fields
from .typetests import type_tested


def typed_arg(n: Any, fn: Any, pname: str, value: Any) -> tuple | None:
    """``("type", cls)`` for a parameter the callee tests the type of
    (``typetests.py``), where the call's value has a type known now: a constant's, a
    tuple's, list's or dict's the caller built; else None (its test refused, located)."""
    held = object_class(n, value)
    if held is not None:  # (a dataclass's or NamedTuple's object: its class)
        return ("type", held)
    if pname not in type_tested(fn):
        return None
    if not isinstance(value, (Var, Const)):
        return ("type", type(value))  # (a default's value)
    if isinstance(value, Const):
        return ("type", type(value.value))
    let = n.lets.get(value.name) if isinstance(value, Var) else None
    made = {"make_tuple": tuple, "make_list": list, "make_dict": dict}.get(
        getattr(let, "prim", None))
    return None if made is None else ("type", made)


def object_class(n: Any, value: Any) -> type | None:
    """The class of a dataclass or NamedTuple object a call passes: a default's (a
    constant view of its fields, or the object itself), or a parameter's given one
    (``arg_types``); None for any other value."""
    if isinstance(value, Var):
        cls = (getattr(n, "arg_types", None) or {}).get(value.name)
        return cls if n.env.get(value.name) == value.name and isinstance(cls, type) and (
            dataclasses.is_dataclass(cls) or issubclass(cls, tuple) and hasattr(
                cls, "_fields")) else None
    held = value.value if isinstance(value, Const) else value
    held = held.obj if isinstance(held, ObjectFields) else held
    return type(held) if object_fields(held) is not None else None
