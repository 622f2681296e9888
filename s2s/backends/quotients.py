"""A lowering pass over module text for the JAX backend: a quotient's derivative
with respect to its divisor reads the dividend, not the quotient.

The rules for ``x1 / x2`` write the divisor's cotangent (and tangent) as
``-g * ans / x2``: ``ans`` is the forward's quotient, so NumPy saves a square and the
optimizer's proofs can read it.  Under XLA that second read of the quotient keeps it
materialized: in ``exp(-0.5 * sq / ell_sq)`` the division then runs as a loop of its
own and the ``exp`` as another, unvectorized by XLA's CPU backend, where
``jax.jit(jax.grad(f))`` fuses the two (its rule reads ``x1``: ``-g * x1 * x2**-2``).
This pass rewrites, in each function of the emitted module, ::

    q = n / d                            q = n / d
    ...                           ->     ...
    ... -g * q / d ...                   ... -g / d * n / d ...

(``q * g`` as well as ``g * q``), so the backward reads ``n`` and XLA fuses the
forward's division into its consumer as JAX's program does.  JAX's own spelling is not
used: ``x2**-2`` overflows and underflows where the quotient's square is out of range
(``|x2| < 1e-19`` or ``> 1e19`` in float32), and ``-g / d * n / d`` rounds three times
like ``-g * q / d``, through intermediates of the same size except the first
(``g / d`` in place of ``n / d``).  The NumPy backend keeps the rule's text.

The rewrite is sound where ``q``, ``n`` and ``d`` each have one binding in the function
(an argument or one assignment, nothing else: no loop target, ``del``, ``global``,
``nonlocal`` or walrus) and ``q = n / d`` is a statement of the function's own body (not
in a loop or branch): every read of ``q`` after that statement is then ``n / d`` of the
same ``n`` and ``d``.
"""

from __future__ import annotations

import ast
from typing import Any

from .. import syntax
from ..emit.code import black_module

__all__ = ["lower_quotients"]

_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def lower_quotients(text: str) -> str:
    """``text`` with each ``g * q / d`` of a quotient ``q = n / d`` read as
    ``g / d * n / d`` (see the module docstring)."""
    if " / " not in text:
        return text
    tree = syntax.parse(text)
    edits: list[tuple[ast.stmt, str]] = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            edits += _function_edits(fn)
    if not edits:
        return text
    lines = text.splitlines(keepends=True)
    for stmt, new in sorted(edits, key=lambda e: e[0].lineno, reverse=True):
        first, last = stmt.lineno - 1, stmt.end_lineno - 1  # type: ignore[operator]
        indent = lines[first][: stmt.col_offset]
        tail = lines[last].encode()[stmt.end_col_offset:].decode()  # type: ignore[misc]
        if indent.strip() or tail.strip():  # (not a statement of lines of its own)
            continue
        lines[first:last + 1] = [indent + line if line.strip() else line
                                 for line in _formatted(new, len(indent))]
    return "".join(lines)


def _function_edits(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.stmt, str]]:
    bindings = _bindings(fn)
    quotients: dict[str, tuple[int, ast.expr, str]] = {}
    for k, stmt in enumerate(fn.body):
        q = _quotient(stmt, bindings)
        if q is not None:
            quotients[q[0]] = (k, q[1], q[2])
    if not quotients:
        return []
    edits = []
    for k, top in enumerate(fn.body):
        seen = {q: v for q, v in quotients.items() if v[0] < k}
        if not seen:
            continue
        for stmt in _simple_statements(top):
            copy = syntax.parse(ast.unparse(stmt)).body[0]
            rewriter = _Rewriter(seen)
            rewriter.visit(copy)
            if rewriter.changed:
                edits.append((stmt, ast.unparse(copy)))
    return edits


def _quotient(stmt: ast.stmt, bindings: dict[str, int]) -> tuple[str, ast.expr, str] | None:
    """``(q, n, d)`` where ``stmt`` is ``q = n / d`` with one binding of each name."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.BinOp)
            and isinstance(stmt.value.op, ast.Div) and isinstance(stmt.value.right, ast.Name)):
        return None
    q, n, d = stmt.targets[0].id, stmt.value.left, stmt.value.right.id
    if isinstance(n, ast.Name):
        names = {q, n.id, d}
    elif isinstance(n, ast.Constant) and type(n.value) in (int, float):
        names = {q, d}
    else:
        return None
    if len(names) < (3 if isinstance(n, ast.Name) else 2):
        return None
    if any(bindings.get(name, 0) != 1 for name in names):
        return None
    return q, n, d


def _bindings(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int]:
    """How many times each name is bound in ``fn``; a name a ``global`` or ``nonlocal``
    anywhere in it declares counts twice (never one binding)."""
    counts: dict[str, int] = {}

    def bind(name: str, times: int = 1) -> None:
        counts[name] = counts.get(name, 0) + times

    a = fn.args
    for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
        if arg is not None:
            bind(arg.arg)
    stack: list[Any] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bind(name, 2)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bind(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name)
        elif isinstance(node, ast.alias):
            bind((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bind(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bind(node.rest)
        # nested scopes: their own names are theirs, but a global/nonlocal in them
        # (or a walrus in a comprehension) can rebind ours, so they are walked too
        stack.extend(ast.iter_child_nodes(node))
    return counts


def _simple_statements(stmt: ast.stmt):
    """The simple statements in ``stmt`` (itself, or in its blocks), nested scopes not."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, _SIMPLE):
            yield node
        elif not isinstance(node, _SCOPES):
            for field in ("body", "orelse", "finalbody"):
                stack.extend(getattr(node, field, []) or [])
            for handler in getattr(node, "handlers", []) or []:
                stack.extend(handler.body)


class _Rewriter(ast.NodeTransformer):
    """``g * q / d`` and ``q * g / d`` as ``g / d * n / d`` for the quotients given."""

    def __init__(self, quotients: dict[str, tuple[int, ast.expr, str]]) -> None:
        self.quotients = quotients
        self.changed = False

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if not (isinstance(node.op, ast.Div) and isinstance(node.right, ast.Name)
                and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Mult)):
            return node
        d = node.right.id
        for q_side, g in ((node.left.right, node.left.left), (node.left.left, node.left.right)):
            found = self.quotients.get(q_side.id) if isinstance(q_side, ast.Name) else None
            if found is not None and found[2] == d:
                self.changed = True
                scaled = ast.BinOp(ast.BinOp(g, ast.Div(), ast.Name(d, ast.Load())),
                                   ast.Mult(), found[1])
                return ast.BinOp(scaled, ast.Div(), ast.Name(d, ast.Load()))
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node  # (its own scope: its names may shadow ours)

    def _comprehension(self, node: ast.AST) -> ast.AST:
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension


def _formatted(statement: str, indent: int) -> list[str]:
    """Black's layout of one statement at ``indent`` columns (as black lays out the
    whole module: the emitted text stays black-stable)."""
    black = black_module()
    body = black.format_str(statement + "\n", mode=black.Mode(line_length=88 - indent))
    return body.splitlines(keepends=True)
