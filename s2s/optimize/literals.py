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
import math
from collections import Counter
from typing import Any, Callable

import numpy as np

from .. import syntax
from .calls import PythonScalar, bound_once
from .passes import subtracted_negations
from .products import _facts_of
from .subexpr import _made

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


# ---- a float beside a float64 array: a 0-d array constant ---------------------------

_ORDERS = (ast.Gt, ast.Lt, ast.GtE, ast.LtE, ast.Eq, ast.NotEq)
_FLOAT64 = np.dtype(np.float64)


def _float_literal(node: ast.AST) -> float | None:
    """The value of a float (or small int) literal ``c`` or ``-c``."""
    sign = 1.0
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node, sign = node.operand, -1.0
    if isinstance(node, ast.Constant) and (type(node.value) is float or (
            type(node.value) is int and abs(node.value) <= _LARGEST)):
        return sign * float(node.value)
    return None


def _constant_name(value: float) -> str:
    text = repr(value).replace("-", "m").replace(".", "_").replace("+", "")
    return "c" + "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in text)


def numbers_as_arrays(fn: ast.FunctionDef, known_of: Callable[[ast.AST], Any],
                      taken: set[str]) -> list[ast.stmt]:
    """Rewrite ``fn`` in place: a number literal operand of ``+ - * /``, of a
    comparison or of ``np.maximum``/``np.minimum`` whose other operand is a float64 array of at least one axis (a fact)
    is a module constant, that number as a 0-d float64 array (``c0_5 =
    np.array(0.5)``).  Exact: NumPy converts the weak Python float to that float64
    (an int up to 2048 too) and runs the same loop, the result the same array; a
    Python number costs NumPy's operator a conversion the array does not (about a
    quarter of an elementwise operation on a small array: 5.3k instructions to 4.0k
    for ``0.5 * a`` on a 4 x 3 array, 10.8k to 9.4k on 64 x 64).  Only float64: a 0-d
    array is not a weak scalar, so beside a float32 array a float64 one would
    promote.  Returns the module statements that bind the constants."""
    made: dict[str, str] = {}  # repr of the number (-0.0 apart from 0.0) -> its name
    statements: list[ast.stmt] = []

    def constant(value: float) -> str:
        if repr(value) not in made:
            base = _constant_name(value)
            name, k = base, 1
            while name in taken:
                k += 1
                name = f"{base}_{k}"
            taken.add(name)
            made[repr(value)] = name
            statements.append(ast.Assign([ast.Name(name, ast.Store())], ast.Call(
                ast.Attribute(ast.Name("np", ast.Load()), "array", ast.Load()),
                [_number(value)], []), lineno=0))
        return made[repr(value)]

    def wide(node: ast.AST) -> bool:
        found = known_of(node)
        return found is not None and isinstance(found[0], tuple) and len(found[0]) >= 1 \
            and found[1] == _FLOAT64

    class Spell(ast.NodeTransformer):
        def visit_BinOp(self, n: ast.BinOp) -> ast.AST:
            self.generic_visit(n)
            if isinstance(n.op, _ARITHMETIC):
                for side, other in (("left", n.right), ("right", n.left)):
                    value = _float_literal(getattr(n, side))
                    if value is not None and math.isfinite(value) and wide(other):
                        setattr(n, side, ast.Name(constant(value), ast.Load()))
                        break
            return n

        def visit_Compare(self, n: ast.Compare) -> ast.AST:
            self.generic_visit(n)
            if len(n.ops) == 1 and isinstance(n.ops[0], _ORDERS):
                value = _float_literal(n.comparators[0])
                if value is not None and math.isfinite(value) and wide(n.left):
                    n.comparators[0] = ast.Name(constant(value), ast.Load())
            return n

        def visit_Call(self, n: ast.Call) -> ast.AST:
            self.generic_visit(n)  # (np.maximum(h, 0.0): a relu)
            f = n.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                    f.value.id == "np" and f.attr in ("maximum", "minimum") and \
                    len(n.args) == 2 and not n.keywords:
                for k in (0, 1):
                    value = _float_literal(n.args[k])
                    if value is not None and math.isfinite(value) and wide(n.args[1 - k]):
                        n.args[k] = ast.Name(constant(value), ast.Load())
                        break
            return n

    Spell().visit(fn)
    ast.fix_missing_locations(fn)
    return statements


def _axes(node: ast.AST) -> int:
    """The axes of ``v[None, :]`` (its index's items) or of ``v[..., None].T`` (two)."""
    return 2 if isinstance(node, ast.Attribute) else len(node.slice.elts)  # type: ignore


def broadcast_axes(fn: ast.FunctionDef, known_of: Callable[[ast.AST], Any]) -> None:
    """Rewrite ``fn`` in place: ``a - v[None, :]`` (an operand of ``+ - * /`` indexed
    by leading new axes then whole slices, one per axis of ``v``, or a vector's
    ``v[..., None].T``, a solve's cotangent) is ``a - v`` where the
    other operand has at least as many axes as the index makes (facts): broadcasting
    puts those leading axes of length 1 itself, so the result has the same shape and
    elements (exact), without the view."""

    def leading(node: ast.AST) -> ast.expr | None:
        if isinstance(node, ast.Attribute) and node.attr == "T" and isinstance(
                node.value, ast.Subscript) and ast.unparse(node.value.slice) == "(..., None)":
            got = known_of(node.value.value)  # (v[..., None].T of a vector: v[None, :])
            ok = got is not None and isinstance(got[0], tuple) and len(got[0]) == 1
            return node.value.value if ok else None
        if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple)):
            return None
        items, new = node.slice.elts, 0
        while new < len(items) and isinstance(items[new], ast.Constant) and \
                items[new].value is None:
            new += 1
        whole = items[new:]
        got = known_of(node.value)
        if not new or got is None or not isinstance(got[0], tuple) or \
                len(whole) != len(got[0]) or not all(
                isinstance(s, ast.Slice) and s.lower is s.upper is s.step is None
                for s in whole):
            return None
        return node.value

    class Axes(ast.NodeTransformer):
        def visit_BinOp(self, n: ast.BinOp) -> ast.AST:
            self.generic_visit(n)
            if not isinstance(n.op, _ARITHMETIC):
                return n
            for side, other in (("left", n.right), ("right", n.left)):
                inner = leading(getattr(n, side))
                got = known_of(other)
                if inner is not None and got is not None and isinstance(got[0], tuple) \
                        and len(got[0]) >= _axes(getattr(n, side)):
                    setattr(n, side, inner)
                    break
            return n

    Axes().visit(fn)


def last_spellings(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any], taken: set[str],
                   narrow: bool, on: Callable[[str], bool]) -> list[ast.stmt]:
    """After the products and solves passes (whose spellings the earlier passes did
    not see): their negations subtracted (pass ``signs``), then new axes left to
    broadcasting and numbers beside float64 arrays as 0-d arrays (``literals``; not
    where the signature has float32 arrays, ``narrow``: a pass may have made a value
    float32 that its fact, read in the generic code, calls float64).  Returns the
    module statements that bind the constants."""
    if on("signs"):
        subtracted_negations(fn, _facts_of(fn, fact, {}))
    if on("methods"):
        reductions_as_ufuncs(fn, _facts_of(fn, fact, {}))
    if not on("literals"):
        return []
    scaled_sums(fn, _facts_of(fn, fact, {}))
    broadcast_axes(fn, _facts_of(fn, fact, {}))
    made = constant_arrays(fn, taken)
    return made + ([] if narrow else numbers_as_arrays(fn, _facts_of(fn, fact, {}), taken))


def _power_of_two(value: float | None) -> bool:
    return value is not None and value != 0.0 and math.isfinite(value) and \
        math.frexp(abs(value))[0] == 0.5


def scaled_sums(fn: ast.FunctionDef, known_of: Callable[[ast.AST], Any]) -> None:
    """Rewrite ``fn`` in place: ``-0.25 * (0.9 * x + r)``, a power of two times a
    number times a float64 array ``x`` plus a Python number ``r`` (a literal, or a name
    whose fact says a Python number), is ``-0.225 * x - 0.25 * r``: one operation on
    the array less (label smoothing's cotangent).  Exact where nothing is subnormal or
    overflows: scaling by a power of two commutes with rounding, so the product of the
    two numbers and the scaled sum round as the left side does."""

    def number(node: ast.AST) -> bool:
        if _float_literal(node) is not None:
            return True
        return isinstance(node, ast.Name) and isinstance(known_of(node), PythonScalar)

    class Scale(ast.NodeTransformer):
        def visit_BinOp(self, n: ast.BinOp) -> ast.AST:
            self.generic_visit(n)
            c = _float_literal(n.left)
            total = n.right
            if not (isinstance(n.op, ast.Mult) and _power_of_two(c) and
                    isinstance(total, ast.BinOp) and isinstance(total.op, (ast.Add, ast.Sub))
                    and isinstance(total.left, ast.BinOp) and isinstance(total.left.op, ast.Mult)
                    and number(total.right)):
                return n
            k = _float_literal(total.left.left)
            x = total.left.right
            got = known_of(x)
            if k is None or not math.isfinite(c * k) or got is None or \
                    not isinstance(got[0], tuple) or got[1] != _FLOAT64 or \
                    isinstance(got, PythonScalar):
                return n
            scaled = ast.BinOp(_number(c * k), ast.Mult(), x)
            # (a negative power: its sign flips the sum's operator, x + (-p) is x - p)
            rest = ast.BinOp(_number(abs(c)), ast.Mult(), total.right)
            op = type(total.op) if c > 0 else {ast.Add: ast.Sub, ast.Sub: ast.Add}[
                type(total.op)]
            new = ast.BinOp(scaled, op(), rest)
            if hasattr(n, "_k"):
                new._k = n._k  # type: ignore[attr-defined]  # (the same value)
            return ast.copy_location(new, n)

    Scale().visit(fn)
    ast.fix_missing_locations(fn)


_UFUNCS = {"max": "maximum", "min": "minimum"}


def reductions_as_ufuncs(fn: ast.FunctionDef, known_of: Callable[[ast.AST], Any]) -> None:
    """Rewrite ``fn`` in place: ``x.max(axis=1, keepdims=True)`` of a real floating array
    ``x`` of at least one axis (a fact), with no keyword but ``axis`` and ``keepdims``
    (literals), is ``np.maximum.reduce(x, axis=1, keepdims=True)`` (``min`` alike): the
    reduction the method runs (``numpy/_core/_methods.py``'s ``_amax``), without the
    Python frame in between (11.6k instructions to 11.1k on a 4 x 3 array); exact, an
    empty axis's error the same ufunc's."""

    class Reduce(ast.NodeTransformer):
        def visit_Call(self, n: ast.Call) -> ast.AST:
            self.generic_visit(n)
            f = n.func
            if not (isinstance(f, ast.Attribute) and f.attr in _UFUNCS and not n.args
                    and n.keywords and all(k.arg in ("axis", "keepdims") and isinstance(
                        k.value, (ast.Constant, ast.Tuple, ast.UnaryOp)) for k in n.keywords)):
                return n
            got = known_of(f.value)
            if got is None or not isinstance(got[0], tuple) or not got[0] or \
                    not isinstance(got[1], np.dtype) or got[1].kind != "f":
                return n
            ufunc = ast.Attribute(ast.Attribute(ast.Name("np", ast.Load()), _UFUNCS[f.attr],
                                                ast.Load()), "reduce", ast.Load())
            new = ast.Call(ufunc, [f.value], n.keywords)
            if hasattr(n, "_k"):
                new._k = n._k  # type: ignore[attr-defined]  # (the same value)
            return ast.copy_location(new, n)

    Reduce().visit(fn)


_JOINS = ("concatenate", "stack", "hstack", "vstack")


def constant_arrays(fn: ast.FunctionDef, taken: set[str]) -> list[ast.stmt]:
    """Rewrite ``fn`` in place: ``i = np.eye(3)`` (literal arguments: ``subexpr.MADE``),
    ``i`` bound once and never written into, every read of it an operand of an
    operator or an item of the tuple ``np.concatenate`` (or a stack) joins, so that
    every value made of it is a new array, is a module constant of the specialized
    code (``eye_3 = np.eye(3)``, made read-only: a write into it raises), made once
    instead of at every call (a Gaussian process's identity: 10k instructions a call).
    Returns the module statements that bind the constants."""
    parents = {c: n for n in ast.walk(fn) for c in ast.iter_child_nodes(n)}
    once, written = bound_once(fn)

    def only_read(n: ast.AST) -> bool:
        parent = parents.get(n)
        up = parents.get(parent)
        if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            return True
        return isinstance(parent, (ast.Tuple, ast.List)) and isinstance(up, ast.Call) and \
            isinstance(up.func, ast.Attribute) and isinstance(up.func.value, ast.Name) and \
            up.func.value.id == "np" and up.func.attr in _JOINS and up.args[:1] == [parent]

    out: list[ast.stmt] = []
    for stmt in list(fn.body):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], ast.Name) and _made(stmt.value)):
            continue
        t = stmt.targets[0].id
        reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == t and
                 isinstance(n.ctx, ast.Load)]
        if t not in once or t in written or not reads or \
                not all(only_read(n) for n in reads):
            continue
        base = "_".join([stmt.value.func.attr, *(  # type: ignore[attr-defined]
            str(a.value) for a in stmt.value.args if isinstance(a, ast.Constant))])
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        for n in reads:
            n.id = name
        fn.body.remove(stmt)
        out += [ast.Assign([ast.Name(name, ast.Store())], stmt.value, lineno=0),
                syntax.parse(f"{name}.flags.writeable = False").body[0]]
    return out
