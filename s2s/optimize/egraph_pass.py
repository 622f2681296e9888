"""The specializer's arithmetic passes: expressions of names and numbers simplified on
an e-graph (egglog, the optional [egraph] extra; without it they are left as they are),
and single-use pure temporaries inlined into their use."""

from __future__ import annotations

import ast
import copy
from collections import defaultdict
from typing import Any, Callable

import numpy as np

from .. import syntax
from .calls import MUTATORS, PythonScalar, call_name
from .calls import written as _written
from .passes import straight
from .terms import language as _language
from .terms import release
from .terms import to_term as _to_term

# ---- arithmetic on an e-graph ----------------------------------------------------------


def egraph_simplify(fn: ast.FunctionDef, facts_of: Callable[[ast.AST], Any]) -> None:
    """Fold constants and move signs in each statement's arithmetic, on an e-graph.

    Only expressions of names and numbers under ``+ - * /`` and unary minus whose names
    hold floating values are taken, so every rule keeps shapes and dtypes (Python
    numbers are weak scalars in NumPy's promotion)."""
    language = _language()
    if language is None:  # egglog is the optional [egraph] extra; without it the code stays as is
        return
    from egglog import EGraph, f64, rewrite, vars_

    Term = language.Term

    def to_term(node: ast.AST) -> Any:
        return _to_term(node, facts_of, Term, opaque)

    opaque: dict[str, ast.AST] = {}

    def arithmetic(node: ast.AST) -> bool:
        """Arithmetic over floating names (numbers alone may be Python ints: shape
        arithmetic, which must stay ints)."""
        if not any(isinstance(n, ast.Name) for n in ast.walk(node)):
            return False
        try:
            to_term(node)
        except ValueError:
            return False
        return True

    inline_single_uses(fn, arithmetic)
    # the arithmetic expressions statements compute: (holder, slot, term)
    candidates: list[tuple[Any, Any, Any]] = []

    def take(holder: Any, slot: Any, node: ast.AST) -> None:
        node = _seeds_as_numbers(node, facts_of)  # (a copy where it folds a seed)
        if isinstance(node, (ast.BinOp, ast.UnaryOp)) and arithmetic(node):
            candidates.append((holder, slot, to_term(node)))

    for stmt in fn.body:
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Return)) and \
                stmt.value is not None:
            take(stmt, "value", stmt.value)
            if isinstance(stmt, ast.Return) and isinstance(stmt.value, (ast.Tuple,
                                                                        ast.Dict)):
                items = stmt.value.elts if isinstance(stmt.value, ast.Tuple) \
                    else stmt.value.values
                for k, item in enumerate(items):
                    take(items, k, item)
            for node in ast.walk(stmt.value):  # (arithmetic indexed: (a * b)[:, None])
                if isinstance(node, ast.Subscript):
                    take(node, "value", node.value)
    if not candidates:
        return
    eg = EGraph()
    try:
        lets = [eg.let(f"s{i}", term) for i, (_, _, term) in enumerate(candidates)]
        a, b = vars_("a b", f64)
        x, y = vars_("x y", Term)
        eg.register(
            rewrite(Term(a) * Term(b)).to(Term(a * b)),
            rewrite(Term(a) + Term(b)).to(Term(a + b)),
            rewrite(x * Term(a)).to(Term(a) * x),
            rewrite(Term(a) * (Term(b) * x)).to(Term(a * b) * x),
            rewrite((Term(a) * x) * y).to(Term(a) * (x * y)),
            rewrite(x * (Term(a) * y)).to(Term(a) * (x * y)),
            rewrite(Term(1.0) * x).to(x),
            rewrite(-(-x)).to(x),
            rewrite(-Term(a)).to(Term(-a)),
            rewrite(Term(a) * (-x)).to(Term(-a) * x),
            rewrite(-(Term(a) * x)).to(Term(-a) * x),
            rewrite((-x) * y).to(-(x * y)),
            rewrite(x * (-y)).to(-(x * y)),
            rewrite(x - (-y)).to(x + y),
            rewrite((-x) / y).to(-(x / y)),
            rewrite(x + (-y)).to(x - y),
            rewrite((-x) + y).to(y - x),
            rewrite(x / Term(1.0)).to(x),
            rewrite((Term(1.0) / x) * y).to(y / x),
            rewrite(y * (Term(1.0) / x)).to(y / x),
            rewrite(Term(a) * (Term(b) / x)).to(Term(a * b) / x),
            rewrite(Term(a) * ((Term(b) / x) * y)).to((Term(a * b) / x) * y),
        )
        eg.run(6)
        # (inner candidates first: an indexed one, (a * b)[:, None], is an opaque name
        # in its statement's, whose text is read off the node when that one is written)
        for (holder, slot, _), let in reversed(list(zip(candidates, lets))):
            best = eg.extract(let)
            text = _render(best, opaque)
            if text is None:
                continue
            new = syntax.parse(text, mode="eval").body
            old = holder[slot] if isinstance(holder, list) else getattr(holder, slot)
            if _cost(new) < _cost(old) and not isinstance(new, ast.Name):
                _keep_facts(new, old)
                if isinstance(holder, list):
                    holder[slot] = new
                else:
                    setattr(holder, slot, new)
    finally:
        release(eg)


def _keep_facts(new: ast.AST, old: ast.AST) -> None:
    """The probe's facts (``_k``) of ``old`` on ``new``, which the e-graph made of it:
    the whole (the same value, shape and dtype: every rule keeps them), and each
    subexpression of ``new`` spelled as one of ``old``'s (the same pure expression in
    one statement: the same value), so later passes read the shapes of both."""
    if hasattr(old, "_k"):
        new._k = old._k  # type: ignore[attr-defined]
    spelled = {ast.dump(n): n for n in ast.walk(old) if hasattr(n, "_k")}
    for n in ast.walk(new):
        was = spelled.get(ast.dump(n))
        if was is not None and not hasattr(n, "_k"):
            for a, b in zip(ast.walk(n), ast.walk(was)):
                if hasattr(b, "_k") and type(a) is type(b):
                    a._k = b._k  # type: ignore[attr-defined]


def _float64_seed(node: ast.AST) -> float | None:
    """The number of ``np.float64(c)`` (a gradient's seed, ``c`` a float literal)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            isinstance(node.func.value, ast.Name) and node.func.value.id == "np" and \
            node.func.attr == "float64" and len(node.args) == 1 and not node.keywords \
            and isinstance(node.args[0], ast.Constant) and type(node.args[0].value) is float:
        return node.args[0].value
    return None


def _seeds_as_numbers(node: ast.AST, facts_of: Callable[[ast.AST], Any]) -> ast.AST:
    """``node`` (``+ - * /`` and negation), or a copy with each ``np.float64(c)`` the
    number ``c`` where every other operand is a float64 NumPy value (facts, not a
    Python number) and no quotient divides by a literal: then ``np.float64(1.0) * 0.5
    * g`` is ``1.0 * 0.5 * g``, the same float64 numbers in the same order and the
    same float64 result, which the e-graph folds to ``0.5 * g`` (a Python float
    divided by zero raises where ``np.float64``'s gives inf, hence no literal
    divisor)."""
    leaves: list[ast.AST] = []
    seeds = 0

    def walk(n: ast.AST) -> bool:
        nonlocal seeds
        if isinstance(n, ast.BinOp) and type(n.op) in (ast.Add, ast.Sub, ast.Mult, ast.Div):
            if isinstance(n.op, ast.Div) and isinstance(n.right, (ast.Constant, ast.UnaryOp)):
                return False
            return walk(n.left) and walk(n.right)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return walk(n.operand)
        if isinstance(n, ast.Constant):
            return type(n.value) in (int, float)
        if _float64_seed(n) is not None:
            seeds += 1
            return True
        leaves.append(n)
        return True

    if not walk(node) or not seeds or not leaves:
        return node
    for leaf in leaves:
        f = facts_of(leaf)
        if f is None or isinstance(f, PythonScalar) or f[1] != np.dtype(np.float64):
            return node

    class Numbers(ast.NodeTransformer):
        def visit_Call(self, n: ast.Call) -> ast.AST:
            value = _float64_seed(n)
            return ast.copy_location(ast.Constant(value), n) if value is not None else n

    return Numbers().visit(copy.deepcopy(node))


def inline_single_uses(fn: ast.FunctionDef, arithmetic: Callable[[ast.AST], bool]) -> None:
    """Put a temporary that one later statement reads into that statement, as a
    careful person writes ``x.T @ (g * (1 - h**2))``: only pure values (no writes),
    from straight-line code into straight-line code, never a name something writes
    into, and only while the expression stays short; the e-graph then sees whole
    expressions (``-(200.0 * d) * (2 * x)``) and folds their constants.  Loop bodies
    likewise, for names that live one iteration (read after their binding, in the
    body only), where a plain copy ``a = b`` is also read through."""
    params = {a.arg for a in fn.args.args}
    _inline_block(fn.body, params, set())
    for stmt in fn.body:
        if isinstance(stmt, ast.For) and all(straight(s, in_loop=True) for s in stmt.body):
            outside = {n.id for s in fn.body if s is not stmt for n in ast.walk(s)
                       if isinstance(n, ast.Name)}
            outside |= {n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name)}
            _copies_in_loop(stmt.body, params | outside)
            _inline_block(stmt.body, params | outside, set(), in_loop=True)


def _copies_in_loop(body: list[ast.stmt], keep: set[str]) -> None:
    """``a = b`` in a loop body, ``a`` living this iteration only: read ``b``."""
    changed = True
    while changed:
        changed = False
        for i, stmt in enumerate(body):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, ast.Name)):
                continue
            a, b = stmt.targets[0].id, stmt.value.id
            if a in keep or a == b:
                continue
            binds_a = [k for k, s in enumerate(body) for n in ast.walk(s)
                       if isinstance(n, ast.Name) and n.id == a
                       and isinstance(n.ctx, ast.Store)]
            reads_a = [k for k, s in enumerate(body) for n in ast.walk(s)
                       if isinstance(n, ast.Name) and n.id == a
                       and isinstance(n.ctx, ast.Load)]
            if binds_a != [i] or any(k <= i for k in reads_a) or \
                    any(a in _written(s) or b in _written(s) for s in body):
                continue
            last = max(reads_a, default=i)
            if any(isinstance(n, ast.Name) and n.id == b and isinstance(n.ctx, ast.Store)
                   for s in body[i + 1:last + 1] for n in ast.walk(s)):
                continue

            class Put(ast.NodeTransformer):
                def visit_Name(self, n: ast.Name) -> ast.AST:
                    if n.id == a and isinstance(n.ctx, ast.Load):
                        return ast.copy_location(ast.Name(b, ast.Load()), n)
                    return n

            for k in range(i + 1, len(body)):
                body[k] = Put().visit(body[k])
            del body[i]
            changed = True
            break


def _inline_block(body: list[ast.stmt], keep: set[str], _unused: set[str],
                  in_loop: bool = False) -> None:
    """Inline each single-use pure temporary into its use, the first candidate in
    source order each time (as rescanning from the top after every inlining would),
    in time about linear in the block: each statement's reads, binds and writes are
    indexed once and kept up to date, and a statement is looked at again only when an
    inlining moved a read of the name it binds."""
    import bisect
    import heapq

    n = len(body)
    loads: dict[str, list[int]] = defaultdict(list)
    binds: dict[str, list[int]] = defaultdict(list)
    writes: dict[str, list[int]] = defaultdict(list)
    for i, stmt in enumerate(body):
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name):
                (loads if isinstance(node.ctx, ast.Load) else binds)[node.id].append(i)
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            binds[stmt.target.id].append(i)
        for name in _written(stmt):
            writes[name].append(i)
    crooked = [0]  # crooked[k]: statements before k that are not straight-line
    for stmt in body:
        crooked.append(crooked[-1] + (not straight(stmt, in_loop=in_loop)))

    def any_in(positions: list[int], lo: int, hi: int) -> bool:
        """Is one of the sorted ``positions`` in (lo, hi]?"""
        k = bisect.bisect_right(positions, lo)
        return k < len(positions) and positions[k] <= hi

    gone = [False] * n
    todo = list(range(n))
    heapq.heapify(todo)
    while todo:
        i = heapq.heappop(todo)
        stmt = body[i]
        if gone[i] or not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                           and isinstance(stmt.targets[0], ast.Name)
                           and _pure(stmt.value) and _ops(stmt.value) >= 1):
            continue
        t = stmt.targets[0].id
        if t in keep or len(loads[t]) != 1 or binds[t] != [i]:
            continue
        j = loads[t][0]
        use = body[j]
        if j <= i or not isinstance(use, (ast.Assign, ast.Return, ast.AugAssign)) or \
                use.value is None or crooked[j + 1] - crooked[i] or \
                _ops(_reader(use.value, t)) + _ops(stmt.value) > 6:
            continue
        if not any(isinstance(m, ast.Name) and m.id == t for m in ast.walk(use.value)):
            continue  # read in the target (``buf[i] += v`` reads ``i`` there)
        if isinstance(use, ast.AugAssign) and not isinstance(use.target, ast.Name):
            target = use.target
            while isinstance(target, (ast.Subscript, ast.Attribute)):
                target = target.value
            if isinstance(target, ast.Name) and target.id == t:
                continue
        reads = [m.id for m in ast.walk(stmt.value) if isinstance(m, ast.Name)]
        if any(any_in(binds[r], i, j) or any_in(writes[r], i, j) for r in set(reads)):
            continue
        value = stmt.value

        class Put(ast.NodeTransformer):
            def visit_Name(self, m: ast.Name) -> ast.AST:
                return copy.deepcopy(value) if m.id == t and \
                    isinstance(m.ctx, ast.Load) else m

        use.value = Put().visit(use.value)
        gone[i] = True
        loads[t] = []
        binds[t] = []
        for r in reads:  # the value's reads now happen at its use
            where = loads[r]
            where[where.index(i)] = j
            where.sort()
            for k in binds[r]:  # whoever binds them may now be inlined there
                if k < i and not gone[k]:
                    heapq.heappush(todo, k)
    body[:] = [stmt for k, stmt in enumerate(body) if not gone[k]]


def _reader(value: ast.expr, name: str) -> ast.expr:
    """The expression that reads ``name``: of a returned tuple, the item (each item is
    an output of its own; the others' operations do not lengthen it)."""
    if isinstance(value, ast.Tuple):
        for item in value.elts:
            if any(isinstance(m, ast.Name) and m.id == name for m in ast.walk(item)):
                return item
    return value


def _pure(node: ast.AST) -> bool:
    return not any(isinstance(n, ast.Call) and call_name(n) in MUTATORS
                   for n in ast.walk(node))


def _ops(node: ast.AST) -> int:
    return sum(isinstance(n, (ast.BinOp, ast.Call, ast.Subscript)) or (
        isinstance(n, ast.UnaryOp) and not isinstance(n.operand, ast.Constant))
        for n in ast.walk(node))


def _render(term: Any, opaque: dict[str, ast.AST]) -> str | None:
    """Python text of an extracted term (egglog prints Term(2.0) * Term.var("x"))."""
    import re

    text = str(term)
    text = re.sub(r'Term\.var\("([A-Za-z_][A-Za-z_0-9]*)"\)',
                  lambda m: f"({ast.unparse(opaque[m.group(1)])})"
                  if m.group(1) in opaque else m.group(1), text)
    text = re.sub(r"Term\((-?[0-9.e+-]+|inf|-inf|nan)\)", r"(\1)", text)
    if "Term" in text or "inf" in text or "nan" in text:
        return None
    try:
        return ast.unparse(syntax.parse("(" + text + ")", mode="eval"))
    except SyntaxError:
        return None


def _cost(node: ast.AST) -> int:
    """Array operations in an expression (a minus sign on a number is free)."""
    return sum(isinstance(n, (ast.BinOp, ast.Call)) or (
        isinstance(n, ast.UnaryOp) and not isinstance(n.operand, ast.Constant))
        for n in ast.walk(node))
