"""The ``literals`` pass: arithmetic between an array and a Python number, spelled the
way NumPy runs it fastest with the same result.

NumPy 2 treats a Python number as a *weak* scalar: ``2 * x`` and ``2.0 * x`` both take
``x``'s dtype, so for a floating or complex ``x`` the integer ``2`` and the float ``2.0``
give the same array, bit for bit; but an ``int`` operand costs NumPy a conversion the
``float`` does not (about 0.1 µs a call), and any scalar operand costs more than a second
array (``x + x`` is about 0.25 µs faster than ``2 * x`` at a thousand elements).  The
emitted code says ``2 * x`` (the derivative of ``x**2``) and ``1 - t**2`` (of ``tanh``)
in every gradient that squares something; after this pass a floating ``x``'s double is
``x + x`` (exact: doubling rounds nothing, and both overflow to the same infinity) and
a small integer beside a floating or complex operand is written as a float (exact: it
is the same weak scalar, and every integer up to 2048 is a float16 too).

Only where the other operand's dtype is a fact of the signature (``fact``), so a
Python or NumPy integer operand keeps its integer arithmetic.
"""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any, Callable

import numpy as np

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)
_LARGEST = 2048  # (every integer up to it is exact in float16, float32 and float64)


def _small_int(node: ast.AST) -> int | None:
    """The value of an integer literal ``k`` or ``-k`` with ``|k| <= 2048``."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node, sign = node.operand, -1
    if isinstance(node, ast.Constant) and type(node.value) is int and \
            abs(node.value) <= _LARGEST:
        return sign * node.value
    return None


def _number(value: float) -> ast.expr:
    if value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def spell_literals(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any]) -> None:
    """Rewrite ``fn`` in place: ``2 * x`` (or ``x * 2``, ``2.0 * x``) of a name ``x``
    with a real floating dtype is ``x + x``; an integer literal operand of ``+ - * /``
    whose other operand has a floating or complex dtype is the same number as a float."""
    stores = Counter(n.id for n in ast.walk(fn)
                     if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
    stores.update(a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg))  # (bound too)
    bound: dict[str, Any] = {}  # a name bound once -> its value's fact
    for stmt in ast.walk(fn):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name) and stores[stmt.targets[0].id] == 1:
            found = fact(stmt.value)
            if found is not None:
                bound[stmt.targets[0].id] = found

    def dtype(node: ast.AST) -> np.dtype | None:
        found = fact(node)
        if found is None and isinstance(node, ast.Name):
            found = bound.get(node.id)  # (bound once, and not a parameter)
        kind = found[1] if found is not None else None
        return kind if isinstance(kind, np.dtype) else None

    class Spell(ast.NodeTransformer):
        def visit_BinOp(self, n: ast.BinOp) -> ast.AST:
            self.generic_visit(n)
            if not isinstance(n.op, _ARITHMETIC):
                return n
            for number, other, side in ((n.left, n.right, "left"), (n.right, n.left, "right")):
                k = _small_int(number)
                two = k == 2 or isinstance(number, ast.Constant) and \
                    type(number.value) is float and number.value == 2.0
                if k is None and not two:
                    continue
                dt = dtype(other)
                if dt is None or dt.kind not in "fc":
                    continue
                if two and isinstance(n.op, ast.Mult) and isinstance(other, ast.Name) and \
                        dt.kind == "f":
                    twice = ast.BinOp(other, ast.Add(), ast.Name(other.id, ast.Load()))
                    return ast.copy_location(twice, n)
                if k is not None:
                    setattr(n, side, ast.copy_location(_number(float(k)), number))
            return n

    Spell().visit(fn)
    ast.fix_missing_locations(fn)
