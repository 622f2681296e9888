"""``state["acc"] += x`` where another name holds the same array (``a =
state["acc"]`` read before, or ``z`` the dict was built from): NumPy adds in place, so
``a`` and ``z`` see the sum too.  s2s gives the dict a new item and rebinds each such
name to it, which is what Python's names then hold.  Only where that is all there is
to it: the array is one the function made (not an argument's, not a view), the write
runs once (outside loops and branches), and the names are plain local names (an
array kept in a list, a tuple or another dict stays refused, as does a name bound in
a loop)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..errors import mark_shared_write
from ..ir.nodes import Let, Var

_CONTAINERS = ("make_list", "make_tuple", "make_dict", "append", "insert", "extend",
               "setitem", "dict_set", "dict_merge", "call")


def shared_holders(n: Any, current: str, key: Any, item: Var) -> list[str] | None:
    """The user's names holding ``item``, the array at ``key`` of the dict ``current``,
    where rebinding them after the write is Python's in-place add; None where not."""
    made = n.lets.get(item.name)
    if n.loops or n.depth or made is None or n.buffer.may_share(item.name):
        return None  # (in a loop or branch, an argument's array, a view: refused)
    same = {item.name}
    for let in n.lets.values():  # (reads of `d["k"]` before the write, and names
        if not isinstance(let, Let):  # bound to them: the same array)
            continue
        if let.prim == "getitem" and let.args[:1] == (Var(current),) and [getattr(
                i, "value", None) for i in getattr(let.params.get("index"), "items", ())
        ] == [key] or let.prim == "identity" and let.args[:1] and isinstance(
                let.args[0], Var) and let.args[0].name in same:
            same.add(let.target)
    for let in n.lets.values():
        if isinstance(let, Let) and let.target != current and let.prim != "identity" and (
                let.prim in _CONTAINERS or n.buffer.may_share(let.target)) and any(
                isinstance(a, Var) and a.name in same for a in let.args):
            return None  # (kept in a container, a view of it, or passed to a call)
    return [name for name, ssa in n.env.items() if ssa in same and name in n.local_names]


def rebind_holders(n: Any, node: cst.AugAssign, holders: list[str] | None) -> None:
    """After ``d["k"] += v``: each holder bound to the dict's new item.  The user's
    code, run as written on JAX (``s2s.jit(f, backend="jax")`` of the function),
    cannot: its arrays are values, so the holder keeps the old one; that jit refuses
    the write (``n.rebound_writes``, read in api/jit.py)."""
    for name in holders or ():
        target = cst.Name(name)
        n.desugar.alias(target, node)
        n.stmts.assign(target, node.target)
    if holders:
        text = cst.Module([]).code_for_node(node.target)
        names = ", ".join(f"`{h}`" for h in holders)
        n.rebound_writes = getattr(n, "rebound_writes", ()) + (mark_shared_write(
            n.unsupported(node, f"`{text} {node.operator._get_token()} ...` changes in "
                          f"place an array {names} also refers to; on the JAX backend the "
                          "code runs with JAX's arrays, which are values, so "
                          f"{names} would keep the old one",
                          f"read it again after the write (`{holders[0]} = {text}`), or "
                          "run it on the NumPy backend (s2s.jit(f, backend='numpy'))")),)
