"""Lists spliced with lists grown in loops, as loops the transforms already read.

``a + b`` of two lists grown in loops (and ``[x] + parts``: items before a grown
list) is a new list: a copy of the left one, then the right one's items appended one
by one, as a careful person writes it by hand::

    joined = list(a)
    for item in b:
        joined.append(item)

``parts += more`` and ``parts.extend(more)`` by a grown list ``more`` append its items
to ``parts`` itself (every name sharing ``parts`` sees them, as in Python); a list
extended by itself (or by a name sharing it) is copied first, as Python's ``extend``
reads its argument before it writes: ``count = len(parts)``, then ``for k in
range(count): parts.append(parts[k])`` (a copy by ``list(parts)`` would be read
back, in reverse mode, at the length the list has at the end).  The statements are written as libcst nodes that
report the user's position (errors quote the user's line) and lowered by the
statement lowerer: ``list(...)``, ``for item in hs`` and ``append`` are forms every
transform reads.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..ir.nodes import Atom, Var
from .desugar import lower_in_place

__all__ = ["copy_of", "extend_by_loop", "splice", "splice_statement", "still_a_list"]


def _fresh(n: Any, base: str) -> str:
    name = n.names.fresh(base)
    n.local_names.add(name)
    return name


def _append_loop(list_name: str, source: str, item: str) -> cst.For:
    return cst.For(target=cst.Name(item), iter=cst.Name(source), body=cst.IndentedBlock([
        cst.SimpleStatementLine([cst.Expr(cst.Call(cst.Attribute(
            cst.Name(list_name), cst.Name("append")), [cst.Arg(cst.Name(item))]))])]))


def _named(n: Any, atom: Var, base: str) -> str:
    """A fresh user-level name bound to ``atom`` (the statements s2s writes read it)."""
    name = _fresh(n, base)
    n.env[name] = atom.name  # (not _bind: the value keeps the user's name in errors)
    return name


def copy_of(n: Any, seq: Var, node: Any, target: str | None) -> Var:
    """A new list of the grown list ``seq``'s items, each appended in a loop
    (``joined = []``, ``for item in seq: joined.append(item)``): in a loop body, where
    each iteration's copy is its own list, the backward reads back neither ``seq``
    nor its length at the end (``list(seq)``'s rule would)."""
    a = _named(n, seq, "copied")
    joined = _fresh(n, target or "joined")
    lower_in_place(n, [_empty(joined), _append_loop(joined, a, _fresh(n, "item"))], node)
    n.lists.add(n.env[joined])
    return Var(n.env[joined])


def _empty(name: str) -> Any:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))],
                                               cst.List([]))])


def splice(n: Any, left: Var, right: Var, node: Any, target: str | None,
           literal: bool) -> Atom:
    """``left + right`` where ``right`` is a list grown in a loop (and ``left`` one
    too, or a list the function built): a new list, ``left``'s items then
    ``right``'s (each appended: items may be arrays or tuples; a ``literal`` left,
    ``[x, y]``, copied: ``list(...)``)."""
    a, b = _named(n, left, "spliced_left"), _named(n, right, "spliced_right")
    joined = _fresh(n, target or "joined")
    first = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(joined))],
                                                 cst.Call(cst.Name("list"), [cst.Arg(cst.Name(a))]))])] \
        if literal else [_empty(joined), _append_loop(joined, a, _fresh(n, "item"))]
    lower_in_place(n, [*first, _append_loop(joined, b, _fresh(n, "item"))], node)
    n.lists.add(n.env[joined])  # (a list of its own: append may grow it)
    return Var(n.env[joined])


def extend_by_loop(n: Any, name: str, more: Var, node: Any) -> None:
    """``name += more`` (``name.extend(more)``) by a list grown in a loop: each of
    its items appended to ``name`` in a loop (over a copy where ``more`` is ``name``'s
    own list: Python reads it before it writes)."""
    root = n.buffer_root.get
    if root(more.name, more.name) != root(n.env[name], n.env[name]):
        lower_in_place(n, [_append_loop(name, _named(n, more, "more"), _fresh(n, "item"))], node)
        return
    count, k = _fresh(n, "count"), _fresh(n, "k")  # (its own items, as many as it had)
    lower_in_place(n, [cst.parse_statement(f"{count} = len({name})"), cst.parse_statement(
        f"for {k} in range({count}):\n    {name}.append({name}[{k}])\n")], node)


def splice_statement(n: Any, node: Any, grown: Any) -> bool:
    """Lower ``c = a + b`` (``c = [x, y] + b``) where ``b`` names a list grown in a
    loop (``a`` too), as ``c = []``, ``for item in a: c.append(item)`` (``c = [x,
    y]``) then ``for item in b: c.append(item)``: ``c`` is the list itself (a list the
    function made, which later appends may grow), not a name for a spliced value;
    where ``c`` is an operand (``acc = [t] + acc``) the list is built under a fresh
    name first, then bound to ``c``."""
    if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(
            node.targets[0].target, cst.Name) and isinstance(node.value, cst.BinaryOperation)
            and isinstance(node.value.operator, cst.Add)):
        return False
    name, left, right = node.targets[0].target.value, node.value.left, node.value.right
    operands = {m.value for m in (left, right) if isinstance(m, cst.Name)}
    if not (isinstance(right, cst.Name) and grown(right.value)) or not (
            isinstance(left, cst.Name) and grown(left.value) or isinstance(left, cst.List) and not any(
                isinstance(e, cst.StarredElement) for e in left.elements)):
        return False
    into = _fresh(n, name) if name in operands else name  # (`acc = [t] + acc`)
    if isinstance(left, cst.List):
        first = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(into))], left)])]
    else:
        first = [_empty(into), _append_loop(into, left.value, _fresh(n, "item"))]
    lower_in_place(n, [*first, _append_loop(into, right.value, _fresh(n, "item"))], node.value)
    if into != name:  # (`name` is that list: one object, which a later append grows)
        lower_in_place(n, [cst.parse_statement(f"{name} = {into}")], node.value)
        n.buffers.add(n.env[name])
    return True


def still_a_list(n: Any, ssa: str, atom: Any, node: Any) -> None:
    """``ssa = identity(atom)``; where ``atom`` is a list built here, ``ssa`` is that
    list (a later ``c + d`` or ``c.append(v)`` grows it as a list of its own)."""
    n.emit(ssa, "identity", (atom,), {}, node)
    if isinstance(atom, Var) and atom.name in n.lists:
        n.lists.add(ssa)
        n.buffer_root[ssa] = n.buffer_root.get(atom.name, atom.name)
        n.buffers.add(ssa)  # (one object with it, as Python's `c = joined`)
