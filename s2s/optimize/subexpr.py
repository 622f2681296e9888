"""Common subexpressions inside statements: the specializer's ``subexpr`` pass.

``cse`` (in the rewrite) shares a statement's whole value with an earlier statement of
the same value; once single-use temporaries are inlined, the same arithmetic also
repeats *inside* statements.  A forward-over-reverse Hessian-vector product spells
``1 - tanh(x)**2`` in the tangent of ``tanh`` and again in the gradient:

    tanh_x_dot = x_dot * (1 - tanh_x**2)
    v1_minus_tanh_x_sq = 1 - tanh_x**2

This pass computes each repeated pure expression once: where one occurrence is a whole
statement's value (``v1_minus_tanh_x_sq = 1 - tanh_x**2``) that statement moves up
to before the first statement that reads the expression, and the other occurrences
read its name; otherwise a new name is bound there.

Sound only where the expression has one value at every occurrence, so only

- expressions of arithmetic operators and of pure NumPy functions (``PURE``) over
  names and constants, evaluated unconditionally (not in ``x if c else y``, ``and``,
  ``or``, a lambda or a comprehension);
- whose names are bound once in the function, outside loops (a parameter never), and
  share no memory with any array the function writes into (``x[i] += v``, ``+=`` on
  a name, ``np.add.at``..., or passes to a function called by name, a user's or a
  runtime helper, which might write into it; a name bound to a view, a reshape or a
  call s2s does not know shares with what it reads);
- never replacing a whole statement value or a returned value by another name's array
  (outputs stay arrays of their own): only operands of a larger expression are read
  from the shared name.

Statements in and after a loop are left as they are (the pass stops at the first
``for``)."""

from __future__ import annotations

import ast
import copy
from typing import Any, Callable

import numpy as np

from .calls import MUTATORS, call_name

# NumPy functions whose result is a new value computed from the arguments alone
PURE = {
    "exp", "log", "log1p", "expm1", "tanh", "sinh", "cosh", "sin", "cos", "tan",
    "arctan", "sqrt", "square", "abs", "absolute", "negative", "reciprocal", "sign",
    "sum", "mean", "maximum", "minimum", "matmul", "dot", "outer", "where", "power",
    "multiply", "add", "subtract", "divide", "true_divide", "logaddexp", "exp2", "log2",
    "log10", "cbrt", "arcsinh", "arccos", "arcsin", "arctan2", "hypot", "clip",
}
_CONDITIONAL = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp,
                ast.DictComp, ast.GeneratorExp, ast.NamedExpr)


def _fresh(value: ast.AST) -> bool:
    """Does the expression make a new value (never a view of, or one of, its names)?"""
    if isinstance(value, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.Constant)):
        return True
    return isinstance(value, ast.Call) and _np_call(value) and call_name(value) in PURE \
        or _made(value)


def _np_call(node: ast.Call) -> bool:
    f = node.func
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
        f.value.id == "np"


def _candidate(node: ast.AST, arrays: frozenset[str] = frozenset()) -> bool:
    """Pure arithmetic over names and constants, with at least one operation
    (``arrays``: names known to hold ndarrays, whose ``sum``/``mean`` methods count)."""
    if isinstance(node, ast.BinOp):
        return _leafy(node.left, arrays) and _leafy(node.right, arrays)
    if isinstance(node, ast.UnaryOp):
        return _leafy(node.operand, arrays)
    if isinstance(node, ast.Call) and _np_call(node) and call_name(node) in PURE:
        return all(_leafy(a, arrays) for a in node.args) and all(
            k.arg is not None and _leafy(k.value, arrays) for k in node.keywords)
    return _array_method(node, arrays)


# methods of an array (a name whose value is an ndarray: a fact) that make a new value
_METHODS = {"sum", "mean", "max", "min"}


def _ndarray(f: Any) -> bool:
    """A fact of an array with at least one axis (so an ndarray, not a NumPy scalar)."""
    return f is not None and isinstance(f[1], np.dtype) and isinstance(f[0], tuple) \
        and len(f[0]) >= 1


def _array_method(node: ast.AST, arrays: frozenset[str]) -> bool:
    """``x.mean(axis=..., keepdims=...)`` or ``x.sum(...)`` of a name ``x`` holding an
    ndarray, with literal keywords and no positional arguments."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _METHODS and isinstance(node.func.value, ast.Name)
            and node.func.value.id in arrays and not node.args):
        return False
    for k in node.keywords:
        try:
            ast.literal_eval(k.value)
        except ValueError:
            return False
        if k.arg not in ("axis", "keepdims"):
            return False
    return True


def _leafy(node: ast.AST, arrays: frozenset[str] = frozenset()) -> bool:
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Tuple):
        return all(_leafy(e, arrays) for e in node.elts)
    return _candidate(node, arrays)


class _Sharing:
    """Which names may share memory with an array the function writes into."""

    def __init__(self, body: list[ast.stmt]) -> None:
        self.parent: dict[str, str] = {}
        written: set[str] = set()
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.AugAssign):
                    t = node.target
                    while isinstance(t, (ast.Subscript, ast.Attribute)):
                        t = t.value
                    if isinstance(t, ast.Name):
                        written.add(t.id)
                elif isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, (ast.Subscript, ast.Attribute)):
                            while isinstance(t, (ast.Subscript, ast.Attribute)):
                                t = t.value
                            if isinstance(t, ast.Name):
                                written.add(t.id)
                        elif isinstance(t, (ast.Name, ast.Tuple, ast.List)) and \
                                not _fresh(node.value):
                            # a view, an alias or an unknown call: may share memory
                            for a in ast.walk(t):
                                if isinstance(a, ast.Name):
                                    for b in ast.walk(node.value):
                                        if isinstance(b, ast.Name):
                                            self._join(a.id, b.id)
                elif isinstance(node, ast.Call) and call_name(node) in MUTATORS:
                    for a in [*node.args[:1], getattr(node.func, "value", None)]:
                        if isinstance(a, ast.Name):
                            written.add(a.id)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    # a function the code calls by name (a user's, a runtime helper)
                    # might write into an array it is given
                    for a in [*node.args, *(k.value for k in node.keywords)]:
                        if isinstance(a, ast.Name):
                            written.add(a.id)
                elif isinstance(node, ast.For):
                    for a in ast.walk(node.target):
                        if isinstance(a, ast.Name):
                            written.add(a.id)
        self.written = {self._root(n) for n in written}

    def _root(self, n: str) -> str:
        while self.parent.get(n, n) != n:
            n = self.parent[n]
        return n

    def _join(self, a: str, b: str) -> None:
        ra, rb = self._root(a), self._root(b)
        if ra != rb:
            self.parent[ra] = rb

    def safe(self, name: str) -> bool:
        return self._root(name) not in self.written


# NumPy functions that make a new array from constant arguments alone (np.eye(3)):
# shared where every other occurrence is only read (``_read_only``)
MADE = {"eye", "identity"}
# calls that read the items of the tuple they are given into a new array
_JOINS = {"concatenate", "stack", "hstack", "vstack"}


def _made(node: ast.AST) -> bool:
    """``np.eye(3)``, ``np.eye(3, dtype=np.float32)``: literal arguments, a dtype."""
    def literal(a: ast.AST) -> bool:
        return isinstance(a, ast.Constant) or isinstance(a, ast.Attribute) and \
            isinstance(a.value, ast.Name) and a.value.id == "np"

    return isinstance(node, ast.Call) and _np_call(node) and call_name(node) in MADE and \
        all(literal(a) for a in node.args) and all(
            k.arg is not None and literal(k.value) for k in node.keywords)


def _read_only(node: ast.AST, parent: ast.AST | None, up: ast.AST | None) -> bool:
    """Is ``node`` (a child of ``parent``, a child of ``up``) only read, into a new
    value: an operand of arithmetic, an argument of a pure NumPy function, an item of
    the tuple ``np.concatenate`` (or a stack) joins?"""
    if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
        return True
    if isinstance(parent, ast.Call):
        return _np_call(parent) and call_name(parent) in PURE and node in parent.args
    return isinstance(parent, (ast.Tuple, ast.List)) and isinstance(up, ast.Call) and \
        _np_call(up) and call_name(up) in _JOINS and up.args[:1] == [parent]


def _occurrences(stmt: ast.stmt, arrays: frozenset[str] = frozenset(), made: bool = False):
    """(node, parent is the statement itself) for each unconditionally evaluated
    candidate subexpression of the statement's value (``made``: and each ``MADE``
    call only read there, or the statement's whole value)."""
    top = stmt.value if isinstance(stmt, (ast.Assign, ast.Return, ast.Expr)) else None
    if top is None:
        return
    stack: list[tuple[ast.AST, bool, Any, Any]] = [(top, True, None, None)]
    while stack:
        node, whole, parent, up = stack.pop()
        if isinstance(node, _CONDITIONAL):
            continue
        if _candidate(node, arrays) or made and _made(node) and (
                whole or _read_only(node, parent, up)):
            yield node, whole
        for child in ast.iter_child_nodes(node):
            # a returned tuple's items are whole outputs too
            stack.append((child, whole and isinstance(node, ast.Tuple), node, parent))


def _size(node: ast.AST) -> int:
    return sum(1 for _ in ast.walk(node))


def _straight_prefix(fn: ast.FunctionDef) -> int:
    """How many statements come before the first loop (or anything not a plain
    assignment, a write into an array, an expression or a return)."""
    return next((i for i, s in enumerate(fn.body) if not isinstance(
        s, (ast.Assign, ast.AugAssign, ast.Return, ast.Expr))), len(fn.body))


def _reads(node: ast.AST) -> set[str]:
    """The names an expression reads as values (not ``np`` of ``np.exp``)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Call):
            stack += [*n.args, *(k.value for k in n.keywords)]
            if isinstance(n.func, ast.Attribute) and not (
                    isinstance(n.func.value, ast.Name) and n.func.value.id == "np"):
                stack.append(n.func.value)  # (the array of a method call)
        else:
            stack += list(ast.iter_child_nodes(n))
    return out


def _bindings(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any] | None) -> tuple:
    """What both passes check a read against: the names known to hold ndarrays, how
    often each name is bound, the parameters, the writes (``_Sharing``), and whether a
    name holds one value (a parameter never rebound, a name bound once, or a module
    constant the code reads)."""
    arrays = frozenset(n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                       and fact is not None and _ndarray(fact(n)))
    binds: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            binds[node.id] = binds.get(node.id, 0) + 1
    params = {a.arg for a in fn.args.args}

    def one_value(r: str) -> bool:
        return binds.get(r, 0) == (0 if r in params else 1) or (
            r not in params and r not in binds)

    return arrays, binds, params, _Sharing(fn.body), one_value


def share_subexpressions(fn: ast.FunctionDef, max_rounds: int = 50,
                         fact: Callable[[ast.AST], Any] | None = None) -> None:
    """Compute each repeated pure subexpression once (see the module's docstring);
    ``fact``: a node's (shape, dtype), where known (a name holding an ndarray may have
    its ``sum``/``mean`` method calls shared).  A constant array made twice
    (``np.eye(3)``: ``MADE``), each time only read, is made once too (a name bound
    once, read where each was: ``0.1 * np.eye(3)`` and the identity of an inverse's
    solve, the solves pass's, in a GP's gradient)."""
    arrays, binds, params, sharing, one_value = _bindings(fn, fact)
    # (every name the code mentions: a module constant it reads must stay global)
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | params

    for _ in range(max_rounds):
        found: dict[str, list] = {}
        for i, stmt in enumerate(fn.body[:_straight_prefix(fn)]):
            for node, whole in _occurrences(stmt, arrays, made=True):
                # (constants alone: a literal is cheaper to read; an array made of them
                # is not)
                reads = _reads(node)
                if (reads or _made(node)) and all(
                        one_value(r) and sharing.safe(r) for r in reads):
                    found.setdefault(ast.dump(node), []).append((i, stmt, node, whole))
        plans = []
        for v in found.values():
            inner = sum(not whole for *_, whole in v)
            if len(v) < 2 or not inner:
                continue
            holder = _holder(fn, v, binds, params, sharing)
            # computed once where it was computed len(v) times: a new name pays
            # for itself only where two operands read it
            if holder is not None or inner >= 2:
                plans.append((v, holder))
        if not plans:
            return
        best, holder = max(plans, key=lambda p: _size(p[0][0][2]))
        _share(fn, best, holder, binds, taken)


def _holder(fn: ast.FunctionDef, occurrences: list, binds: dict[str, int],
            params: set[str], sharing: _Sharing) -> tuple[int, ast.Assign] | None:
    """An occurrence that is a whole statement's value, bound to a name the others can
    read: bound once (the statement may move up to the first occurrence), or the first
    occurrence and not bound again before the last one (whose own statement may
    rebind it: its value is read first)."""
    first = min(i for i, *_ in occurrences)
    last = max(i for i, *_ in occurrences)
    for i, stmt, node, whole in occurrences:
        if not (whole and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], ast.Name) and stmt.value is node):
            continue
        t = stmt.targets[0].id
        if t in params or not sharing.safe(t):
            continue
        if binds.get(t) == 1:
            return i, stmt
        rebound = [j for j, s in enumerate(fn.body) if i < j < last and any(
            isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == t
            for n in ast.walk(s))]
        if i == first and not rebound:
            return i, stmt
    return None


def _share(fn: ast.FunctionDef, occurrences: list, holder: tuple | None,
           binds: dict[str, int], taken: set[str]) -> None:
    first = min(i for i, *_ in occurrences)
    if holder is not None:
        at, stmt = holder
        name = stmt.targets[0].id
        if at > first:  # the statement moves up to the first reader
            fn.body.pop(at)
            _unplaced(stmt)
            fn.body.insert(first, stmt)
    else:
        k = 1
        while f"shared_{k}" in taken:
            k += 1
        name = f"shared_{k}"
        taken.add(name)
        binds[name] = 1
        new = ast.Assign([ast.Name(name, ast.Store())], copy.deepcopy(occurrences[0][2]))
        _unplaced(new)
        fn.body.insert(first, new)
    for _, stmt, node, whole in occurrences:
        if not whole:  # (an output or a statement's own value stays an array of its own)
            _replace(stmt, node, name)


def _unplaced(stmt: ast.stmt) -> None:
    """A statement moved up has no line of the emitted text (the comments quoting the
    user's lines stay above the statements they stood above)."""
    stmt.lineno = stmt.end_lineno = None  # type: ignore[assignment]


def _replace(stmt: ast.stmt, target: ast.AST, name: str) -> int:
    new = ast.Name(name, ast.Load())
    if hasattr(target, "_k"):  # (the same value: its facts, for the passes after)
        new._k = target._k  # type: ignore[attr-defined]
    for parent in ast.walk(stmt):
        for field, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, field, new)
                return 1
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if item is target:
                        value[k] = new
                        return 1
    return 0


def read_held_values(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any] | None = None
                     ) -> None:
    """Where a name already holds a subexpression's value (bound once, earlier, to
    that expression), read the name: ``tanh_x_dot * (2 * tanh_x)`` after
    ``tanh_x_times_2 = 2 * tanh_x`` is ``tanh_x_dot * tanh_x_times_2``.  The e-graph
    runs after it, so it no longer folds the constant out of a product whose value
    the code holds (``-2.0 * (tanh_x_dot * tanh_x)``, an operation more).  Under the
    guards of ``share_subexpressions`` (names bound once, none written into, only
    operands replaced, never a statement's whole value), in one pass over the
    straight-line statements (that pass, after the e-graph, does the rest)."""
    arrays, binds, params, sharing, one_value = _bindings(fn, fact)

    held: dict[str, str] = {}  # ast.dump of a value -> the name bound once to it

    def put(node: ast.AST) -> None:
        for field, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for k, item in enumerate(items):
                if not isinstance(item, ast.AST) or isinstance(item, _CONDITIONAL):
                    continue
                name = held.get(ast.dump(item)) if _candidate(item, arrays) else None
                if name is None:
                    put(item)
                    continue
                new = ast.Name(name, ast.Load())
                if hasattr(item, "_k"):
                    new._k = item._k  # type: ignore[attr-defined]  # (the same value)
                if isinstance(value, list):
                    value[k] = new
                else:
                    setattr(node, field, new)

    for stmt in fn.body[:_straight_prefix(fn)]:
        top = stmt.value if isinstance(stmt, (ast.Assign, ast.Return, ast.Expr)) else None
        if top is None or isinstance(top, _CONDITIONAL):
            continue
        if isinstance(top, ast.Tuple):  # (a returned tuple's items are whole outputs)
            for item in top.elts:
                put(item)
        else:
            put(top)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name):
            t = stmt.targets[0].id
            reads = _reads(top)
            if binds.get(t) == 1 and t not in params and sharing.safe(t) and \
                    _candidate(top, arrays) and reads and \
                    all(one_value(r) and sharing.safe(r) for r in reads):
                held.setdefault(ast.dump(top), t)
