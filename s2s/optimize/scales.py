"""Power-of-two factors moved where they cost least (part of the ``egraph`` pass, run
before the e-graph while every node still has its facts).

A cotangent often carries a literal such as the ``2`` of ``x**2``'s rule into a
product with a small array (a row's coefficient) or into a sum::

    coef * (2 * x)              ->  (2 * coef) * x        coef smaller than x
    (g * (2 * d)).sum(axis=0)   ->  2 * (g * d).sum(axis=0)

so the array pass scaling every element is not made.  Exact: multiplying by a power of
two commutes with rounding (the products and the sum's terms are the same numbers
scaled), as long as nothing overflows or becomes subnormal.  Only real floating
operands of float32 or wider (facts), so a Python number is weak on both sides and the
dtype is the same.
"""

from __future__ import annotations

import ast
import math
from typing import Any, Callable

import numpy as np

from .calls import written as _written
from .complements import complements  # noqa: F401  (specialize.py runs it beside these)
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
    """Real floating, float32 or wider (float16 overflows at 65504: scaling its terms
    first, or summing them first, overflows where the other order may not)."""
    return fact is not None and isinstance(fact[1], np.dtype) and fact[1].kind == "f" \
        and fact[1].itemsize >= 4


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


# ---- divisors that are positive by construction, out of sums ---------------------------

_NONNEG_CALLS = {"exp", "abs", "absolute", "square", "sqrt", "var", "std", "exp2", "cosh"}
_NONNEG_REDUCTIONS = {"sum", "mean", "max", "min"}  # (of a nonnegative value)


def _nonnegative(node: ast.AST, bound: dict[str, ast.AST]) -> bool:
    """Is every element of ``node`` >= 0 or NaN, by construction?"""
    if isinstance(node, ast.Name):
        return node.id in bound and _nonnegative(bound[node.id], bound)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value >= 0
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant) and \
                type(node.right.value) is int and node.right.value % 2 == 0:
            return True
        if isinstance(node.op, (ast.Add, ast.Mult, ast.Div)):
            return _nonnegative(node.left, bound) and _nonnegative(node.right, bound)
        return False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        name = node.func.attr
        if isinstance(node.func.value, ast.Name) and node.func.value.id == "np":
            if name in _NONNEG_CALLS:
                return True
            return name in _NONNEG_REDUCTIONS and bool(node.args) and \
                _nonnegative(node.args[0], bound)
        return name in _NONNEG_REDUCTIONS and _nonnegative(node.func.value, bound)
    return False


def _positive(node: ast.AST, bound: dict[str, ast.AST]) -> bool:
    """Is every element of ``node`` > 0 or NaN: ``np.sqrt(e + c)`` (``c`` a positive
    literal, ``e`` nonnegative), a positive literal plus a nonnegative value."""
    if isinstance(node, ast.Name):
        return node.id in bound and _positive(bound[node.id], bound)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value > 0
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            isinstance(node.func.value, ast.Name) and node.func.value.id == "np" and \
            node.func.attr == "sqrt" and len(node.args) == 1 and not node.keywords:
        return _positive(node.args[0], bound)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return (_positive(node.left, bound) and _nonnegative(node.right, bound)) or \
            (_positive(node.right, bound) and _nonnegative(node.left, bound))
    return _shifted_exp_sum(node, bound)


def _reduced(node: ast.AST, names: tuple[str, ...]) -> tuple[ast.AST, str] | None:
    """(x, its keywords dumped) of ``x.f(...)``/``np.f(x, ...)``, f in ``names``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in names):
        return None
    if isinstance(node.func.value, ast.Name) and node.func.value.id == "np":
        if len(node.args) != 1:
            return None
        x = node.args[0]
    elif node.args:
        return None
    else:
        x = node.func.value
    return x, ast.dump(ast.Tuple(sorted(node.keywords, key=lambda k: k.arg or ""), ast.Load()))


def _shifted_exp_sum(node: ast.AST, bound: dict[str, ast.AST]) -> bool:
    """``np.exp(x - x.max(axis=k, keepdims=True)).sum(axis=k, keepdims=True)`` (a
    softmax's denominator): the maximum's own term is exp(0) = 1, so every sum is >= 1,
    or NaN (a row with NaN or an infinity)."""
    total = _reduced(node, ("sum",))
    if total is None:
        return False
    e, axes = total
    if isinstance(e, ast.Name):
        e = bound.get(e.id, e)
    if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and
            isinstance(e.func.value, ast.Name) and e.func.value.id == "np" and
            e.func.attr == "exp" and len(e.args) == 1 and not e.keywords):
        return False
    diff = e.args[0]
    if not (isinstance(diff, ast.BinOp) and isinstance(diff.op, ast.Sub) and
            isinstance(diff.left, ast.Name)):
        return False
    top = diff.right
    if isinstance(top, ast.Name):
        top = bound.get(top.id, top)
    peak = _reduced(top, ("max", "amax"))
    return peak is not None and isinstance(peak[0], ast.Name) and \
        peak[0].id == diff.left.id and peak[1] == axes and "keepdims" in axes


def divisors_out_of_sums(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any]) -> None:
    """``(a * (b / s) / s).sum(axis=k, keepdims=True)`` is ``(a * b).sum(axis=k,
    keepdims=True) / s / s`` where ``s`` is a name bound once (never written into) to a
    value positive by construction (``np.sqrt(var + 1e-5)``), of size 1 along the summed
    axes, which are not empty: the quotients are not made over the whole array.  Equal
    to rounding (the divisor is never zero, so no quotient is an infinity the other
    side lacks; a NaN one makes both sides NaN, as it would not a sum of no terms)."""
    bound: dict[str, ast.AST] = {}
    counts: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
    written: set[str] = set()
    for stmt in fn.body:
        written |= _written(stmt)
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}

    class Out(ast.NodeTransformer):
        def visit_Call(self, n: ast.Call) -> ast.AST:
            self.generic_visit(n)
            x = _summed(n)
            kws = {k.arg: k.value for k in n.keywords}
            if x is None or set(kws) != {"axis", "keepdims"} or not _floating(fact(n)):
                return n
            try:
                axis, keep = ast.literal_eval(kws["axis"]), ast.literal_eval(kws["keepdims"])
            except ValueError:
                return n
            fx = fact(x)
            if keep is not True or not _floating(fx) or not (
                    type(axis) is int or (isinstance(axis, tuple) and axis and
                                          all(type(a) is int for a in axis))):
                return n
            ndim = len(fx[0])
            axes = {a % ndim for a in ((axis,) if isinstance(axis, int) else axis)} \
                if ndim else set()
            if not axes or any(fx[0][a] == 0 for a in axes):
                return n  # (a sum of no terms is 0 whatever the divisor: a NaN one too)
            moved: list[ast.AST] = []

            def strip(e: ast.AST) -> ast.AST:
                """``e`` with movable divisors taken out (into ``moved``)."""
                if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Div) and \
                        isinstance(e.right, ast.Name) and _movable(e.right):
                    moved.append(e.right)
                    return strip(e.left)
                if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Mult, ast.Div)) and \
                        _floating(fact(e.left)) and _floating(fact(e.right)):
                    left = strip(e.left)
                    right = strip(e.right) if isinstance(e.op, ast.Mult) else e.right
                    return ast.BinOp(left, e.op, right)
                return e

            def _movable(s: ast.Name) -> bool:
                fs = fact(s)
                return _floating(fs) and len(fs[0]) == ndim and all(
                    fs[0][a] == 1 for a in axes) and _positive(s, bound)

            rest = strip(x)
            if not moved or not _floating(fact(x)):
                return n
            if n.args:
                n.args = [rest]
            else:
                n.func.value = rest  # type: ignore[attr-defined]
            out: ast.AST = n
            for s in moved:
                out = ast.BinOp(out, ast.Div(), ast.Name(s.id, ast.Load()))
            return ast.copy_location(out, n)

    for stmt in fn.body:  # (a name is read as its binding from the statement after it)
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Return)) and \
                stmt.value is not None and bound:
            stmt.value = Out().visit(stmt.value)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name):
            t = stmt.targets[0].id
            if counts.get(t) == 1 and t not in written and t not in params:
                bound[t] = stmt.value
