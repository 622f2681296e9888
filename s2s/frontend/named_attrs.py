"""``getattr(obj, name)`` called, where ``name`` is a string known when s2s transforms
the function (a literal, a loop's item over a tuple of strings, a str default, an
f-string of such): the function ``obj.<name>`` denotes, as if written so::

    for n in ("tanh", "sin"):                 np.tanh(x), then np.sin(x)
        acc = acc + getattr(np, n)(x)
    getattr(self, f"act_{self.kind}")(x)      self.act_tanh(x)

A name known only when the function runs is left to the refusal it had."""

from __future__ import annotations

import builtins
from typing import Any

import libcst as cst

from ..errors import TransformError
from ..ir.nodes import Const, Var
from .literals import known

__all__ = ["getattr_reads", "named_attribute"]


def named_attribute(fl: Any, node: cst.Call) -> Any:
    """The function value ``getattr(obj, "name")`` denotes, or None (not such a call)."""
    func = node.func
    if not isinstance(func, cst.Name) or func.value != "getattr" or (
            func.value in fl.n.local_names) or len(node.args) != 2 or any(
            a.keyword is not None or a.star for a in node.args):
        return None
    try:
        if fl.n.resolver.lookup_global(func) is not builtins.getattr:
            return None
    except TransformError:
        return None
    value = fl.n.comps.static.static_value(node.args[1].value)  # (`names[0]`)
    name = Const(value, repr(value)) if type(value) is str else _string(
        fl.n, fl.n.exprs.expr(node.args[1].value))
    if name is None:  # (made per call's strings where a parameter gives it)
        err = fl.n.unsupported(
            node.args[1], "`getattr` of a name known only when the function runs: s2s "
            "reads the function it names when it transforms", "name it by a string "
            "literal, a loop over a tuple of strings, or a str parameter")
        err.per_call = True  # (expressions.per_call's mark: api/callables.py)
        raise err
    if not name.value.isidentifier():
        raise fl.n.unsupported(node.args[1], f"getattr of the name {name.value!r}, not an "
                               "identifier", "name an attribute the object has")
    attr = cst.Attribute(node.args[0].value, cst.Name(name.value))
    fl.n.desugar.alias_tree(attr, node)
    root = node.args[0].value
    while isinstance(root, cst.Attribute):
        root = root.value
    if isinstance(root, cst.Name) and root.value not in fl.n.local_names:
        fl.n.resolver.resolve_dotted(attr)  # (`getattr(np, "tahn")`: no such attribute)
    return fl.value_of(attr)


def _string(n: Any, atom: Any) -> Const | None:
    """The string ``atom`` is when transforming: a constant, a name bound to one (a
    loop over constant strings unrolled), a parameter the transform is made per call
    for (``bound_strings``)."""
    if isinstance(atom, Var) and type(getattr(n, "bound_strings", {}).get(
            atom.name)) is str:
        return Const(n.bound_strings[atom.name], repr(n.bound_strings[atom.name]))
    const = known(n, atom)
    return const if const is not None and isinstance(const.value, str) else None


def getattr_reads(body: Any, names: set[str]) -> bool:
    """Does ``body`` call ``getattr(obj, ...)`` of a name of ``names`` (a loop's
    variables: the loop is unrolled, so each copy's name is a constant)?"""
    found = [False]

    class Find(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            if isinstance(call.func, cst.Name) and call.func.value == "getattr" and len(
                    call.args) == 2 and any(isinstance(m, cst.Name) and m.value in names
                                            for m in _names(call.args[1].value)):
                found[0] = True

    body.visit(Find())
    return found[0]


def _names(node: Any) -> list[Any]:
    out: list[Any] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            out.append(name)

    node.visit(Names())
    return out
