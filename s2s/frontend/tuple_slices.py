"""A constant slice of a tuple the function made of known items: ``sum(args[2:])`` of
a callee's (or a transformed variadic function's) ``*args``, ``terms[::2]`` of ``terms
= (x, 2 * x, np.sin(x))`` bound once outside loops, ``p[:2]`` of a NamedTuple ``p =
Params(w, b)`` built so.  The slice is the tuple of the
items Python's slicing picks (a ``make_tuple`` of them), so each keeps its own
derivative; a tuple argument's slice, whose items are known only per call, is not
made here (refused by the analysis: "can only be indexed with a constant key")."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..ir.names import stem
from ..ir.nodes import Atom, Const, Slice, Var
from .kwdicts import _names  # (a target's names: the same walk)


def sliced_made(lowerer: Any, node: cst.Subscript, base: Atom, items: list,
                target: str | None) -> Atom | None:
    """The tuple of the items of ``t[a:b:c]`` with constant bounds where ``t`` is a tuple
    the code made of known items and never binds again (a callee's ``*args``, ``t =
    (x, y, z)`` once, outside loops): the slice's items, as Python's slicing picks
    them, a new tuple; None for any other subscript."""
    n = lowerer.n
    let = n.lets.get(base.name) if isinstance(base, Var) else None
    if len(items) != 1 or not isinstance(items[0], Slice) or let is None or not (
            let.prim == "make_tuple" and not let.params or _named_tuple(let)):
        return None
    star = n.plan is not None and any(kind == "star" and name == base.name
                                      for kind, name, _ in n.plan.entries)
    if _bindings(n.p.node, n.user_of.get(base.name, base.name)) != (0 if star else 1):
        return None  # (a name bound again, or in a loop: its value is not this tuple)
    bounds = []
    for part in (items[0].lower, items[0].upper, items[0].step):
        if part is not None and not (isinstance(part, Const) and type(part.value) is int):
            return None
        bounds.append(None if part is None else part.value)
    if bounds[2] == 0:
        return None  # (Python's ValueError where the code runs)
    picked = tuple(let.args[k] for k in range(len(let.args))[slice(*bounds)])
    return n.emit(lowerer.target(target, f"{stem(n.named(base))}_slice"), "make_tuple",
                  picked, {}, node)


def _named_tuple(let: Any) -> bool:
    """A NamedTuple the code built (``p = Params(w, b)``): its fields in order, a tuple's
    items (``p[:2]`` is the tuple of its first two fields)."""
    cls = getattr(let.params.get("built"), "cls", None) if let.prim == "make_dict" else None
    return isinstance(cls, type) and issubclass(cls, tuple) and tuple(
        getattr(cls, "_fields", ())) == tuple(let.params.get("keys", ()))


def _bindings(defined: Any, name: str) -> int:
    """How many times the parsed function ``defined`` binds ``name`` (a binding in a
    loop counts twice: its value changes between iterations)."""
    count = [0]
    loops = [0]

    class Binds(cst.CSTVisitor):
        def _add(self, target: Any) -> None:
            hits = [m for m in _names(target) if m == name]
            count[0] += len(hits) * (2 if loops[0] else 1)

        def visit_For(self, node: cst.For) -> None:
            self._add(node.target)
            loops[0] += 1

        def leave_For(self, node: cst.For) -> None:
            loops[0] -= 1

        def visit_While(self, node: cst.While) -> None:
            loops[0] += 1

        def leave_While(self, node: cst.While) -> None:
            loops[0] -= 1

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self._add(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._add(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self._add(node.target)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            self._add(node.target)

    defined.body.visit(Binds())
    return count[0]


