"""``state["acc"] += x`` where another name holds the same array (``a =
state["acc"]`` read before, or ``z`` the dict was built from): NumPy adds in place, so
``a`` and ``z`` see the sum too.  s2s gives the dict a new item and rebinds each such
name to it, which is what Python's names then hold.  Only where that is all there is
to it: the array is one the function made (not an argument's, not a view), the write
runs once (outside loops and branches), and the names are plain local names (an
array kept in a tuple or another dict stays refused, as does a name bound in a loop).
A list literal holding it (``keep = [state["acc"]]``) is built again with the new item
(``keep = [state["acc"]]`` after the write), where the list is a local name's, holds
nothing but that array and constants, and nothing read, changed or held the list
before the write (a new list is then the same to every reader)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..errors import mark_shared_write
from ..ir.nodes import Const, Let, Var, uses

_CONTAINERS = ("make_list", "make_tuple", "make_dict", "append", "insert", "extend",
               "setitem", "dict_set", "dict_merge", "call")


def shared_holders(n: Any, current: str, key: Any, item: Var) -> list[Any] | None:
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
    spots: list[Any] = []
    for let in n.lets.values():
        if isinstance(let, Let) and let.target != current and let.prim != "identity" and (
                let.prim in _CONTAINERS or n.buffer.may_share(let.target)) and any(
                isinstance(a, Var) and a.name in same for a in let.args):
            places = _list_places(n, let, same)
            if places is None:
                return None  # (kept in a container, a view of it, or passed to a call)
            spots += places
    return [name for name, ssa in n.env.items() if ssa in same and name in n.local_names
            ] + spots


def _list_places(n: Any, let: Let, same: set[str]) -> list[tuple[str, list]] | None:
    """``(name, items)`` for the list literal ``let`` holding the array: the local
    name bound to it, and its items (None for the array's places, else a constant);
    None where the list holds anything else, or was read, changed or held by anything
    else before the write (or is not a plain literal)."""
    names = [name for name, ssa in n.env.items() if ssa == let.target]
    if let.prim != "make_list" or let.params or len(names) != 1 or (
            names[0] not in n.local_names) or let.target not in n.lists or not all(
            isinstance(a, Const) or a.name in same for a in let.args):
        return None
    for other in n.lets.values():  # (any statement reading the list, before the write)
        if isinstance(other, Let) and other is not let and let.target in uses(other):
            return None
    return [(names[0], [a if isinstance(a, Const) else None for a in let.args])]


def rebind_holders(n: Any, node: cst.AugAssign, holders: list[Any] | None) -> None:
    """After ``d["k"] += v``: each holder bound to the dict's new item (a list
    holding it built again with it: ``keep = [d["k"]]``).  The user's code, run as
    written on JAX (``s2s.jit(f, backend="jax")`` of the function), cannot: its arrays
    are values, so the holder keeps the old one; that jit refuses the write
    (``n.rebound_writes``, read in api/jit.py)."""
    for holder in holders or ():
        value: Any = node.target
        if isinstance(holder, tuple):  # a list built again, with the new item
            holder, items = holder
            value = cst.List([cst.Element(node.target if a is None else
                                          cst.parse_expression(a.text)) for a in items])
            n.desugar.alias_tree(value, node)
        target = cst.Name(holder)
        n.desugar.alias(target, node)
        n.stmts.assign(target, value)
    if holders:
        names = [h[0] if isinstance(h, tuple) else h for h in holders]
        text = cst.Module([]).code_for_node(node.target)
        said = ", ".join(f"`{h}`" for h in names)
        n.rebound_writes = getattr(n, "rebound_writes", ()) + (mark_shared_write(
            n.unsupported(node, f"`{text} {node.operator._get_token()} ...` changes in "
                          f"place an array {said} also refers to; on the JAX backend the "
                          "code runs with JAX's arrays, which are values, so "
                          f"{said} would keep the old one",
                          f"read it again after the write (`{names[0]} = {text}`), or "
                          "run it on the NumPy backend (s2s.jit(f, backend='numpy'))")),)
