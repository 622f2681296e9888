"""Does specialized code return only arrays it made?  Then the call need not look for
memory its gradients share with the caller's arrays (s2s/api/transformed.py)."""

from __future__ import annotations

import ast
import itertools

from .. import syntax
from .aliases import makes_new


def returns_fresh(text: str, name: str) -> bool:
    """Does function ``name`` of ``text`` return only arrays it made (never one of
    its arguments or of the arrays it reads from its module, nor a view of one), each
    leaf a different array?  Straight-line code and loops over ranges; False when
    unsure.  A call of a function ``text`` defines beside it that returns only arrays
    it made is such an array too (a gradient's ``f_vjp_w(w, XB, YB, seed)``)."""
    try:
        module = syntax.parse(text)
    except SyntaxError:
        return False
    defs = {n.name: n for n in module.body if isinstance(n, ast.FunctionDef)}
    return name in defs and _returns_fresh(defs, name, set(), {})


def _returns_fresh(defs: dict[str, ast.FunctionDef], name: str, on: set[str],
                   known: dict[str, bool]) -> bool:
    """``returns_fresh`` of ``defs[name]``; ``on``: the functions whose answers wait on
    this one (a call back into one of them counts as not fresh: False when unsure),
    ``known``: the answers so far."""
    if name in known:
        return known[name]
    fn = defs[name]
    on.add(name)
    bound = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and
             isinstance(n.ctx, ast.Store)} | {a.arg for a in ast.walk(fn.args)
                                               if isinstance(a, ast.arg)} | {
        n.name for n in ast.walk(fn) if isinstance(n, ast.FunctionDef) and n is not fn}
    called = {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and
              isinstance(n.func, ast.Name) and n.func.id in defs} - bound
    # the functions beside it it calls that return only arrays they made
    calls = frozenset(c for c in called if c not in on and
                      _returns_fresh(defs, c, on, known))
    on.discard(name)
    known[name] = _body_fresh(fn, calls)
    return known[name]


def _body_fresh(fn: ast.FunctionDef, calls: frozenset) -> bool:
    # locals bound to arrays the code made -> which array (names bound to one another
    # share a number: a return of both is one array twice)
    made: dict[str, int] = {}
    fresh = itertools.count()
    for stmt in fn.body:
        if isinstance(stmt, ast.Return):
            return _fresh_leaves(stmt.value, made, calls)
        if isinstance(stmt, ast.For):
            if not _loop(stmt, made, fresh, calls):
                return False
        elif not _step(stmt, made, fresh, calls):
            return False
    return False


def _may_alias(node: ast.AST, made: dict[str, int], calls: frozenset = frozenset()) -> bool:
    if isinstance(node, ast.Name):  # an argument, a module's array, or a view
        return node.id not in made
    if isinstance(node, (ast.Subscript, ast.Attribute)):
        return _may_alias(node.value, made, calls)
    if isinstance(node, ast.Call):  # (a user's function may return its argument)
        if isinstance(node.func, ast.Name) and node.func.id in calls:
            return False  # (a function beside it that returns only arrays it made)
        return not makes_new(node, lambda a: _may_alias(a, made, calls))
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.Constant)):
        return False
    return True


def _step(stmt: ast.stmt, made: dict[str, int], fresh: itertools.count,
          calls: frozenset = frozenset()) -> bool:
    """Update ``made`` for one statement of straight-line code (False: not understood)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], ast.Name):
        t, value = stmt.targets[0].id, stmt.value
        if _may_alias(value, made, calls):
            made.pop(t, None)
        else:  # a name made before is the same array; any other value a new one
            made[t] = made[value.id] if isinstance(value, ast.Name) else next(fresh)
        return True
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Expr)):
        # (writes into arrays keep what they are; a call's effects rebind no name; a
        # name augmented in place stays its array, one rebound by it a new value)
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                if isinstance(stmt, ast.AugAssign) and stmt.target is node:
                    continue
                made.pop(node.id, None)
        return not any(isinstance(n, (ast.NamedExpr, ast.Lambda)) for n in ast.walk(stmt))
    return False


def _loop(loop: ast.For, made: dict[str, int], fresh: itertools.count,
          calls: frozenset = frozenset()) -> bool:
    """What holds after any number of the loop's iterations (none included): a name is
    made after it where it is before the loop and at every iteration's end, and two
    names may be one array where they may be at any of those points."""
    if loop.orelse or not isinstance(loop.target, ast.Name):
        return False
    made.pop(loop.target.id, None)
    state = dict(made)
    for _ in range(len(loop.body) + 2):
        after = dict(state)
        for stmt in loop.body:
            if not _step(stmt, after, fresh, calls):
                return False
        keys = [k for k in state if k in after]
        group = {k: k for k in keys}

        def root(k: str) -> str:
            while group[k] != k:
                k = group[k]
            return k

        for table in (state, after):
            first: dict[int, str] = {}
            for k in keys:
                if table[k] in first:
                    group[root(k)] = root(first[table[k]])
                else:
                    first[table[k]] = k
        numbers = {r: next(fresh) for r in {root(k) for k in keys}}
        merged = {k: numbers[root(k)] for k in keys}
        if _partition(merged) == _partition(state):
            made.clear()
            made.update(merged)
            return True
        state = merged
    return False


def _partition(made: dict[str, int]) -> set[frozenset[str]]:
    by: dict[int, set[str]] = {}
    for k, v in made.items():
        by.setdefault(v, set()).add(k)
    return {frozenset(c) for c in by.values()}


def _fresh_leaves(value: ast.AST | None, made: dict[str, int],
                  calls: frozenset = frozenset()) -> bool:
    if value is None:
        return False
    leaves = value.elts if isinstance(value, (ast.Tuple, ast.List)) else \
        value.values if isinstance(value, ast.Dict) else [value]
    if isinstance(value, ast.Dict) and any(k is None for k in value.keys):
        return False
    arrays = []
    for leaf in leaves:
        while isinstance(leaf, (ast.Subscript, ast.Attribute)):
            leaf = leaf.value
        if isinstance(leaf, ast.Name):
            arrays.append(made.get(leaf.id, leaf.id))
    if len(set(arrays)) < len(arrays):  # one array returned twice (or a view)
        return False
    return not any(_may_alias(leaf, made, calls) or isinstance(leaf, (ast.Tuple, ast.List,
                                                                 ast.Dict))
                   for leaf in leaves)
