"""The emitted module every transform appends its functions to, and how emitted code
names what it calls: helpers' stems, objects bound in the module's namespace, an
emitted signature's defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ir.kinds import Kind
from ..ir.names import NameTable, readable
from ..ir.nodes import Function


@dataclass
class Module:
    """The functions of one emitted module, callees first."""

    functions: list[str] = field(default_factory=list)
    names: dict[Any, str] = field(default_factory=dict)  # callee-vjp key -> name
    taken: set[str] = field(default_factory=set)
    namespace: dict[str, Any] = field(default_factory=dict)

    def names_for(self, fn: Function) -> NameTable:
        """Fresh names for a function emitted here: none of its locals, none taken."""
        return NameTable(fn.names.taken | self.taken)


def tuple_text(items: list[str]) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def stem(callee: Function) -> str:
    """The stem of a helper's name: the function's own (a method's ``__call__``:
    ``call``), ``lambda`` for a lambda's."""
    return readable(callee.name) if callee.name.isidentifier() else "lambda"


def bind_object(module: Module, preferred: str, obj: Any, fallback: str = "rule") -> str:
    """A name emitted code calls ``obj`` by, bound in the module's namespace."""
    target = getattr(obj, "__s2s_unwrap__", obj)
    if not preferred.isidentifier():  # a lambda: named after its role
        preferred = fallback
    name, i = preferred, 2
    while True:
        known = module.namespace.get(name)
        if known is not None and getattr(known, "__s2s_unwrap__", known) is target:
            return name
        if known is None and name not in module.taken:
            break
        name = f"{preferred}_{i}"
        i += 1
    module.namespace[name] = obj
    module.taken.add(name)
    return name


# defaults Python shares between calls and a caller may change in place
# (``def f(x, cfg={"a": 1.0})`` then ``f.__defaults__[0]["a"] = 5.0``): written as a
# name bound to the object itself, never as a literal copy of what it held
MUTABLE_DEFAULTS = (dict, list, set, bytearray)


def shared_default(value: Any) -> bool:
    """A mutable default, or a tuple holding one (``specs=({"w": 0.5},)``: its dicts
    are the caller's, changed in place as a dict default is)."""
    return type(value) in MUTABLE_DEFAULTS or type(value) is tuple and any(
        shared_default(v) for v in value)


def default_text(fn: Function, p: str, module: Module | None) -> str:
    """How an emitted signature spells parameter ``p``'s default: its repr when that
    reads back as the value (a literal), else a name bound to it (an array, a
    mutable container: the caller's own object, as Python passes it)."""
    value = fn.defaults[p]
    text = repr(value)
    if module is not None and shared_default(value):
        return bind_object(module, f"{p}_default", value)
    try:
        same = type(eval(text, {})) is type(value)  # noqa: S307 (a literal's repr)
    except Exception:
        same = False
    if same or module is None:
        return text
    return bind_object(module, f"{p}_default", value)


def signature_text(fn: Function, params: list[str], drop_defaults: bool,
               module: Module | None = None) -> str:
    def default(p: str) -> str:
        return default_text(fn, p, module)

    parts = []
    for p in params:
        if p in fn.defaults and not drop_defaults:
            parts.append(f"{p}={default(p)}")
        else:
            parts.append(p)
    if fn.kwonly:
        parts.append("*")
        for p in fn.kwonly:
            parts.append(f"{p}={default(p)}" if p in fn.defaults else p)
    return ", ".join(parts)


class OutputStructureError(TypeError):
    """The output is a container where grad needs a scalar (or has_aux a pair)."""


def grad_error(kind: Kind) -> TypeError:
    return OutputStructureError(
        "Gradient only defined for scalar-output functions. "
        f"Output was a container of structure {kind!r}."
    )


def aux_error(kind: Kind) -> TypeError:
    return OutputStructureError(
        "expected function with aux output to return a two-element tuple, but got "
        f"a value of structure {kind!r}"
    )
