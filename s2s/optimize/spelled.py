"""Helpers' results spelled out for known shapes: what ``matmul_lhs_bar``/``_rhs_bar``
and ``unbroadcast`` compute, as the plain expressions the specializer writes instead,
and the scalar an ``np.add.at`` may add itself (s2s/optimize/specialize.py; the rules
are stated in s2s/optimize/rules.py)."""

from __future__ import annotations

import ast
import copy
import math
import operator
from typing import Any, Callable

import numpy as np

from .. import syntax
from .aliases import makes_new
from .calls import PythonScalar, call_name

# a matmul's cotangents (runtime.matmul_lhs_bar/_rhs_bar) spelled for the operands'
# ranks (the cotangent's, x1's, x2's): what the helper computes, without its reshapes
_MATMUL_BARS = {
    ("matmul_rhs_bar", 2, 2, 2): "x1.T @ g", ("matmul_lhs_bar", 2, 2, 2): "g @ x2.T",
    ("matmul_rhs_bar", 1, 2, 1): "x1.T @ g", ("matmul_lhs_bar", 1, 1, 2): "x2 @ g",
    ("matmul_rhs_bar", 1, 1, 2): "np.outer(x1, g)", ("matmul_lhs_bar", 1, 2, 1): "np.outer(g, x2)",
    ("matmul_rhs_bar", 0, 1, 1): "g * x1", ("matmul_lhs_bar", 0, 1, 1): "g * x2",
}


def _matmul_bar(name: str, g: int, x1: int, x2: int, args: list[ast.expr],
                dtype: np.dtype | None = None) -> ast.expr | None:
    """The helper's result spelled for the ranks; ``dtype``: the result's, where it
    may differ from what ``*`` of a 0-d cotangent and a vector makes (the helper
    makes the cotangent an array: a Python float is then not weak), so the product
    is ``np.multiply(g, x, dtype=...)``, the helper's one rounding per element."""
    template = _MATMUL_BARS.get((name, g, x1, x2))
    if template is None:
        return None
    if dtype is not None:
        if not template.startswith("g * ") or dtype.kind not in "fc":
            return None
        template = f"np.multiply(g, {template[4:]}, dtype=np.{dtype.name})"
    names = dict(zip(("g", "x1", "x2"), args))

    class Fill(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> ast.AST:
            return copy.deepcopy(names[n.id]) if n.id in names else n

    return Fill().visit(syntax.parse(template, mode="eval").body)


def _sum_to(node: ast.expr, shape: tuple, target: tuple) -> ast.expr:
    """``unbroadcast`` with both shapes known: the sums it would do, spelled out (as
    the array's own ``.sum``: the operand has at least one axis, so it is an array,
    and the method skips ``np.sum``'s dispatch)."""

    def total(value: ast.expr, keywords: list[ast.keyword]) -> ast.expr:
        return ast.Call(ast.Attribute(value, "sum", ast.Load()), [], keywords)

    if target == ():
        return total(node, [])
    extra = len(shape) - len(target)
    if extra > 0:
        axes = tuple(range(extra))
        node = total(node, [ast.keyword("axis", ast.Constant(axes[0]) if extra == 1
                                        else syntax.parse(repr(axes), mode="eval").body)])
        shape = shape[extra:]
    stretched = tuple(i for i, n in enumerate(target) if n == 1 and shape[i] != 1)
    if stretched:
        node = total(node, [ast.keyword("axis", syntax.parse(repr(stretched),
                                                          mode="eval").body),
                            ast.keyword("keepdims", ast.Constant(True))])
    return node


def spread_value(buf: ast.expr, idx: ast.expr, v: ast.expr, s: ast.expr | None,
                 fact: Callable[[ast.AST], Any]) -> ast.expr | None:
    """``s`` of ``np.add.at(buf, idx, v)``, ``v`` spreading ``s`` (``np.broadcast_to(s,
    shape)``; ``s`` None where it spreads nothing), where ``s`` is 0-d of the buffer's
    dtype and ``shape`` is what ``buf[idx]`` selects (integer index arrays, facts):
    add.at spreads ``s`` over the same elements, in the same order, without reading
    a broadcast array (the slow path of ``ufunc.at``); else None."""
    fb, fv = fact(buf), fact(v)
    fs = fact(s) if s is not None else None
    if fs is None or fb is None or fv is None or fs[0] != () or fs[1] != fb[1]:
        return None
    parts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
    shapes = []
    for e in parts:
        f = fact(e)
        if f is None or not isinstance(f[1], np.dtype) or f[1].kind not in "iu":
            return None
        shapes.append(f[0])
    if len(parts) > len(fb[0]):
        return None
    try:
        picked = np.broadcast_shapes(*shapes) + tuple(fb[0][len(parts):])
    except ValueError:
        return None
    return copy.deepcopy(s) if picked == fv[0] else None


def spell_shaped(name: str, args: list[ast.expr], fact: Callable[[ast.AST], Any]
                 ) -> ast.expr | None:
    """``rhs_columns(v, b)`` and ``np.matrix_transpose(x)`` where the ranks are facts:
    ``v[..., None]`` (``v`` an array) or ``v`` itself for a ``b`` that is or is not a
    vector; ``x.T`` for a matrix (``x`` 2-D)."""
    facts = [fact(a) for a in args]
    if any(f is None or not isinstance(f[1], np.dtype) for f in facts):
        return None
    if name == "rhs_columns" and len(args) == 2:
        (v, fv), fb = (args[0], facts[0]), facts[1]
        if len(fb[0]) != 1:
            return v
        if fv[0] == ():
            return None  # (a scalar: np.expand_dims makes the array)
        return ast.Subscript(v, ast.Tuple([ast.Constant(...), ast.Constant(None)],
                                          ast.Load()), ast.Load())
    if name == "matrix_transpose" and len(args) == 1 and len(facts[0][0]) == 2:
        return ast.Attribute(args[0], "T", ast.Load())
    return None


# elementwise NumPy functions whose value at literal numbers is computed once
_LITERAL_UFUNCS = frozenset({"sqrt", "exp", "log", "log1p", "expm1", "sin", "cos", "tanh",
                             "cbrt", "reciprocal", "maximum", "minimum"})


def literal_call(name: str, args: list[ast.expr], dtype: np.dtype) -> ast.expr | None:
    """``np.sqrt(16)`` (an elementwise function of int or float literals, ``np.`` as
    the emitted code spells it) as the number it is, ``np.float64(4.0)``, in the
    result's NumPy type ``dtype`` (a fact: a NumPy scalar is not weak; so
    ``np.maximum(64, 1)`` is ``np.int64(64)``); None where the value is not finite or
    NumPy warns computing it (the call would warn each time)."""
    if dtype.kind not in "fi" or not args or not all(
            isinstance(a, ast.Constant) and type(a.value) in (int, float) for a in args):
        return None
    try:
        with np.errstate(all="raise"):
            value = getattr(np, name)(*(a.value for a in args))
    except (FloatingPointError, TypeError, ValueError, OverflowError):
        return None
    if not isinstance(value, np.generic) or value.dtype != dtype or not np.isfinite(value):
        return None
    number = float(value) if dtype.kind == "f" else int(value)
    return ast.Call(ast.Attribute(ast.Name("np", ast.Load()), dtype.name, ast.Load()),
                    [ast.Constant(number)], [])


def python_arithmetic(n: ast.BinOp, fact: Callable | None = None) -> ast.expr | None:
    """``12 / 4`` (Python numbers, as a mean's count becomes once sizes fold) as the
    Python number it is, computed as the code would compute it (so exact: a Python
    float stays a weak scalar in NumPy's promotion); None where it is not finite,
    or raises.  With ``fact`` (a node's (shape, dtype) or None), also a cast rule's
    ``e * True`` (:func:`isdtype_literal` folded its test) as ``e``: the same value
    where ``e`` has the product's shape and dtype, and ``e`` a new array as the
    product was (an operation or a call that makes one), so no buffer is shared."""
    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv}
    left, right = n.left, n.right
    if fact is not None and isinstance(n.op, ast.Mult):
        for flag, e in ((right, left), (left, right)):
            if isinstance(flag, ast.Constant) and flag.value is True and _new_value(e) and \
                    fact(e) is not None and fact(e) == fact(n) and \
                    type(fact(e)) is type(fact(n)):
                return e
    if type(n.op) not in ops or not (
            isinstance(left, ast.Constant) and isinstance(right, ast.Constant)
            and type(left.value) in (int, float) and type(right.value) in (int, float)):
        return None
    try:
        value = ops[type(n.op)](left.value, right.value)
    except (ZeroDivisionError, OverflowError):
        return None
    if not math.isfinite(value) or type(value) is int and abs(value) > 2**53:
        return None
    return ast.Constant(value)


def literal_value(n: ast.Call, name: str | None, out: Any,
                  fact: Callable | None = None) -> ast.expr | None:
    """A call of literal numbers as the number it is (``literal_call``, ``literal_max``;
    ``out``: the call's fact), or None; with ``fact`` (a node's fact or None), a
    cast rule's test of a dtype the signature fixes too (:func:`isdtype_literal`)."""
    if name == "isdtype" and fact is not None:
        return isdtype_literal(n, fact)
    if name in _LITERAL_UFUNCS and out and out[0] == () and isinstance(
            n.func, ast.Attribute) and not n.keywords:
        return literal_call(name, n.args, out[1])
    return literal_max(n, name)


def isdtype_literal(n: ast.Call, fact: Callable) -> ast.Constant | None:
    """``np.isdtype(e.dtype, kinds)`` (a cast rule's test: is the output inexact?),
    ``kinds`` a literal string or tuple of them and ``e``'s dtype a fact of the
    signature, as the bool it is; None otherwise (``e`` a Python number, whose
    ``.dtype`` raises, is not folded)."""
    if not (isinstance(n.func, ast.Attribute) and len(n.args) == 2 and not n.keywords):
        return None
    of, kinds = n.args
    if not (isinstance(of, ast.Attribute) and of.attr == "dtype"):
        return None
    f = fact(of.value)
    parts = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    if f is None or isinstance(f, PythonScalar) or not all(
            isinstance(p, ast.Constant) and type(p.value) is str for p in parts):
        return None
    try:
        return ast.Constant(bool(np.isdtype(np.dtype(f[1]), tuple(
            p.value for p in parts) if isinstance(kinds, ast.Tuple) else kinds.value)))
    except (TypeError, ValueError):
        return None


def _new_value(e: ast.expr) -> bool:
    """Does ``e`` make a new array (or number), whatever its operands are?"""
    if isinstance(e, (ast.BinOp, ast.UnaryOp)):
        return True
    return isinstance(e, ast.Call) and makes_new(e, lambda a: True)


def literal_max(n: ast.Call, name: str | None) -> ast.Constant | None:
    """``max(12, 1)`` (Python's ``max``/``min``, which emitted code never rebinds, of
    int literals: a mean's count ``max(np.size(ans), 1)`` once the sizes fold) as
    the int it is; None otherwise."""
    if name not in ("max", "min") or not isinstance(n.func, ast.Name) or n.keywords or \
            len(n.args) < 2 or not all(isinstance(a, ast.Constant) and type(a.value) is int
                                       for a in n.args):
        return None
    return ast.Constant((max if name == "max" else min)(a.value for a in n.args))


def literal_item(fn: ast.FunctionDef, binds: dict[str, list[int]], mutated: set[str],
                 name: str, index: Any, at: int) -> ast.expr | None:
    """Item ``index`` of the tuple of number literals ``name`` is bound to, once in
    the function (top level, before statement ``at``) and never written into
    (``binds``: each name's binding statements; ``mutated``: names written into);
    else None: ``q_shape[1]`` of ``q_shape = (32, 16)`` is ``16``."""
    found = binds.get(name)
    if not found or len(found) != 1 or found[0] >= at or name in mutated or \
            type(index) is not int:
        return None
    stmt = fn.body[found[0]]
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Tuple)
            and -len(stmt.value.elts) <= index < len(stmt.value.elts)):
        return None
    item = stmt.value.elts[index]
    if isinstance(item, ast.Constant) and type(item.value) in (int, float):
        return ast.Constant(item.value)
    return None


def spell_var(n: ast.Call, fact: Callable[[ast.AST], Any],
              note: Callable[[ast.AST, tuple, Any], None]) -> ast.expr | None:
    """``np.var(x, axis=A, keepdims=K)`` (or ``x.var(...)``) of a float32 or float64
    array ``x`` (a name; facts), ``A`` literal axes of sizes at least 1, ``ddof`` 0 if
    given: ``((x - x.mean(axis=A, keepdims=True)) ** 2).mean(axis=A, keepdims=K)``,
    NumPy's own steps (``_methods._var``: the sum over the axes divided by their count,
    subtracted, squared, summed and divided again), so bit for bit the same; the
    centred ``x`` is then an expression the rest of the code may share (a variance's
    cotangent reads it too).  ``note`` records the new nodes' shapes and dtypes."""
    func = n.func
    if not isinstance(func, ast.Attribute) or func.attr != "var":
        return None
    if isinstance(func.value, ast.Name) and func.value.id == "np":
        if len(n.args) != 1:
            return None
        x = n.args[0]
    else:
        if n.args:
            return None
        x = func.value
    fx, out = fact(x), fact(n)
    if not isinstance(x, ast.Name) or fx is None or out is None or \
            not isinstance(fx[1], np.dtype) or fx[1] not in (np.float32, np.float64) or \
            out[1] != fx[1] or not fx[0]:
        return None
    axis: Any = None
    keywords: list[ast.keyword] = []
    for kw in n.keywords:
        try:
            value = ast.literal_eval(kw.value)
        except ValueError:
            return None
        if kw.arg == "ddof" and type(value) is int and value == 0:
            continue
        if kw.arg == "axis":
            axis = value
        elif not (kw.arg == "keepdims" and isinstance(value, bool)):
            return None
        keywords.append(kw)
    ndim = len(fx[0])
    axes = tuple(range(ndim)) if axis is None else (axis,) if type(axis) is int else axis
    if not (isinstance(axes, tuple) and axes and all(type(a) is int and -ndim <= a < ndim
                                                      for a in axes)) or \
            len({a % ndim for a in axes}) != len(axes) or \
            any(fx[0][a] == 0 for a in axes):
        return None
    kept = tuple(1 if i in {a % ndim for a in axes} else s for i, s in enumerate(fx[0]))
    at_axis = [copy.deepcopy(k) for k in keywords if k.arg == "axis"]
    mean = ast.Call(ast.Attribute(copy.deepcopy(x), "mean", ast.Load()), [],
                    at_axis + [ast.keyword("keepdims", ast.Constant(True))])
    centred = ast.BinOp(copy.deepcopy(x), ast.Sub(), mean)
    square = ast.BinOp(centred, ast.Pow(), ast.Constant(2))
    for node, shape in ((mean, kept), (centred, fx[0]), (square, fx[0])):
        note(node, shape, fx[1])
    return ast.Call(ast.Attribute(square, "mean", ast.Load()), [],
                    [copy.deepcopy(k) for k in keywords])


def spell_softmax(n: ast.Call, fact: Callable[[ast.AST], Any],
                  note: Callable[[ast.AST, tuple, Any], None]) -> ast.expr | None:
    """``special_softmax(x, axis=A)`` (``scipy.special.softmax``) of a float32 or
    float64 array ``x`` (a name; facts), ``A`` literal axes of sizes at least 1:
    ``np.exp(x - x.max(axis=A, keepdims=True)) / np.exp(...).sum(axis=A,
    keepdims=True)``, SciPy's own steps without its array-API dispatch (about 8 µs of a
    64 x 10 softmax's 16), so bit for bit the same; the repeated exponential is shared
    by ``subexpr``."""
    if not (isinstance(n.func, ast.Name) and n.func.id == "special_softmax" and n.args
            and len(n.args) <= 2 and isinstance(n.args[0], ast.Name)):
        return None
    x = n.args[0]
    fx, out = fact(x), fact(n)
    if fx is None or out is None or not isinstance(fx[1], np.dtype) or \
            fx[1] not in (np.float32, np.float64) or out != fx or not fx[0]:
        return None
    try:
        given = {"axis": ast.literal_eval(n.args[1])} if len(n.args) == 2 else {}
        for kw in n.keywords:
            if kw.arg != "axis" or "axis" in given:
                return None
            given["axis"] = ast.literal_eval(kw.value)
    except ValueError:
        return None
    axis, ndim = given.get("axis"), len(fx[0])
    axes = tuple(range(ndim)) if axis is None else (axis,) if type(axis) is int else axis
    if not (isinstance(axes, tuple) and axes and all(type(a) is int and -ndim <= a < ndim
                                                      for a in axes)) or \
            len({a % ndim for a in axes}) != len(axes) or any(fx[0][a] == 0 for a in axes):
        return None
    where = "" if axis is None else f"axis={axis!r}, "
    e = f"np.exp({x.id} - {x.id}.max({where}keepdims=True))"
    new = syntax.parse(f"{e} / {e}.sum({where}keepdims=True)", mode="eval").body
    for node in ast.walk(new):
        if isinstance(node, ast.Name) and node.id == x.id and hasattr(x, "_k"):
            node._k = x._k  # type: ignore[attr-defined]  # (x's facts: subexpr shares)
    return new


def spell_numpy(n: ast.Call, fact: Callable[[ast.AST], Any],
                note: Callable[[ast.AST, tuple, Any], None]) -> ast.expr | None:
    """``np.var`` or ``scipy.special.softmax`` spelled as the NumPy steps they take."""
    spell = spell_var if call_name(n) == "var" else spell_softmax
    return spell(n, fact, note)
