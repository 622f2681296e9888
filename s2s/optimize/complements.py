"""A value less its share ``e / (1 + e)`` is the value over ``1 + e`` (part of the
``egraph`` pass, run before the e-graph while every node still has its facts).

The tangent of a logistic loss's cotangent (a Hessian-vector product's) comes out of
the product rule as two terms, the derivative of ``1 / (1 + e)`` and of ``e``::

    -d * b / t * e + b * d      t = 1 + e, e = np.exp(z), d = z_dot * e

which is ``q * (1 - e / (1 + e))`` with ``q = b * d``, that is ``q / t``; written
``q / t + (q - q)``, so that an infinite ``q`` still gives NaN, as the left side's
``inf - inf`` does (``jax.jvp`` of the gradient too): two passes over the array fewer.
Equal to rounding (the right side does not cancel where ``e`` is large), NaN at the
same elements: where ``e`` is +inf, ``d`` (which has ``e`` as a factor), so ``q``, is
infinite or NaN and both sides are NaN; where ``e`` or ``q`` is NaN both are; where
``q`` is infinite both are NaN; elsewhere both are finite (``e >= 0``, an exponential,
so ``e / t`` is below one and the left side's product does not overflow)."""


from __future__ import annotations

import ast
import copy
from collections import Counter
from typing import Any, Callable

import numpy as np

from .calls import written as _written

__all__ = ["complements"]


def _chain(node: ast.AST) -> tuple[int, list[ast.AST], list[ast.AST]]:
    """``(sign, numerator factors, denominator factors)`` of a chain of ``*``, ``/``
    and unary minus."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, num, den = _chain(node.operand)
        return -sign, num, den
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        s1, n1, d1 = _chain(node.left)
        s2, n2, d2 = _chain(node.right)
        return s1 * s2, n1 + n2, d1 + d2
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        s1, n1, d1 = _chain(node.left)
        right, sign = node.right, 1
        while isinstance(right, ast.UnaryOp) and isinstance(right.op, ast.USub):
            right, sign = right.operand, -sign
        return s1 * sign, n1, d1 + [right]
    return 1, [node], []


def _spelled(nodes: list[ast.AST]) -> Counter:
    return Counter(ast.dump(n) for n in nodes)


def _exp(node: ast.AST) -> bool:
    """``np.exp(z)``: nonnegative, or NaN."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        isinstance(node.func.value, ast.Name) and node.func.value.id == "np" and \
        node.func.attr == "exp" and len(node.args) == 1 and not node.keywords


def _one_plus(node: ast.AST) -> str | None:
    """The name ``e`` of ``1 + e`` or ``e + 1`` (1 an int or float literal)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return None
    for one, e in ((node.left, node.right), (node.right, node.left)):
        if isinstance(one, ast.Constant) and type(one.value) in (int, float) and \
                one.value == 1 and isinstance(e, ast.Name):
            return e.id
    return None


def _real(fact: Any) -> bool:
    return fact is not None and isinstance(fact[1], np.dtype) and fact[1].kind == "f"


def complements(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any]) -> None:
    """Rewrite ``-q * e / t + q`` (any order of the factors and terms, or ``q - q * e /
    t``) as ``q / t + (q - q)`` where ``t`` is a name bound once to ``1 + e``, ``e`` one bound once
    to ``np.exp(...)``, and a factor of ``q`` is ``e`` or a name bound once to a product
    with the factor ``e``; every name never written into, the values real floating
    (facts)."""
    counts: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
    written: set[str] = set()
    for stmt in ast.walk(fn):
        if isinstance(stmt, ast.stmt):
            written |= _written(stmt)
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            written.add(stmt.target.id)
    bound: dict[str, ast.AST] = {}

    def has_factor(factors: list[ast.AST], e: str) -> bool:
        """Is ``e``, or a name bound to a product with the factor ``e``, a factor?"""
        for f in factors:
            if not isinstance(f, ast.Name):
                continue
            if f.id == e:
                return True
            sign, num, den = _chain(bound.get(f.id, f))
            if f.id in bound and any(isinstance(g, ast.Name) and g.id == e for g in num):
                return True
        return False

    def rewrite(n: ast.BinOp) -> ast.AST | None:
        if isinstance(n.op, ast.Add):
            pairs = ((n.left, n.right, -1), (n.right, n.left, -1))
        elif isinstance(n.op, ast.Sub):
            pairs = ((n.right, n.left, 1),)
        else:
            return None
        if not _real(fact(n)):
            return None
        for p, q, want in pairs:
            sp, num_p, den_p = _chain(p)
            sq, num_q, den_q = _chain(q)
            if sp * sq != want:
                continue
            over = _spelled(den_p) - _spelled(den_q), _spelled(num_p) - _spelled(num_q)
            if _spelled(den_q) - _spelled(den_p) or _spelled(num_q) - _spelled(num_p) or \
                    sum(over[0].values()) != 1 or sum(over[1].values()) != 1:
                continue
            t = next(d for d in den_p if ast.dump(d) in over[0])
            e = next(f for f in num_p if ast.dump(f) in over[1])
            if not (isinstance(t, ast.Name) and isinstance(e, ast.Name)) or \
                    t.id not in bound or e.id not in bound or \
                    _one_plus(bound[t.id]) != e.id or not _exp(bound[e.id]) or \
                    not has_factor(num_q, e.id) or not _real(fact(q)):
                continue
            # (q - q: NaN where q is infinite, as the left side is; else zero)
            new = ast.BinOp(ast.BinOp(q, ast.Div(), ast.Name(t.id, ast.Load())), ast.Add(),
                            ast.BinOp(copy.deepcopy(q), ast.Sub(), copy.deepcopy(q)))
            for part, like in ((new, n), (new.left, n), (new.right, q)):
                if hasattr(like, "_k"):  # (q / t has the sum's shape: t has e's)
                    part._k = like._k  # type: ignore[attr-defined]
            return ast.copy_location(new, n)
        return None

    class Rewrite(ast.NodeTransformer):
        def visit_BinOp(self, n: ast.BinOp) -> ast.AST:
            self.generic_visit(n)
            return rewrite(n) or n

    for stmt in fn.body:  # (a name is read as its binding from the statement after it)
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Return)) and \
                stmt.value is not None and bound:
            stmt.value = Rewrite().visit(stmt.value)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            if counts.get(name) == 1 and name not in written:
                bound[name] = stmt.value

