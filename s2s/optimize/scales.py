"""Power-of-two factors moved where they cost least (part of the ``egraph`` pass, run
before the e-graph while every node still has its facts).

A cotangent often carries a literal such as the ``2`` of ``x**2``'s rule into a
product with a small array (a row's coefficient) or into a sum::

    coef * (2 * x)              ->  (2 * coef) * x        coef smaller than x
    (g * (2 * d)).sum(axis=0)   ->  2 * (g * d).sum(axis=0)

so the array pass scaling every element is not made.  Exact: multiplying by a power of
two commutes with rounding (the products and the sum's terms are the same numbers
scaled), as long as nothing overflows or becomes subnormal.  Only real floating
operands (facts), so a Python number is weak on both sides and the dtype is the same.
"""

from __future__ import annotations

import ast
import math
from typing import Any, Callable

import numpy as np

from .terms import summed as _summed


def _power_of_two(node: ast.AST) -> bool:
    """A number literal ``±2**k`` other than ±1."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if not (isinstance(node, ast.Constant) and type(node.value) in (int, float)):
        return False
    c = float(node.value)
    return math.isfinite(c) and c not in (0.0, 1.0) and math.frexp(c)[0] == 0.5


def _floating(fact: Any) -> bool:
    return fact is not None and isinstance(fact[1], np.dtype) and fact[1].kind == "f"


def _scaled(node: ast.AST) -> tuple[ast.AST, ast.AST] | None:
    """(c, x) of ``c * x`` or ``x * c``, c a power-of-two literal."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        if _power_of_two(node.left):
            return node.left, node.right
        if _power_of_two(node.right):
            return node.right, node.left
    return None


def lift_scales(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any]) -> None:
    """Rewrite every statement's products and sums as the module docstring says."""

    def size(node: ast.AST) -> int | None:
        f = fact(node)
        return math.prod(f[0]) if _floating(f) else None

    class Lift(ast.NodeTransformer):
        def visit_BinOp(self, n: ast.BinOp) -> ast.AST:
            self.generic_visit(n)
            if not isinstance(n.op, ast.Mult) or not _floating(fact(n)):
                return n
            for small, other in ((n.left, n.right), (n.right, n.left)):
                found = _scaled(other)
                if found is None:
                    continue
                c, x = found
                a, b = size(small), size(x)
                if a is None or b is None or a >= b:
                    continue
                scaled = ast.BinOp(c, ast.Mult(), small)
                out = ast.BinOp(scaled, ast.Mult(), x) if small is n.left else \
                    ast.BinOp(x, ast.Mult(), scaled)
                return ast.copy_location(out, n)
            return n

        def visit_Call(self, n: ast.Call) -> ast.AST:
            self.generic_visit(n)
            x = _summed(n)
            if x is None or not all(k.arg in ("axis", "keepdims") for k in n.keywords) \
                    or not _floating(fact(n)):
                return n
            found = _scaled(x)
            if found is None and isinstance(x, ast.BinOp) and isinstance(x.op, ast.Mult):
                for inner, other in ((x.right, x.left), (x.left, x.right)):
                    pair = _scaled(inner)
                    if pair is not None and _floating(fact(other)) and \
                            _floating(fact(pair[1])):
                        rest = ast.BinOp(other, ast.Mult(), pair[1]) if inner is x.right \
                            else ast.BinOp(pair[1], ast.Mult(), other)
                        found = (pair[0], rest)
                        break
            elif found is not None and not _floating(fact(found[1])):
                found = None
            if found is None:
                return n
            c, rest = found
            if n.args:  # np.sum(x, ...)
                n.args = [rest]
            else:
                n.func.value = rest  # type: ignore[attr-defined]
            return ast.copy_location(ast.BinOp(c, ast.Mult(), n), n)

    for stmt in fn.body:
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Return)) and \
                stmt.value is not None:
            stmt.value = Lift().visit(stmt.value)
