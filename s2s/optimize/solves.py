"""The specializer's ``solves`` pass: linear solves against one matrix share its
factorization, and a matrix symmetric by construction is read for its transpose.

A Gaussian process's negative log-likelihood ``0.5 * y @ solve(k, y) + 0.5 *
slogdet(k)[1]`` has a gradient that reads ``inv(k.T)`` (``slogdet``'s cotangent),
``solve(k.T, g)`` (``solve``'s) and ``solve(k, y)`` (the forward): three LU
factorizations of one matrix, where a hand-written gradient makes one.  Two rewrites:

* **Symmetric by construction.** ``k.T`` is ``k`` where ``k`` is a name bound once,
  never written into, to a square real matrix built only from symmetric pieces: the
  identity (``np.eye(n)``), ``a[:, None] + a[None, :]`` and ``a[:, None] * a[None, :]``
  (commutative operators give the same number both ways), ``np.diag(v)`` of a vector,
  even functions of the
  antisymmetric ``a[:, None] - a[None, :]`` (``d ** 2``, ``d * d``, ``np.abs(d)``,
  ``np.square(d)``: ``x - y`` is exactly ``-(y - x)`` in IEEE arithmetic, and a scalar
  times or over an antisymmetric value is antisymmetric), and elementwise arithmetic
  and functions of symmetric values and scalars.  Equal to rounding, not bit for bit:
  an elementwise function gives one value per input only where NumPy's loop computes
  every element alike (its vector body and its tail do on the builds measured).
* **One factorization.** Two or more ``np.linalg.solve(k, b)``/``np.linalg.inv(k)`` of
  one name ``k`` (2-D, bound once, never written into) in the function's straight-line
  statements are one ``np.linalg.solve(k, np.concatenate((...), axis=1))`` of their
  right-hand sides side by side (``np.eye(n)`` for ``inv``, which NumPy computes as
  that solve), placed before the first, each call then a slice of it.  Only where each
  right-hand side is pure and its names are bound before that point and not rebound
  until its call, every call's result has the merged dtype (``np.linalg.solve`` casts
  to the common type anyway), and no result can escape as a view of the shared array
  (a result read only by operators, reductions and matrix products, never returned,
  bound to a name that is written into, or passed on as it is).  Equal to rounding:
  LAPACK's ``getrs`` solves each column alike, but a blocked triangular solve may
  order a column's operations by how many columns there are.
"""

from __future__ import annotations

import ast
from typing import Any, Callable

import numpy as np

from .. import syntax
from .calls import MUTATORS, bound_once, call_name

_EVEN = {"abs", "absolute", "square", "fabs"}  # f(-x) == f(x) exactly
# elementwise functions (one value per input): of symmetric values, symmetric
_ELEMENTWISE = {"exp", "expm1", "log", "log1p", "sqrt", "tanh", "sinh", "cosh", "sin", "cos",
                "abs", "absolute", "square", "fabs", "reciprocal", "negative", "exp2",
                "log2", "log10", "cbrt", "arctan", "tan", "sign"}
_VIEWS = {"T", "mT", "real"}
# calls whose result is a new array, never a view of an argument
_FRESH = {"sum", "mean", "dot", "matmul", "outer", "inner", "trace", "exp", "log", "tanh",
          "solve", "inv", "multiply", "add", "subtract", "divide", "prod", "max", "min"}
_PURE_NP = _ELEMENTWISE | {"eye", "identity", "ones", "zeros", "full", "outer", "diag",
                           "concatenate", "stack", "multiply", "add", "subtract",
                           "divide", "sum", "mean", "float64", "float32"}


def _np(node: ast.AST, names: set[str] | tuple[str, ...]) -> bool:
    f = node.func if isinstance(node, ast.Call) else None
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
        f.value.id == "np" and f.attr in names


def _linalg(node: ast.AST, name: str) -> bool:
    f = node.func if isinstance(node, ast.Call) else None
    return isinstance(f, ast.Attribute) and f.attr == name and \
        isinstance(f.value, ast.Attribute) and f.value.attr == "linalg" and \
        isinstance(f.value.value, ast.Name) and f.value.value.id == "np" and \
        not node.keywords  # type: ignore[union-attr]


class _Shapes:
    """Which names hold symmetric / antisymmetric square matrices by construction."""

    def __init__(self, fact: Callable[[ast.AST], Any], once: dict[str, ast.expr],
                 written: set[str]) -> None:
        self.fact, self.once, self.written = fact, once, written
        self.memo: dict[str, str] = {}

    def _scalar(self, node: ast.AST) -> bool:
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            node = node.operand
        if isinstance(node, ast.Constant):
            return type(node.value) in (int, float)
        f = self.fact(node)
        return f is not None and f[0] == () and isinstance(f[1], np.dtype) and \
            f[1].kind in "fiu"

    def _column_row(self, left: ast.AST, right: ast.AST) -> bool:
        """``a[:, None]`` and ``a[None, :]`` (or ``a``) of one 1-D name ``a``."""
        def base(n: ast.AST, col: bool) -> str | None:
            if isinstance(n, ast.Name) and isinstance(self.once.get(n.id), ast.Subscript):
                n = self.once[n.id]  # (a name bound once to the subscript)
            if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and \
                    isinstance(n.slice, ast.Tuple) and len(n.slice.elts) == 2:
                a, b = n.slice.elts
                none, full = (b, a) if col else (a, b)
                if isinstance(none, ast.Constant) and none.value is None and \
                        isinstance(full, ast.Slice) and full.lower is None and \
                        full.upper is None and full.step is None:
                    return n.value.id
            if not col and isinstance(n, ast.Name):
                return n.id
            return None
        a, b = base(left, True), base(right, False)
        if a is None or a != b or a in self.written:
            return False
        column = self.once.get(left.id, left) if isinstance(left, ast.Name) else left
        f = self.fact(column.value)  # type: ignore[attr-defined]
        return f is not None and len(f[0]) == 1 and isinstance(f[1], np.dtype) and \
            f[1].kind == "f"

    def kind(self, node: ast.AST) -> str:
        """"sym", "anti", "scalar" or "" (nothing known)."""
        if self._scalar(node):
            return "scalar"
        if isinstance(node, ast.Name):
            if node.id not in self.once:
                return ""
            if node.id not in self.memo:
                self.memo[node.id] = ""  # (a cycle knows nothing)
                self.memo[node.id] = self.kind(self.once[node.id])
            return self.memo[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return self.kind(node.operand)
        if isinstance(node, ast.Call) and _np(node, ("eye", "identity")) and \
                len(node.args) == 1 and all(k.arg == "dtype" for k in node.keywords):
            return "sym"
        if isinstance(node, ast.Call) and _np(node, ("diag",)) and len(node.args) == 1 and \
                not node.keywords:
            f = self.fact(node.args[0])  # (a vector's diagonal matrix)
            return "sym" if f is not None and len(f[0]) == 1 else ""
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and \
                _np(node, _ELEMENTWISE):
            inner = self.kind(node.args[0])
            if inner == "anti":
                return "sym" if call_name(node) in _EVEN else ""
            return inner
        if not isinstance(node, ast.BinOp):
            return ""
        op = node.op
        if isinstance(op, ast.Pow):
            base = self.kind(node.left)
            exp = node.right
            if base == "anti" and isinstance(exp, ast.Constant) and exp.value == 2:
                return "sym"
            return base if base == "sym" and self._scalar(exp) else ""
        if isinstance(op, ast.Sub) and self._column_row(node.left, node.right):
            return "anti"
        if isinstance(op, (ast.Add, ast.Mult)) and self._column_row(node.left, node.right):
            return "sym"
        left, right = self.kind(node.left), self.kind(node.right)
        pair = {left, right}
        if "" in pair:
            return ""
        if isinstance(op, (ast.Mult, ast.Div)):
            if pair == {"anti"} or pair == {"sym"} or pair == {"sym", "scalar"}:
                return "sym"
            if pair == {"anti", "scalar"}:
                return "anti"
        if isinstance(op, (ast.Add, ast.Sub)):
            if pair in ({"sym"}, {"sym", "scalar"}):
                return "sym"
            if pair == {"anti"}:
                return "anti"
        return ""


def symmetric_transposes(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any]) -> None:
    """``k.T`` -> ``k`` where ``k`` is symmetric by construction (module docstring)."""
    once, written = bound_once(fn)
    shapes = _Shapes(fact, {k: v for k, v in once.items() if k not in written}, written)

    class Transposes(ast.NodeTransformer):
        def visit_Attribute(self, n: ast.Attribute) -> ast.AST:
            self.generic_visit(n)
            if n.attr != "T" or not isinstance(n.value, ast.Name) or \
                    not isinstance(n.ctx, ast.Load):
                return n
            f = fact(n.value)
            if f is None or len(f[0]) != 2 or f[0][0] != f[0][1] or \
                    not isinstance(f[1], np.dtype) or f[1].kind != "f" or \
                    shapes.kind(n.value) != "sym":
                return n
            new = ast.Name(n.value.id, ast.Load())
            if hasattr(n, "_k"):
                new._k = n._k  # type: ignore[attr-defined]  # (the same shape and dtype)
            return ast.copy_location(new, n)

    Transposes().visit(fn)


# ---- one factorization ------------------------------------------------------------------


def _parents(fn: ast.FunctionDef) -> dict[int, ast.AST]:
    out = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            out[id(child)] = node
    return out


def _pure(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            if not _np(n, _PURE_NP) or any(k.arg == "out" for k in n.keywords):
                return False
        elif isinstance(n, ast.Attribute):
            if n.attr not in _VIEWS and not (isinstance(n.value, ast.Name) and
                                             n.value.id == "np"):
                return False
        elif isinstance(n, (ast.NamedExpr, ast.Lambda, ast.IfExp, ast.BoolOp, ast.Await,
                            ast.Yield, ast.YieldFrom, ast.ListComp, ast.GeneratorExp)):
            return False
    return True


def _consumed(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Is ``node``'s value (or a view of it: subscripts, ``.T``) read only by an
    operator or a call that makes a new array?"""
    while True:
        up = parents.get(id(node))
        if isinstance(up, ast.Subscript) and up.value is node or \
                isinstance(up, ast.Attribute) and up.attr in _VIEWS:
            node = up
            continue
        if isinstance(up, (ast.BinOp, ast.UnaryOp)) and \
                not isinstance(getattr(up, "op", None), ast.UAdd):
            return True
        if isinstance(up, ast.Call) and node is not up.func and \
                call_name(up) in _FRESH and call_name(up) not in MUTATORS and \
                not any(k.arg == "out" for k in up.keywords):
            return True
        if isinstance(up, ast.Attribute) and up.value is node:  # a method of the value
            call = parents.get(id(up))
            return isinstance(call, ast.Call) and call.func is up and \
                up.attr in ("sum", "mean", "max", "min", "prod", "dot")
        return False


def shared_factorizations(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any],
                          note: Callable[[ast.AST, tuple, Any], None]) -> None:
    """Solves and inverses of one matrix as one solve (module docstring)."""
    once, written = bound_once(fn)
    parents = _parents(fn)
    body = fn.body
    bound_at: dict[str, list[int]] = {}
    for i, stmt in enumerate(body):
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                bound_at.setdefault(n.id, []).append(i)
    params = {a.arg for a in fn.args.args}
    groups: dict[str, list[tuple[int, ast.Call]]] = {}
    for i, stmt in enumerate(body):
        if not isinstance(stmt, (ast.Assign, ast.Return, ast.AugAssign, ast.Expr)):
            continue
        for n in ast.walk(stmt):
            if not isinstance(n, ast.Call) or not (
                    _linalg(n, "solve") and len(n.args) == 2 or
                    _linalg(n, "inv") and len(n.args) == 1):
                continue
            k = n.args[0]
            if isinstance(k, ast.Name) and (k.id in once or k.id in params and
                                            k.id not in bound_at) and k.id not in written:
                groups.setdefault(k.id, []).append((i, n))
    placed = []
    for k, calls in groups.items():
        found = _merge(fn, k, calls, fact, note, written, parents, bound_at, params)
        if found is not None:
            placed.append(found)
    for first, merged in sorted(placed, key=lambda p: -p[0]):  # (indices stay valid)
        fn.body.insert(first, merged)
    ast.fix_missing_locations(fn)


def _escapes(call: ast.Call, stmt: ast.stmt, parents: dict[int, ast.AST],
             fn: ast.FunctionDef, written: set[str]) -> bool:
    if _consumed(call, parents):
        return False
    if not (isinstance(stmt, ast.Assign) and stmt.value is call and
            len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return True
    name = stmt.targets[0].id
    if name in written:
        return True
    reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and
             isinstance(n.ctx, ast.Load)]
    return not all(_consumed(n, parents) for n in reads)


def _merge(fn: ast.FunctionDef, k: str, calls: list[tuple[int, ast.Call]],
           fact: Callable[[ast.AST], Any], note: Callable[[ast.AST, tuple, Any], None],
           written: set[str], parents: dict[int, ast.AST], bound_at: dict[str, list[int]],
           params: set[str]) -> tuple[int, ast.stmt] | None:
    """Where the one solve goes and its statement (the calls rewritten), or None."""
    fk = fact(calls[0][1].args[0])
    if fk is None or len(fk[0]) != 2 or fk[0][0] != fk[0][1] or \
            not isinstance(fk[1], np.dtype) or fk[1].kind != "f":
        return
    n = fk[0][0]
    while True:  # (a call left out may have been the first: the rest go after it)
        usable = _usable(fn, calls, fact, written, parents, bound_at, params, n)
        if len(usable) == len(calls) or not usable:
            break
        calls = [(i, call) for i, call, _ in usable]
    if not usable:
        return None
    first = min(i for i, _, _ in usable)
    if any(at >= first for at in bound_at.get(k, [])):
        return None
    sides = {"inv" if len(call.args) == 1 else ast.dump(call.args[1]) for _, call, _ in usable}
    if len(sides) < 2:  # (one right-hand side: nothing shared)
        return None
    dtype = np.result_type(*{out[1] for _, _, out in usable})
    if any(out[1] != dtype for _, _, out in usable):
        return None
    return first, _spell(fn, k, n, usable, dtype, fact, note, parents)


def _usable(fn: ast.FunctionDef, calls: list[tuple[int, ast.Call]],
            fact: Callable[[ast.AST], Any], written: set[str], parents: dict[int, ast.AST],
            bound_at: dict[str, list[int]], params: set[str], n: int) -> list[tuple]:
    """The calls that can take their columns of one solve placed before the first."""
    first = min(i for i, _ in calls)
    usable = []
    for i, call in calls:
        out = fact(call)
        if out is None or not isinstance(out[1], np.dtype) or \
                _escapes(call, fn.body[i], parents, fn, written):
            continue
        if len(call.args) == 2:
            b = call.args[1]
            fb = fact(b)
            if fb is None or len(fb[0]) not in (1, 2) or fb[0][0] != n or not _pure(b):
                continue
            names = {x.id for x in ast.walk(b) if isinstance(x, ast.Name) and x.id != "np"}
            # bound before the first call's statement, not again until this call's
            if any(not (x in params or any(at < first for at in bound_at.get(x, [])))
                   or any(first <= at < i + 1 for at in bound_at.get(x, []))
                   or x in written for x in names):
                continue
        usable.append((i, call, out))
    return usable


def _spell(fn: ast.FunctionDef, k: str, n: int, usable: list[tuple], dtype: np.dtype,
           fact: Callable[[ast.AST], Any], note: Callable[[ast.AST, tuple, Any], None],
           parents: dict[int, ast.AST]) -> ast.stmt:
    """The one solve's statement; each call replaced by its columns of it."""
    # the right-hand sides side by side, each call then its columns
    columns: list[ast.expr] = []
    where: dict[str, tuple[int, int, bool]] = {}  # a side's dump -> (start, width, 1-D)
    at = 0
    for _, call, _ in usable:
        if len(call.args) == 1:
            key = "inv"
            if key not in where:
                eye = syntax.parse(f"np.eye({n})" if dtype == np.float64 else
                                f"np.eye({n}, dtype=np.{dtype.name})", mode="eval").body
                columns.append(eye)
                where[key] = (at, n, False)
                at += n
            continue
        b = call.args[1]
        key = ast.dump(b)
        if key in where:
            continue
        shape = fact(b)[0]
        if len(shape) == 1:
            columns.append(ast.Subscript(b, ast.Tuple([ast.Slice(), ast.Constant(None)],
                                                      ast.Load()), ast.Load()))
            where[key] = (at, 1, True)
            at += 1
        else:
            columns.append(b)
            where[key] = (at, shape[1], False)
            at += shape[1]
    taken = {x.id for x in ast.walk(fn) if isinstance(x, ast.Name)}
    name = f"{k}_solved"
    j = 2
    while name in taken:
        name, j = f"{k}_solved_{j}", j + 1
    merged = ast.Assign([ast.Name(name, ast.Store())], ast.Call(
        syntax.parse("np.linalg.solve", mode="eval").body,
        [ast.Name(k, ast.Load()), ast.Call(
            syntax.parse("np.concatenate", mode="eval").body,
            [ast.Tuple(columns, ast.Load())], [ast.keyword("axis", ast.Constant(1))])], []))
    for _, call, out in usable:
        start, width, vector = where["inv" if len(call.args) == 1 else ast.dump(call.args[1])]
        index: ast.expr = ast.Constant(start) if vector else ast.Slice(
            ast.Constant(start) if start else None, ast.Constant(start + width))
        new = ast.Subscript(ast.Name(name, ast.Load()),
                            ast.Tuple([ast.Slice(), index], ast.Load()), ast.Load())
        note(new, out[0], out[1])
        _replace(parents, call, new)
    return merged


def _replace(parents: dict[int, ast.AST], old: ast.AST, new: ast.AST) -> None:
    up = parents[id(old)]
    for field, value in ast.iter_fields(up):
        if value is old:
            setattr(up, field, new)
            return
        if isinstance(value, list):
            for j, item in enumerate(value):
                if item is old:
                    value[j] = new
                    return
