"""Strings made from shapes: ``"shape={}".format(x.shape)``, ``desc.endswith("(2, 3)")``,
``str(x.shape).count(",")``, ``tag == "2x3"`` of ``tag = f"{rows}x{cols}"``.

A shape, and an int or string computed from shapes and constants only, is a Python
value where the code runs (``Normalizer.shapes``), the same for every call with the
same shapes; a method of it, or ``str``/``repr`` of it (``len``: ``pyvalues.py``),
with arguments of the same kind, is kept as written (a ``pyexpr``) and computed where
the code runs, so a call with other shapes computes it again (the code is not made
per shape: a branch on it is an ``if`` on a Python bool, as ``if rows == 2:`` is).
A string of an array's values (``f"{x[0]}"``) is not one of these: it stays refused,
at its line."""

from __future__ import annotations

import builtins
from typing import Any

import libcst as cst

from ..ir.nodes import Atom, Const, Var

# the methods of Python's values a shape or a string of one may call
_METHODS = frozenset(m for t in (str, tuple, int) for m in dir(t) if not m.startswith("_"))
_BUILTINS = (builtins.str, builtins.repr)


def _shape_valued(n: Any, atom: Atom) -> bool:
    return isinstance(atom, Const) and isinstance(atom.value, (str, int, tuple)) or (
        isinstance(atom, Var) and atom.name in n.shapes)


def _run(n: Any, node: cst.Call, target: str | None, operands: list[Atom],
         form: str, base: str) -> Atom:
    texts = tuple(f"__s2s_operand_{k}__" for k in range(len(operands)))
    return n.emit(n.exprs.target(target, base), "pyexpr", tuple(operands),
                  {"template": (form.format(*texts), texts), "shape_only": ()}, node)


def shape_method(n: Any, node: cst.Call, base: Atom, method: str,
                 target: str | None) -> Atom | None:
    """``base.method(...)`` of a shape-made value (or a string constant given one:
    ``"shape={}".format(x.shape)``), kept where the code runs; None otherwise."""
    if method not in _METHODS or not _shape_valued(n, base) or any(
            a.star for a in node.args):
        return None
    args = [n.exprs.expr(a.value) for a in node.args]
    if not all(_shape_valued(n, a) for a in args) or all(
            isinstance(a, Const) for a in [base, *args]):
        return None
    slots = ", ".join(("{}" if a.keyword is None else f"{a.keyword.value}={{}}")
                      for a in node.args)
    return _run(n, node, target, [base, *args], "{}." + method + "(" + slots + ")", method)


def shape_builtin(n: Any, fn: Any, node: cst.Call, target: str | None) -> Atom | None:
    """``str(x.shape)``, ``repr(tag)`` of a shape-made value; None otherwise."""
    if not any(fn is b for b in _BUILTINS) or len(node.args) != 1 or node.args[0].star or \
            node.args[0].keyword is not None:
        return None
    atom = n.exprs.expr(node.args[0].value)
    if not isinstance(atom, Var) or atom.name not in n.shapes:
        return None
    return _run(n, node, target, [atom], fn.__name__ + "({})", fn.__name__)
