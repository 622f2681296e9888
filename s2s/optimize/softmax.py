"""The softmax a log-sum-exp's derivative reads, spelled with NumPy (the ``fixups``
pass, after single uses are inlined).

``scipy.special.logsumexp``'s rules (s2s/primitives/runtime_prims.py) differentiate
through ``np.exp(a - ans)``, ``ans`` the log-sum-exp itself, which the emitted code
computes by calling SciPy (``special_logsumexp``: 80 to 100 µs for a 64 x 10 array,
its array-API dispatch, where the whole hand-written gradient takes 10).  Where the
exponential is all the log-sum-exp is read for, it is a softmax:

    np.exp(a - special_logsumexp(a, axis=1, keepdims=True))
    -> np.exp(a - m) / np.exp(a - m).sum(axis=1, keepdims=True)
       with m = np.minimum(a.max(axis=1, keepdims=True), 1.7976931348623157e308)

(the dtype's largest number; the repeated parts are computed once by the ``subexpr``
pass), and the call to SciPy is dead code; ``g * np.exp(a - ans)`` with ``g`` of the
log-sum-exp's shape is ``g / np.exp(a - m).sum(...) * np.exp(a - m)`` (``g``'s few
elements divided, not ``a``'s many).  Equal to rounding (the right side rounds less:
it never forms ``a - ans``), and alike where the values are not finite: a row with
``+inf`` gives NaN at the infinity and 0 elsewhere on both sides (``inf - inf``, and
``x - inf`` on the left; ``inf / inf`` and ``x / inf`` on the right, its maximum made
finite), as JAX's gradient does; a row with a NaN, or of ``-inf`` only, gives NaN
everywhere.

Guards (facts of the signature): ``a`` a name of a float32 or float64 array, bound
once (a parameter never rebound) and never written into, nor anything that may share
its memory (a view, a call's argument: ``subexpr``'s test), as is a name bound to the
log-sum-exp; the reduced axes literal and none empty (a maximum over an empty axis
raises); no weights ``b``; ``keepdims=True``, or every axis reduced (then the log-sum-
exp is one number); the exponential of ``a``'s shape and dtype."""

from __future__ import annotations

import ast
import copy
from typing import Any, Callable

import numpy as np

from .. import syntax
from .calls import call_name
from .subexpr import _Sharing as Sharing


def softmax_of_logsumexp(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any]) -> int:
    """Rewrite each ``np.exp(a - special_logsumexp(a, ...))`` the guards admit (see the
    module's docstring), in the function's straight-line statements before any loop;
    how many."""
    binds: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            binds[node.id] = binds.get(node.id, 0) + 1
    params = {a.arg for a in fn.args.args}
    sharing = Sharing(_reading(fn.body))  # (names sharing memory with one written into)

    def once(name: str) -> bool:
        return binds.get(name, 0) == (0 if name in params else 1) and sharing.safe(name)

    lse_of: dict[str, ast.Call] = {}  # a name bound once to special_logsumexp(...)
    for stmt in fn.body:
        if isinstance(stmt, ast.For):
            break
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call) \
                and call_name(stmt.value) == "special_logsumexp" and \
                once(stmt.targets[0].id):
            lse_of[stmt.targets[0].id] = stmt.value

    done = [0]

    class Put(ast.NodeTransformer):
        def visit_BinOp(self, n: ast.BinOp) -> ast.AST:
            # g * exp(a - lse), g of the log-sum-exp's shape: g / sum * exp (one
            # division of g's elements, not of a's)
            if isinstance(n.op, ast.Mult):
                for g, e in ((n.left, n.right), (n.right, n.left)):
                    parts = _softmax(e, lse_of, once, fact) if isinstance(e, ast.Call) \
                        else None
                    fg = fact(g)
                    if parts is not None and fg is not None and fg[0] == parts[2] and \
                            fg[1] == fact(e)[1]:
                        g = self.visit(g)
                        done[0] += 1
                        return ast.BinOp(ast.BinOp(g, ast.Div(), parts[1]), ast.Mult(),
                                         parts[0])
            self.generic_visit(n)
            return n

        def visit_Call(self, n: ast.Call) -> ast.AST:
            self.generic_visit(n)
            parts = _softmax(n, lse_of, once, fact)
            if parts is None:
                return n
            done[0] += 1
            return ast.BinOp(parts[0], ast.Div(), parts[1])

    for k, stmt in enumerate(fn.body):
        if isinstance(stmt, ast.For):
            break
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)) and \
                stmt.value is not None:
            stmt.value = Put().visit(stmt.value)
    return done[0]


def _softmax(n: ast.Call, lse_of: dict[str, ast.Call], once: Callable[[str], bool],
             fact: Callable[[ast.AST], Any]) -> tuple[ast.expr, ast.expr, tuple] | None:
    """(the exponential, its sum, the sum's shape) spelling ``n`` where it is a
    log-sum-exp's exponential the guards admit; else None."""
    if not (call_name(n) == "exp" and isinstance(n.func, ast.Attribute) and
            isinstance(n.func.value, ast.Name) and n.func.value.id == "np" and
            len(n.args) == 1 and not n.keywords):
        return None
    diff = n.args[0]
    if not (isinstance(diff, ast.BinOp) and isinstance(diff.op, ast.Sub) and
            isinstance(diff.left, ast.Name) and once(diff.left.id)):
        return None
    a, lse = diff.left, diff.right
    if isinstance(lse, ast.Name):
        lse = lse_of.get(lse.id)
    if not (isinstance(lse, ast.Call) and call_name(lse) == "special_logsumexp" and
            isinstance(lse.func, ast.Name) and lse.args and
            isinstance(lse.args[0], ast.Name) and lse.args[0].id == a.id):
        return None
    fa, fe = fact(a), fact(n)
    if fa is None or fe != fa or not isinstance(fa[1], np.dtype) or \
            fa[1] not in (np.float32, np.float64) or not fa[0]:
        return None
    given: dict[str, Any] = {}
    try:
        for name, arg in zip(("axis", "b", "keepdims"), lse.args[1:]):
            given[name] = ast.literal_eval(arg)
        for kw in lse.keywords:
            if kw.arg is None or kw.arg in given:
                return None
            given[kw.arg] = ast.literal_eval(kw.value)
    except ValueError:
        return None
    if len(lse.args) > 4 or set(given) - {"axis", "b", "keepdims"} or \
            given.get("b") is not None:
        return None
    axis, keepdims, ndim = given.get("axis"), given.get("keepdims", False), len(fa[0])
    axes = tuple(range(ndim)) if axis is None else (axis,) if type(axis) is int else axis
    if not (isinstance(axes, tuple) and axes and all(
            type(x) is int and -ndim <= x < ndim for x in axes)):
        return None
    norm = {x % ndim for x in axes}
    if len(norm) != len(axes) or any(fa[0][x] == 0 for x in norm) or \
            not isinstance(keepdims, bool) or not (keepdims or len(norm) == ndim):
        return None
    where = "" if axis is None and len(norm) == ndim else f"axis={axis!r}, "
    # the maximum, +inf made the dtype's largest number (a NaN stays NaN, -inf -inf)
    big = repr(float(np.finfo(fa[1]).max)).replace("e+", "e")  # (as black writes it)
    m = f"np.minimum({a.id}.max({where}keepdims=True), {big})"
    e = f"np.exp({a.id} - {m})"
    parts = [syntax.parse(t, mode="eval").body for t in (e, f"{e}.sum({where}keepdims=True)")]
    for node in ast.walk(ast.Tuple(parts, ast.Load())):  # (a's facts on its reads:
        if isinstance(node, ast.Name) and node.id == a.id and hasattr(a, "_k"):
            node._k = a._k  # type: ignore[attr-defined]  # subexpr shares a.max(...))
    return parts[0], parts[1], tuple(1 if i in norm else d for i, d in enumerate(fa[0]))


def _reading(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements with ``special_logsumexp(...)`` called as ``np.``'s: a call by
    name counts as one that may write into its arguments (``subexpr``'s sharing test),
    and SciPy's log-sum-exp writes into none."""

    class Mark(ast.NodeTransformer):
        def visit_Call(self, n: ast.Call) -> ast.AST:
            self.generic_visit(n)
            if isinstance(n.func, ast.Name) and n.func.id == "special_logsumexp":
                n.func = ast.Attribute(ast.Name("np", ast.Load()), n.func.id, ast.Load())
            return n

    return [Mark().visit(copy.deepcopy(s)) for s in body]
