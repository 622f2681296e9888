"""The specializer's ``ties`` pass: the share of a ``np.maximum``/``np.minimum`` operand
in its cotangent, spelled with one comparison of the operands instead of two of each
with the result.

The rules of ``maximum`` and ``minimum`` (s2s/primitives/binary.py) split the cotangent
as JAX does: an operand equal to the result gets all of it, half where both are::

    h = np.maximum(a, b)
    ...
    np.where(a == h, np.where(b == h, 0.5, 1.0), 0.0)   # a's share

Where ``a`` and ``b`` are real floating values (facts) that nothing rebinds or writes
into between ``h``'s one binding and the share, the share is::

    np.where(a == b, 0.5, a > b)                        # (a < b for minimum)

elementwise the same values: ``a > b`` gives 1, ``a < b`` 0, ``a == b`` (also
``-0.0 == 0.0`` and ``inf == inf``) one half; a NaN on either side makes the maximum
NaN, so neither side equals it, and no comparison with NaN holds: 0 on both spellings.
The comparisons promote their operands as ``np.maximum`` does (one common type; a
Python number is weak), so they compare the same numbers.  Two comparisons, a
``where`` and a cast, where the rule's spelling makes two comparisons, two ``where``
and equality tests against the result (a relu's backward: about half the time).

The rule's ``0.5`` beside a boolean array makes a float64 share whatever the operands
are (NumPy promotes a Python float with a bool to its default float), and the share
multiplies the cotangent: a float32 relu's backward ran in float64 from there on (its
matrix products too), where JAX's runs in float32.  Where the maximum is float16 or
float32 (a fact), the share is that dtype's: ``np.float32(0.5)`` (0, one half and 1
are exact in every float dtype, so the share has the same values).  That is spelled
last (``split_shares``), when no pass reads the facts any more: the probe recorded the
generic code's float64 for the share's product and what it flows into.

Last too, a share times a cotangent ``g`` of the product's shape and of the maximum's
dtype, ``t = g * share``, is ``t = g * (a > b)`` and ``np.multiply(g, 0.5, out=t,
where=a == b)`` (``split_shares``).
"""

from __future__ import annotations

import ast
import copy
from typing import Any, Callable

import numpy as np

from .calls import written as _written

_ORDER = {"maximum": ast.Gt, "minimum": ast.Lt}


def _np_call(node: ast.AST, names: tuple[str, ...]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        isinstance(node.func.value, ast.Name) and node.func.value.id == "np" and \
        node.func.attr in names and not node.keywords


def _number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _real_floating(fact: Any) -> bool:
    return fact is not None and isinstance(fact[1], np.dtype) and fact[1].kind == "f"


def _equals(node: ast.AST, name: str) -> ast.AST | None:
    """``x`` of ``x == name``."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and \
            isinstance(node.ops[0], ast.Eq) and isinstance(node.comparators[0], ast.Name) \
            and node.comparators[0].id == name:
        return node.left
    return None


def _constant(node: ast.AST, value: float) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is float and \
        node.value == value


def _half(dtype: np.dtype) -> ast.expr:
    """One half in the share's dtype: a Python float where that is float64 (NumPy's
    default: the same array), else the dtype's scalar (module docstring)."""
    if dtype in (np.float16, np.float32):
        return ast.Call(ast.Attribute(ast.Name("np", ast.Load()), dtype.name, ast.Load()),
                        [ast.Constant(0.5)], [])
    return ast.Constant(0.5)


def tie_shares(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any]) -> None:
    """Rewrite the shares of ``np.maximum``/``np.minimum`` operands (module docstring),
    in the function's straight-line statements and in each loop body (a share and the
    maximum it reads in the same block)."""
    binds: dict[str, int] = {}
    written: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            binds[node.id] = binds.get(node.id, 0) + 1
        if isinstance(node, ast.stmt):
            written |= _written(node)
    blocks = [fn.body] + [s.body for s in fn.body if isinstance(s, ast.For)]
    for block in blocks:
        _block(block, fact, binds, written)


def _block(block: list[ast.stmt], fact: Callable[[ast.AST], Any], binds: dict[str, int],
           written: set[str]) -> None:
    # a name bound (once in the function) to np.maximum/np.minimum of names and
    # numbers -> (which, its operands, their names)
    extremes: dict[str, tuple[str, tuple[ast.AST, ast.AST], set[str]]] = {}
    for stmt in block:
        if extremes and not isinstance(stmt, ast.For):  # (a loop body is its own block)
            _rewrite(stmt, extremes, fact)
        stored = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)
                  and not isinstance(n.ctx, ast.Load)} | _written(stmt)
        for h, (_, _, reads, _) in list(extremes.items()):
            if reads & stored:  # an operand rebound: the result is not its extreme now
                del extremes[h]
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], ast.Name) and
                _np_call(stmt.value, tuple(_ORDER)) and len(stmt.value.args) == 2):
            continue
        h = stmt.targets[0].id
        operands = tuple(stmt.value.args)
        if binds.get(h) != 1 or h in written or not _real_floating(fact(stmt.value)):
            continue
        reads: set[str] = set()
        for x in operands:
            if isinstance(x, ast.Name) and _real_floating(fact(x)) and x.id not in written:
                reads.add(x.id)
            elif not _number(x):
                break
        else:
            if h not in reads:
                extremes[h] = (stmt.value.func.attr, operands, reads,  # type: ignore
                               fact(stmt.value)[1])


def _rewrite(stmt: ast.stmt, extremes: dict, fact: Callable[[ast.AST], Any]) -> None:
    class Shares(ast.NodeTransformer):
        def visit_Call(self, n: ast.Call) -> ast.AST:
            self.generic_visit(n)
            if not (_np_call(n, ("where",)) and len(n.args) == 3 and
                    _np_call(n.args[1], ("where",)) and len(n.args[1].args) == 3 and
                    _constant(n.args[2], 0.0)):
                return n
            inner = n.args[1]
            if not (_constant(inner.args[1], 0.5) and _constant(inner.args[2], 1.0)):
                return n
            for h, (which, operands, _, dtype) in extremes.items():
                x, y = _equals(n.args[0], h), _equals(inner.args[0], h)
                if x is None or y is None:
                    continue
                dumps = {ast.dump(o) for o in operands}
                if ast.dump(x) == ast.dump(y) or {ast.dump(x), ast.dump(y)} != dumps:
                    continue
                new = ast.Call(
                    ast.Attribute(ast.Name("np", ast.Load()), "where", ast.Load()),
                    [ast.Compare(x, [ast.Eq()], [y]), ast.Constant(0.5),
                     ast.Compare(copy.deepcopy(x), [_ORDER[which]()], [copy.deepcopy(y)])],
                    [])
                if hasattr(n, "_k"):
                    new._k = n._k  # type: ignore[attr-defined]  # the same value
                new._half_dtype = dtype  # type: ignore[attr-defined]  # (split_shares)
                return ast.copy_location(new, n)
            return n

    Shares().visit(stmt)


# ---- the share times a cotangent: a product and a masked half ------------------------


def _share_of(node: ast.AST) -> tuple[ast.expr, ast.expr, ast.cmpop] | None:
    """``(a, b, op)`` of ``np.where(a == b, <one half>, a op b)`` (the rewritten share)."""
    if not (_np_call(node, ("where",)) and len(node.args) == 3):  # type: ignore[attr-defined]
        return None
    eq, half, order = node.args  # type: ignore[attr-defined]
    if isinstance(half, ast.Call) and _np_call(half, ("float16", "float32")) and \
            len(half.args) == 1:
        half = half.args[0]
    if not (_constant(half, 0.5) and isinstance(eq, ast.Compare) and
            isinstance(order, ast.Compare) and len(eq.ops) == len(order.ops) == 1 and
            isinstance(eq.ops[0], ast.Eq) and isinstance(order.ops[0], (ast.Gt, ast.Lt))):
        return None
    a, b = eq.left, eq.comparators[0]
    if ast.dump(a) != ast.dump(order.left) or ast.dump(b) != ast.dump(order.comparators[0]):
        return None
    return a, b, order.ops[0]


def split_shares(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any]) -> None:
    """``t = g * share`` (a share ``tie_shares`` wrote; ``g`` of the product's shape
    and of the maximum's dtype, a real floating fact) is ``t = g * (a > b)`` and then ``np.multiply(g, 0.5, out=t,
    where=a == b)``: the comparison's bools times ``g`` where they are 1 or 0, and
    ``g``'s half where the operands tie, the same products, one rounding each, in
    ``g``'s dtype; without the ``where`` that casts a bool array and a scalar (its
    buffered loop costs about what the product does).  Run last: nothing reads the
    code after it, so no pass sees ``t`` before its write."""
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    for block in [fn.body] + [s.body for s in fn.body if isinstance(s, ast.For)]:
        out: list[ast.stmt] = []
        for stmt in block:
            out.extend(_split(stmt, fact, taken) or [stmt])
        block[:] = out
    for node in ast.walk(fn):  # the shares left: one half in the maximum's dtype
        dtype = getattr(node, "_half_dtype", None)
        if dtype is not None and _share_of(node) is not None:
            node.args[1] = ast.copy_location(_half(dtype), node.args[1])  # type: ignore
    ast.fix_missing_locations(fn)


def _split(stmt: ast.stmt, fact: Callable[[ast.AST], Any], taken: set[str]
           ) -> list[ast.stmt] | None:
    returned = isinstance(stmt, ast.Return)  # (then bound to a new name, returned)
    if not ((returned or isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
             isinstance(stmt.targets[0], ast.Name)) and isinstance(stmt.value, ast.BinOp)
            and isinstance(stmt.value.op, ast.Mult)):
        return None
    product = stmt.value
    t = _new_name("share_product", taken) if returned else \
        stmt.targets[0].id  # type: ignore[attr-defined]
    for g, share in ((product.left, product.right), (product.right, product.left)):
        found = _share_of(share)
        dtype = getattr(share, "_half_dtype", None)
        if found is None or dtype is None:
            continue
        a, b, order = found
        fg, fp = fact(g), fact(product)
        if fg is None or fp is None or fg[0] != fp[0] or fg[0] == () or fg[1] != dtype or \
                not _real_floating(fg) or any(isinstance(n, ast.Name) and n.id == t
                                              for side in (a, b) for n in ast.walk(side)):
            return None
        before: list[ast.stmt] = []
        if not (isinstance(g, ast.Name) and g.id != t):
            name = _new_name(f"{t}_in", taken)
            before = [ast.Assign([ast.Name(name, ast.Store())], g)]
            g = ast.Name(name, ast.Load())
        first = ast.Assign([ast.Name(t, ast.Store())], ast.BinOp(
            ast.Name(g.id, ast.Load()), ast.Mult(), ast.Compare(a, [order], [b])))
        half = ast.Expr(ast.Call(
            ast.Attribute(ast.Name("np", ast.Load()), "multiply", ast.Load()),
            [ast.Name(g.id, ast.Load()), ast.Constant(0.5)],
            [ast.keyword("out", ast.Name(t, ast.Load())),
             ast.keyword("where", ast.Compare(copy.deepcopy(a), [ast.Eq()],
                                              [copy.deepcopy(b)]))]))
        after = [ast.Return(ast.Name(t, ast.Load()))] if returned else []
        return [ast.copy_location(s, stmt) for s in (*before, first, half, *after)]
    return None


def _new_name(name: str, taken: set[str]) -> str:
    base, j = name, 2
    while name in taken:
        name, j = f"{base}_{j}", j + 1
    taken.add(name)
    return name
