"""Complex arithmetic whose imaginary part is zero and never read: done in the reals.

A rule written for complex arrays (``slogdet``'s cotangent: ``c = np.real(g[1]) + 1j *
np.imag(g[0] * sign)``, then ``unbroadcast(np.expand_dims(c, (-2, -1)) * inv(a).T, a)``)
computes in complex numbers for a real ``a`` too, and takes the real part at the end.
Where the facts of the signature say the array under ``np.imag`` is real, its imaginary
part is exactly zero, so ``c`` is ``np.real(g[1]) + 0j``; and where every read of ``c``
is one product with a real array whose real part ``unbroadcast`` takes (to a real
operand of the product's shape), that real part is ``np.real(g[1]) * m`` exactly:
``(r + 0j) * m`` has real part ``r * m - 0 * 0``.  So ``c`` becomes ``np.real(g[1])``
(its operand itself where that is real) and the ``unbroadcast`` its operand.

Only a name bound once, in the function's top level, and never written into, is
rewritten; any other read of it (or a second factor: ``(r + 0j) * m1 * m2`` turns an
infinite ``r * m1`` into NaN in the complex product) leaves the code as it is.
"""

from __future__ import annotations

import ast
from typing import Any, Callable

import numpy as np

from .calls import call_name

Fact = Callable[[ast.AST], Any]


def _np_call(node: ast.AST, name: str, nargs: int) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        isinstance(node.func.value, ast.Name) and node.func.value.id == "np" and \
        node.func.attr == name and len(node.args) == nargs and not node.keywords


def _real(fact: Fact, node: ast.AST) -> np.dtype | None:
    """The dtype of ``node``'s value where it is a real (not complex) array, a fact."""
    f = fact(node)
    if f is None or not isinstance(f[1], np.dtype) or f[1].kind not in "biuf":
        return None
    return f[1]


def _zero_imaginary(value: ast.AST, fact: Fact) -> ast.expr | None:
    """``left`` of ``left + 1j * np.imag(y)`` (either order of the product) where ``y``
    is real: then the sum is ``left`` with a zero imaginary part."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and
            isinstance(value.right, ast.BinOp) and isinstance(value.right.op, ast.Mult)):
        return None
    a, b = value.right.left, value.right.right
    for unit, imag in ((a, b), (b, a)):
        if isinstance(unit, ast.Constant) and unit.value == 1j and \
                _np_call(imag, "imag", 1) and _real(fact, imag.args[0]) is not None:
            return value.left
    return None


def real_parts(fn: ast.FunctionDef, fact: Fact, facts: dict[int, Any]) -> None:
    """Rewrite, in place, each name bound to a complex value with a zero imaginary
    part that is read only as described above (the module docstring); ``facts``
    (by node number) are updated to the real dtypes."""
    parent: dict[int, ast.AST] = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            parent[id(child)] = node
    stores: dict[str, int] = {}
    loads: dict[str, list[ast.Name]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loads.setdefault(node.id, []).append(node)
            else:
                stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, (ast.AugAssign, ast.Subscript, ast.Attribute)) and \
                not isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
            base = node.target if isinstance(node, ast.AugAssign) else node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                stores[base.id] = stores.get(base.id, 0) + 2  # written into
    for stmt in fn.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], ast.Name)):
            continue
        name = stmt.targets[0].id
        left = _zero_imaginary(stmt.value, fact)
        if left is None or stores.get(name) != 1 or not loads.get(name):
            continue
        real_left = left.args[0] if _np_call(left, "real", 1) and \
            _real(fact, left.args[0]) is not None else left
        dtype = _real(fact, real_left)
        if dtype is None:
            left_fact = fact(left)
            if left_fact is None or not isinstance(left_fact[1], np.dtype):
                continue
            dtype = np.empty(0, left_fact[1]).real.dtype
        whole = fact(stmt.value)
        if whole is None or not isinstance(whole[1], np.dtype) or \
                np.empty(0, whole[1]).real.dtype != dtype:
            continue  # (the real part in another precision than the complex sum's)
        uses = [_real_use(read, parent, fact) for read in loads[name]]
        if any(u is None for u in uses):
            continue
        stmt.value = real_left
        for read, (spread, product, fix, m_dtype) in zip(loads[name], uses):
            for node, now in ((read, dtype), (spread, dtype),
                              (product, np.result_type(dtype, m_dtype))):
                k = getattr(node, "_k", None)
                if k is not None and k in facts and facts[k][0] != "other":
                    facts[k] = (facts[k][0], now)
            holder = parent[id(fix)]
            for field, old in ast.iter_fields(holder):
                if old is fix:
                    setattr(holder, field, product)
                elif isinstance(old, list):
                    setattr(holder, field, [product if x is fix else x for x in old])


def _real_use(read: ast.Name, parent: dict[int, ast.AST], fact: Fact
              ) -> tuple[ast.AST, ast.BinOp, ast.Call, np.dtype] | None:
    """``(spread, product, unbroadcast, m's dtype)`` where ``read`` is (the operand of
    ``np.expand_dims`` that is) one factor of a product with a real ``m`` whose real
    part ``unbroadcast`` takes to a real operand of the product's shape; else None."""
    spread: ast.AST = read
    up = parent.get(id(read))
    if up is not None and _np_call(up, "expand_dims", 2) and up.args[0] is read:
        spread, up = up, parent.get(id(up))
    if not (isinstance(up, ast.BinOp) and isinstance(up.op, ast.Mult)):
        return None
    other = up.right if up.left is spread else up.left
    m_dtype = _real(fact, other)
    fix = parent.get(id(up))
    if m_dtype is None or not (isinstance(fix, ast.Call) and call_name(fix) == "unbroadcast"
                               and len(fix.args) == 2 and fix.args[0] is up):
        return None
    like, out = _real(fact, fix.args[1]), fact(up)
    if like is None or out is None or fact(fix.args[1])[0] != out[0]:
        return None
    return spread, up, fix, m_dtype


_IDENTITIES_ON_REALS = ("conj", "conjugate", "real")


def real_conjugates(fn: ast.FunctionDef, fact: Fact) -> None:
    """``np.conj(x)``, ``np.conjugate(x)`` and ``np.real(x)`` of a real floating ``x`` (a
    fact), read as an operand of an arithmetic operator, are ``x``: the same elements
    (NaN, -0.0 included) and dtype, and the operator makes a new array either way (a
    rule written for complex values, as ``var``'s, applied to a real one)."""

    class Operands(ast.NodeTransformer):
        def visit_BinOp(self, n: ast.BinOp) -> ast.AST:
            self.generic_visit(n)
            for side in ("left", "right"):
                x = getattr(n, side)
                if any(_np_call(x, name, 1) for name in _IDENTITIES_ON_REALS) and \
                        _real(fact, x.args[0]) is not None and \
                        _real(fact, x.args[0]).kind == "f":  # type: ignore[union-attr]
                    setattr(n, side, x.args[0])  # type: ignore[attr-defined]
            return n

    Operands().visit(fn)
