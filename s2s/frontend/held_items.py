"""A dict, list or tuple holding functions among its values (``cfg = {"act": np.tanh,
"scale": 2.0}``), given to the transformed function or passed on to a callee.

Given to the transform, each call's functions are bound to its parameter
(``api/callables.py``, ``bound_params._bind_items``): ``cfg["act"](x)`` calls the
function the call passes, ``cfg["scale"]`` reads the value, and a call passing another
function makes another transform, as a parameter given a function does.  Passed on
(``helper(x, cfg)``), or read from a module-level constant (``helper(x, CONFIG)``),
it reaches the callee as ``FnItems``: the value itself, which emitted code passes as
it is, and the functions its keys hold, which the callee's plan binds the same way
(``functions._planned_call``, ``enter``).  Its functions may not carry values of the
caller (a lambda closing over a forward value): those are refused, located.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst

from ..errors import TransformError
from .fnvalues import FnValue, spelled_here


@dataclass(frozen=True)
class FnItems:
    """The value (an atom) and its functions, ``((key, FnValue), ...)``."""

    atom: Any
    functions: tuple

    def texts(self) -> list[str]:
        return [t for _, fv in self.functions for t in fv.texts()]

    def key(self) -> tuple:
        return ("items",) + tuple((k, fv.key()) for k, fv in self.functions)


def held_items(n: Any, node: Any) -> FnItems | None:
    """``cfg`` (a parameter whose items hold functions, not rebound) or ``CONFIG`` (a
    module-level dict, list or tuple holding functions among values), else None."""
    held = getattr(n, "item_functions", {})
    if isinstance(node, cst.Name) and node.value in held and n.env.get(
            node.value) == node.value:
        fvs = tuple((k, n.funcs.resolved(fv, node)) for k, fv in held[node.value].items())
        return FnItems(n.exprs.expr(node), fvs)
    root = node
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name) or root.value in n.local_names:
        return None
    try:
        value, text = n.resolver.resolve_dotted(node)
    except TransformError:
        return None
    if type(value) not in (dict, list, tuple) or not value:
        return None
    pairs = value.items() if type(value) is dict else enumerate(value)
    fvs = []
    for key, item in pairs:
        fv = n.funcs.of_object(item, f"{text}[{key!r}]", node) if callable(item) and (
            isinstance(key, (str, int))) else None
        if fv is not None:
            fvs.append((key, fv))
    if not fvs or len(fvs) == len(value):
        return None  # (functions only: a container of functions, fncontainers.py)
    return FnItems(n.exprs.expr(node), tuple(fvs))


def pass_items(n: Any, arg: cst.Arg, out: list, kwargs: dict) -> bool:
    """A call's argument holding functions among its values, passed as ``FnItems``."""
    held = held_items(n, arg.value) if not arg.star else None
    if held is None:
        return False
    if any(isinstance(v, FnValue) for _, fv in held.functions for v in fv.leaves()) or any(
            fv.leaves() for _, fv in held.functions):
        raise n.unsupported(arg, "this value holds a function that carries values of "
                            "this function (a lambda or nested def reading them)",
                            "define the function at module level, or pass it on its own")
    if arg.keyword is not None:
        kwargs[arg.keyword.value] = held
    else:
        out.append(held)
    return True


def enter_items(n: Any, name: str, detail: FnItems) -> list[str]:
    """A planned callee's parameter given ``FnItems``: an IR parameter for the value,
    its keys' functions bound to it (``fncontainers._held_item`` reads them)."""
    n.env[name] = name
    n.bound.add(name)
    fvs = {k: spelled_here(n, fv) for k, fv in detail.functions}
    n.item_functions = {**getattr(n, "item_functions", {}), name: fvs}
    return [name]
