"""The refusal of a container bound on one path of an ``if`` and None on the other
(transforms/analysis.py ``_placeholder_kind``), worded with the user's names only; and
the case that needs none: a container read only where its derivative is not (a
join's gradient cutting its cotangent by the pieces' shapes, ``split_like(g, parts,
0)``, in the gradient's mirror of the ``if``, transformed again by vmap or hessian)."""

from __future__ import annotations

import re
from typing import Any

from ..errors import TransformError
from ..ir.nodes import Function, If, Let, Var, atoms_in, uses, walk
from ..primitives import PRIMITIVES
from ..primitives.registry import arg_slots


def spelled(fn: Function, name: str) -> str | None:
    """```d``` for the IR's ``d`` (its version ``d_2``) where the user wrote ``d``; None
    for a name s2s made (``x_x_times_2``, a list literal's), which a message must not
    name.  In code s2s emitted (hessian's gradient), the user's lines are the comments
    quoting them."""
    emitted = str(fn.loc.file).startswith("<s2s:")
    lines = [t for t in fn.source_lines.values() if not emitted or t.strip().startswith("#")]
    for base in dict.fromkeys((name, re.sub(r"_\d+$", "", name))):
        if any(re.search(rf"\b{re.escape(base)}\b", t) for t in lines):
            return f"`{base}`"
    return None


def container_on_one_path(fn: Function, target: str, loc: Any) -> TransformError:
    name = spelled(fn, target)
    return TransformError(
        (f"{name} holds a container and is None on another path of the `if` that binds "
         "it" if name else "a list or tuple this `if` builds is None on its other path")
        + "; s2s cannot make its derivative's zeros there", loc,
        f"bind {name} on every path (a container of arrays there too), or read it only "
        "in the `if` that binds it" if name else "build the list before the `if`, on "
        "every path (`parts = [x, 2.0 * x]`, then `if ...: x = np.concatenate(parts)`)",
    )


def derivative_never_read(fn: Function, name: str, let: Let) -> bool:
    """Whether every statement reading ``name`` is a primitive with derivative rules
    reading it in an argument they do not differentiate (``split_like``'s ``arrays``:
    their shapes alone), so no transform makes its tangent or cotangent, on the path
    that binds it None or another.  Reads inside the ``if`` whose path binds it (``let``,
    innermost) are on the path that built it (``np.concatenate(parts)`` there)."""
    binding = [s for s in walk(fn.body) if isinstance(s, If) and name in s.joins and any(
        t is let for t in walk(s.body + s.orelse))]
    if not binding:
        return False
    inside = {id(t) for t in walk(binding[-1].body + binding[-1].orelse)}
    for s in walk(fn.body):
        if id(s) in inside or name not in uses(s):
            continue
        prim = PRIMITIVES.get(s.prim) if isinstance(s, Let) else None
        if prim is None or not prim.diff or prim.name in ("call", "identity") or any(
                isinstance(a, Var) and a.name == name for p in s.params.values()
                for a in atoms_in(p)):
            return False
        for a, (pname, _) in zip(s.args, arg_slots(s)):
            if isinstance(a, Var) and a.name == name and pname in prim.diff:
                return False
    return True
