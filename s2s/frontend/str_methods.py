"""A str method of a string known when s2s transforms the function (a literal, a name
bound to one, a str parameter the transform is made per call for), called with
constants: its value, computed now, as Python computes it when the function runs::

    for name in spec.split(","):          (spec="tanh,relu": the call's string)
        x = ACTS[name.strip()](x)   ->     x = ACTS["tanh"](x); x = ACTS["relu"](x)

A str method of a parameter given no string yet is refused marked per call (the
transform is then made per call's string); of a string computed when the function
runs, refused as before."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..ir.nodes import Const, Var
from .literals import known
from .passed_structure import STR_ONLY

__all__ = ["STR_ONLY", "string_method"]



def string_method(n: Any, node: cst.Call, base: Any, method: str,
                  target: str | None) -> Any:
    """``s.<method>(...)`` of a string known now, with constant arguments: the value
    as a constant; None where ``base`` is no known string (the caller goes on)."""
    if method not in STR_ONLY:
        return None
    text = _string(n, base)
    if text is None:
        func = node.func
        if isinstance(base, Var) and isinstance(func.value, cst.Name) and (
                func.value.value in _parameters(n.fn)):
            err = n.unsupported(
                func.attr, f"`.{method}()` of the parameter `{func.value.value}`, given no "
                "string s2s knows when it transforms", "pass a str (the transform is made "
                "per call's string)")
            err.per_call = True  # (expressions.per_call's mark: api/callables.py)
            raise err
        return None
    args, kwargs = n.calls.call_args(node)
    if not all(isinstance(a, Const) for a in (*args, *kwargs.values())):
        return None
    value = getattr(text, method)(*(a.value for a in args),
                                  **{k: a.value for k, a in kwargs.items()})
    const = Const(value, repr(value))
    return const if target is None else n.emit(target, "identity", (const,), {}, node)


def _string(n: Any, atom: Any) -> str | None:
    if isinstance(atom, Var) and type(getattr(n, "bound_strings", {}).get(
            atom.name)) is str:
        return n.bound_strings[atom.name]
    const = known(n, atom)
    return const.value if const is not None and type(const.value) is str else None


def _parameters(fn: Any) -> tuple[str, ...]:
    code = getattr(fn, "__code__", None)
    if code is None:
        return ()
    return code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
