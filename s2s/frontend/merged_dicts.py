"""``out |= {"k": v}`` of a dict a call of your function returned: the dict is a new
one where the callee's body ends in ``return {...}`` (a dict display of its own), so
rebinding ``out = out | {"k": v}``, as s2s writes it, is what Python's in-place merge
does; a dict the callee may hand back from elsewhere (an argument, a module's dict)
stays refused, since Python's ``|=`` would change that dict for every name holding it."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..ir.nodes import Function, Let, Return, walk


def fresh_dict(n: Any, node: cst.AugAssign) -> bool:
    """Is ``node`` a ``|=`` of a dict display into a name bound to the dict literal a
    user function's call returned?"""
    if not isinstance(node.operator, cst.BitOrAssign) or not isinstance(node.value, cst.Dict):
        return False
    let = n.lets.get(n.env.get(node.target.value, ""))
    callee = let.params.get("callee") if isinstance(let, Let) and let.prim == "call" else None
    callee = getattr(callee, "function", callee)
    body = callee.body if isinstance(callee, Function) else None
    if not body or not isinstance(body[-1], Return) or any(
            isinstance(t, Return) for t in walk(body[:-1])):
        return False
    made = next((t for t in walk(body) if isinstance(t, Let) and t.target == getattr(
        body[-1].value, "name", None)), None)
    return made is not None and made.prim == "make_dict"
