"""The e-graphs' term language (egglog) and what reads emitted arithmetic into it.

Terms are floating values under ``+ - * /`` and negation, with two array operations:
``rsum(x, r)``, the sum over the axes of reduction ``r`` (``x.sum(axis=..., keepdims=...)``,
or of all elements), and ``bcast(x, k)``, ``x`` broadcast to the shape with id ``k``.
Shapes are ids (``shape(x)``); ``bshape(i, j)`` is the broadcast of two shapes,
``rshape(i, r)`` a reduction's result, and ``inv(i, j, r)`` says that an operand of
shape ``i`` is constant along ``r`` inside one of shape ``j`` (so it moves out of the
sum). ``is_zero(x)``: every element of ``x`` is zero in exact arithmetic. These tables
are filled in Python from the shapes one call recorded (s2s/optimize/zero.py)."""

from __future__ import annotations

import ast
import functools
import threading
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np

OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


_BUILDING = threading.Lock()


def language() -> Any:
    """The term language's constructors and tables; None without egglog (the optional
    ``[egraph]`` extra).  Made once, under a lock, and every name in it resolved
    before any thread reads it: egglog resolves a class's declarations lazily, and a
    second thread reading ``Term.var`` while the first resolved them found the class
    without its methods (``AttributeError: Class ...Term has no method var``, seen
    once in tests/frontend/test_argument_methods.py's threads, as a failed
    specialization)."""
    with _BUILDING:
        return _language()


@functools.lru_cache(maxsize=None)
def _language() -> Any:
    try:
        from egglog import Expr, StringLike, f64Like, function, i64, i64Like, relation
    except ImportError:
        return None

    class Term(Expr):
        def __init__(self, value: f64Like) -> None: ...

        @classmethod
        def var(cls, name: StringLike) -> "Term": ...

        def __add__(self, other: "Term") -> "Term": ...

        def __sub__(self, other: "Term") -> "Term": ...

        def __mul__(self, other: "Term") -> "Term": ...

        def __truediv__(self, other: "Term") -> "Term": ...

        def __neg__(self) -> "Term": ...

    @function
    def rsum(x: Term, r: i64Like) -> Term: ...

    @function
    def bcast(x: Term, k: i64Like) -> Term: ...

    @function
    def shape(x: Term) -> i64: ...

    @function
    def bshape(i: i64Like, j: i64Like) -> i64: ...

    @function
    def rshape(i: i64Like, r: i64Like) -> i64: ...

    made = SimpleNamespace(Term=Term, rsum=rsum, bcast=bcast, shape=shape,
                           bshape=bshape, rshape=rshape,
                           inv=relation("inv", i64, i64, i64),
                           is_zero=relation("is_zero", Term))
    t = Term.var("x")  # (each name used once: resolved now, on this thread)
    t = -(t + Term(1.0)) * (t - t) / t
    made.is_zero(made.bcast(made.rsum(t, 0), made.rshape(made.bshape(0, 0), 0)))
    made.inv(0, 0, 0), made.shape(t)
    return made


def release(eg: Any) -> None:
    """Free an egglog e-graph's engine now, on this thread.  Its Python objects sit in
    reference cycles, and the engine may be dropped only by the thread that made it:
    a garbage collection run by another thread (the caller's, while the specializer
    works in the background) would report "EGraph is unsendable" and leak it."""
    for state in (getattr(eg, "_state", None), *getattr(eg, "_state_stack", ())):
        if state is not None and getattr(state, "egraph", None) is not None:
            try:
                object.__setattr__(state, "egraph", None)
            except (AttributeError, TypeError):  # (another egglog's layout: as before)
                pass


def summed(node: ast.AST) -> ast.AST | None:
    """What ``np.sum(x)`` or ``x.sum()`` sums (keywords are the caller's to check)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "sum"):
        return None
    if isinstance(node.func.value, ast.Name) and node.func.value.id == "np":
        return node.args[0] if len(node.args) == 1 else None
    return node.func.value if not node.args else None


def reduction(node: ast.AST, ndim: int | None) -> tuple[ast.AST, tuple] | None:
    """``np.sum(x, axis=..., keepdims=...)`` or ``x.sum(...)`` with literal keywords
    as (x, (axes, keepdims, ndim)), axes normalized (None: every axis); ``ndim`` is
    x's rank (None where unknown: then only a sum of all elements is read)."""
    x = summed(node)
    if x is None:
        return None
    axis: Any = None
    keepdims = False
    for kw in node.keywords:  # type: ignore[attr-defined]
        try:
            value = ast.literal_eval(kw.value)
        except ValueError:
            return None
        if kw.arg == "axis":
            axis = value
        elif kw.arg == "keepdims" and isinstance(value, bool):
            keepdims = value
        else:
            return None
    if axis is None:
        return x, (None, keepdims, ndim) if keepdims else (None, False, None)
    if ndim is None:
        return None
    axes = (axis,) if isinstance(axis, int) else axis
    if not (isinstance(axes, tuple) and all(type(a) is int and -ndim <= a < ndim
                                            for a in axes)):
        return None
    axes = tuple(sorted({a % ndim for a in axes}))
    return x, (axes, keepdims, ndim)


def to_term(node: ast.AST, fact: Callable[[ast.AST], Any], Term: Any,
            opaque: dict[str, ast.AST]) -> Any:
    """An expression over floating values as a term (ValueError where it is not one):
    any other floating value becomes a fresh name, kept in ``opaque`` for rendering
    back (the constant-folding pass)."""

    def go(n: ast.AST) -> Any:
        if isinstance(n, ast.Constant) and type(n.value) in (int, float):
            return Term(float(n.value))
        if isinstance(n, ast.Name):
            f = fact(n)
            if f is None or not np.issubdtype(f[1], np.floating):
                raise ValueError
            return Term.var(n.id)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -go(n.operand)
        if isinstance(n, ast.BinOp) and type(n.op) in OPS:
            a, b = go(n.left), go(n.right)
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b,
                    ast.Div: a / b}[type(n.op)]
        if isinstance(n, (ast.Call, ast.Subscript, ast.Attribute, ast.BinOp)):
            f = fact(n)
            if f is None or not np.issubdtype(f[1], np.floating):
                raise ValueError
            key = f"o{len(opaque)}_"
            opaque[key] = n
            return Term.var(key)
        raise ValueError

    return go(node)
