"""Cotangents that are zero whatever the inputs: proven on an e-graph, then dropped.

The cotangent reaching a value subtracted along an axis before a softmax (the row max
of ``x - np.max(x, axis=1, keepdims=True)``, the max of ``e / np.sum(e)``, the ``m`` of
a logsumexp written out) is ``sum over the axis of (g - sum(g) * softmax)``: zero for
every ``g``, because the result does not depend on the shift. JAX's ``logsumexp`` says
so with a ``stop_gradient``; here it is proven from the statements' definitions, for
whichever spelling the user chose, with the identities in ``IDENTITIES`` (each one
holds elementwise in exact arithmetic for every value of the shapes its side condition
admits: tests/test_zero_identities.py checks them on random, NaN/inf and size-0/size-1
arrays). The backward of ``np.max`` (``winners``, ``count``) then adds exactly zero
and is not computed.

Names are read in SSA form (``e_bar`` rebound is a new name; an array written into,
or a name that may alias one, is a new unknown after each write), so a proof about one
binding is never applied to another.
"""

from __future__ import annotations

import ast
import itertools
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .calls import MAY_ALIAS, call_name, written
from .terms import OPS, language, reduction, release, summed


@dataclass(frozen=True)
class Identity:
    """``lhs == rhs`` (terms over ``a b c``, a reduction ``r``, a shape ``k``) where
    ``when`` holds (shape conditions over the same variables, ``lhs`` included)."""

    name: str
    lhs: Callable[..., Any]
    rhs: Callable[..., Any]
    when: Callable[..., list] = lambda s, a, b, c, r, k, lhs: []


# o: the operations (egglog's, or NumPy's in the tests); s: the shape conditions.
IDENTITIES = (
    # sums are linear; what is constant along the summed axes moves out of them
    Identity("sum of a sum", lambda o, a, b, c, r, k: o.rsum(a + b, r),
             lambda o, a, b, c, r, k: o.rsum(a, r) + o.rsum(b, r),
             lambda s, a, b, c, r, k, lhs: [s.same(a, b)]),
    Identity("sum of a difference", lambda o, a, b, c, r, k: o.rsum(a - b, r),
             lambda o, a, b, c, r, k: o.rsum(a, r) - o.rsum(b, r),
             lambda s, a, b, c, r, k, lhs: [s.same(a, b)]),
    Identity("sum of a negation", lambda o, a, b, c, r, k: o.rsum(-a, r),
             lambda o, a, b, c, r, k: -o.rsum(a, r)),
    Identity("constant factor out of a sum", lambda o, a, b, c, r, k: o.rsum(a * b, r),
             lambda o, a, b, c, r, k: a * o.rsum(b, r),
             lambda s, a, b, c, r, k, lhs: [s.constant_along(a, b, r)]),
    Identity("constant divisor out of a sum", lambda o, a, b, c, r, k: o.rsum(a / b, r),
             lambda o, a, b, c, r, k: o.rsum(a, r) / b,
             lambda s, a, b, c, r, k, lhs: [s.constant_along(b, a, r)]),
    # products and quotients
    Identity("products commute", lambda o, a, b, c, r, k: a * b,
             lambda o, a, b, c, r, k: b * a),
    Identity("sums commute", lambda o, a, b, c, r, k: a + b,
             lambda o, a, b, c, r, k: b + a),
    Identity("a quotient times", lambda o, a, b, c, r, k: (a / b) * c,
             lambda o, a, b, c, r, k: (a * c) / b),
    Identity("a product over one factor", lambda o, a, b, c, r, k: (a * b) / b,
             lambda o, a, b, c, r, k: o.bcast(a, k),
             lambda s, a, b, c, r, k, lhs: [s.shape_is(lhs, k)]),
    Identity("products distribute over sums", lambda o, a, b, c, r, k: (a + b) * c,
             lambda o, a, b, c, r, k: a * c + b * c),
    Identity("products distribute over differences", lambda o, a, b, c, r, k: (a - b) * c,
             lambda o, a, b, c, r, k: a * c - b * c),
    # signs
    Identity("a negated factor", lambda o, a, b, c, r, k: (-a) * b,
             lambda o, a, b, c, r, k: -(a * b)),
    Identity("adding a negation", lambda o, a, b, c, r, k: a + (-b),
             lambda o, a, b, c, r, k: a - b),
    Identity("double negation", lambda o, a, b, c, r, k: -(-a),
             lambda o, a, b, c, r, k: a),
    # broadcasts: an operand broadcast to the other's shape is the operand itself
    *[Identity(f"a broadcast {side} {sym}",
               lambda o, a, b, c, r, k, op=op, left=left:
               op(o.bcast(a, k), b) if left else op(b, o.bcast(a, k)),
               lambda o, a, b, c, r, k, op=op, left=left: op(a, b) if left else op(b, a),
               lambda s, a, b, c, r, k, lhs: [s.shape_is(b, k)])
      for (sym, op), (side, left) in itertools.product(
          (("+", lambda x, y: x + y), ("-", lambda x, y: x - y),
           ("*", lambda x, y: x * y), ("/", lambda x, y: x / y)),
          (("left of", True), ("right of", False)))],
    Identity("a broadcast to its own shape", lambda o, a, b, c, r, k: o.bcast(a, k),
             lambda o, a, b, c, r, k: a,
             lambda s, a, b, c, r, k, lhs: [s.shape_is(a, k)]),
)

# Zeros (``is_zero``): a - a; a sum, negation, broadcast, multiple or quotient of a
# zero; a sum or difference of zeros.


# ---- the shapes one call recorded, as ids -------------------------------------------


class Shapes:
    """Shape ids and the tables the identities' side conditions read, closed under
    broadcasting and the reductions the code does (up to a bound: a missing entry
    only means a condition that does not hold)."""

    def __init__(self) -> None:
        self.ids: dict[tuple, int] = {(): 0}
        self.reductions: dict[tuple, int] = {}

    def shape(self, s: tuple) -> int:
        return self.ids.setdefault(tuple(s), len(self.ids))

    def reduction(self, r: tuple) -> int:
        return self.reductions.setdefault(r, len(self.reductions))

    @staticmethod
    def reduced(s: tuple, r: tuple) -> tuple | None:
        axes, keepdims, ndim = r
        if ndim is not None and len(s) != ndim:
            return None
        if axes is None:
            return (1,) * len(s) if keepdims else ()
        if any(a >= len(s) for a in axes):
            return None
        return tuple(1 if i in axes else n for i, n in enumerate(s)
                     if keepdims or i not in axes)

    @staticmethod
    def broadcast(s: tuple, t: tuple) -> tuple | None:
        try:
            return tuple(np.broadcast_shapes(s, t))
        except ValueError:
            return None

    def constant_along(self, s: tuple, t: tuple, r: tuple) -> bool:
        """Is ``sum_r(a * b) == a * sum_r(b)`` for every ``a`` of shape ``s`` and
        ``b`` of shape ``t``?  ``a`` broadcasts into ``b`` without changing its shape,
        has one element along every summed axis, and lines up with the sum's result as
        with ``b`` (kept dimensions; otherwise ``a`` has one element)."""
        out = self.reduced(t, r)
        if out is None or self.broadcast(s, t) != t or self.broadcast(s, out) != out:
            return False
        axes, keepdims, _ = r
        if not keepdims:
            return math.prod(s) == 1 and len(s) <= len(out)
        lead = len(t) - len(s)
        return all(i < lead or s[i - lead] == 1 for i in axes)

    def close(self, limit: int = 48) -> None:
        for _ in range(2):
            shapes = list(self.ids)
            for s, t in itertools.product(shapes, shapes):
                b = self.broadcast(s, t)
                if b is not None and len(self.ids) < limit:
                    self.shape(b)
            for s, r in itertools.product(list(self.ids), list(self.reductions)):
                out = self.reduced(s, r)
                if out is not None and len(self.ids) < limit:
                    self.shape(out)

    def facts(self, L: Any) -> list:
        from egglog import i64, set_

        out = []
        shapes = list(self.ids.items())
        for (s, i), (t, j) in itertools.product(shapes, shapes):
            b = self.broadcast(s, t)
            if b in self.ids:
                out.append(set_(L.bshape(i64(i), i64(j))).to(i64(self.ids[b])))
        for (s, i), (r, q) in itertools.product(shapes, self.reductions.items()):
            out_shape = self.reduced(s, r)
            if out_shape in self.ids:
                out.append(set_(L.rshape(i64(i), i64(q))).to(i64(self.ids[out_shape])))
            for t, j in shapes:
                if self.constant_along(s, t, r):
                    out.append(L.inv(i64(i), i64(j), i64(q)))
        return out


class _Conditions:
    """The identities' side conditions as egglog facts."""

    def __init__(self, L: Any, ki: Any, kj: Any) -> None:
        self.L, self.i, self.j = L, ki, kj

    def same(self, a: Any, b: Any) -> list:
        from egglog import eq

        return [eq(self.L.shape(a)).to(self.L.shape(b))]

    def constant_along(self, a: Any, b: Any, r: Any) -> list:
        from egglog import eq

        return [eq(self.L.shape(a)).to(self.i), eq(self.L.shape(b)).to(self.j),
                self.L.inv(self.i, self.j, r)]

    def shape_is(self, x: Any, k: Any) -> list:
        from egglog import eq

        return [eq(self.L.shape(x)).to(k)]


def _rules(L: Any) -> list:
    from egglog import eq, f64, i64, rewrite, rule, set_, union, var, vars_  # noqa: F401

    T = L.Term
    a, b, c = vars_("a b c", T)
    i, j, k, r = vars_("i j k r", i64)
    x = var("x", f64)
    ops = L
    cond = _Conditions(L, i, j)
    out = [
        rule(eq(c).to(T(x))).then(set_(L.shape(c)).to(i64(0))),
        rule(eq(c).to(-a), eq(L.shape(a)).to(k)).then(set_(L.shape(c)).to(k)),
        rule(eq(c).to(L.bcast(a, k))).then(set_(L.shape(c)).to(k)),
        rule(eq(c).to(L.rsum(a, r)), eq(L.shape(a)).to(i), eq(L.rshape(i, r)).to(k))
        .then(set_(L.shape(c)).to(k)),
        *[rule(eq(c).to(op(a, b)), eq(L.shape(a)).to(i), eq(L.shape(b)).to(j),
               eq(L.bshape(i, j)).to(k)).then(set_(L.shape(c)).to(k))
          for op in (lambda p, q: p + q, lambda p, q: p - q, lambda p, q: p * q,
                     lambda p, q: p / q)],
        rewrite(-T(x)).to(T(-x)),
        rule(eq(c).to(a - a)).then(L.is_zero(c)),
        rule(eq(c).to(T(0.0))).then(L.is_zero(c)),
        *[rule(eq(c).to(f(a)), L.is_zero(a)).then(L.is_zero(c))
          for f in (lambda p: -p, lambda p: L.rsum(p, r), lambda p: L.bcast(p, k),
                    lambda p: p * b, lambda p: p / b)],
        *[rule(eq(c).to(f(a, b)), L.is_zero(a), L.is_zero(b)).then(L.is_zero(c))
          for f in (lambda p, q: p + q, lambda p, q: p - q)],
    ]
    lhs_var = var("lhs", T)
    for ident in IDENTITIES:
        lhs, rhs = ident.lhs(ops, a, b, c, r, k), ident.rhs(ops, a, b, c, r, k)
        conditions = [f for group in ident.when(cond, a, b, c, r, k, lhs_var)
                      for f in group]
        if conditions:
            out.append(rule(eq(lhs_var).to(lhs), *conditions)
                       .then(union(lhs_var).with_(rhs)))
        else:
            out.append(rewrite(lhs).to(rhs))
    return out


# ---- names in SSA form --------------------------------------------------------------


def _fresh(value: ast.AST) -> bool:
    """Is ``value`` a new array (never a view of, or the object held by, a name)?"""
    return isinstance(value, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.Constant)) or (
        isinstance(value, ast.Call) and call_name(value) not in MAY_ALIAS
        and isinstance(value.func, ast.Attribute))


def _ssa(fn: ast.FunctionDef, mutated: set[str]):
    """(statement, the version of each name it reads, the name it defines or None, its
    new version): a plain ``name = value`` defines a new version; any other binding
    makes a new unknown one. Bindings that may share an array (``a = b``, views,
    anything bound in a loop with what the loop reads) form groups; a write into an
    array makes a new unknown version of every name whose binding is in its group."""
    version: dict[str, int] = defaultdict(int)
    parent: dict[str, str] = {}

    def find(k: str) -> str:
        while parent.get(k, k) != k:
            k = parent[k]
        return k

    def join(p: str, q: str) -> None:
        parent[find(p)] = find(q)

    def binding(n: str) -> str:
        return f"{n}@{version[n]}"

    for stmt in fn.body:
        before = dict(version)
        defined = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name):
            defined = stmt.targets[0].id
        reads = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Load)}
        bound = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)
                 and not isinstance(n.ctx, ast.Load)}
        for name in bound:
            version[name] += 1
        if defined is None or not _fresh(stmt.value):  # type: ignore[attr-defined]
            for name in bound:  # may hold (a view of) what the statement reads
                for r in reads:
                    join(binding(name), f"{r}@{before.get(r, 0)}")
        for w in written(stmt):
            group = find(binding(w))
            for name in [m for m in list(version) if find(binding(m)) == group]:
                old = binding(name)
                version[name] += 1
                join(binding(name), old)
        yield stmt, defaultdict(int, before), defined, version[defined] if defined else 0


# Rounds of rule application: enough for the softmax spellings of tests/zero_fns.py
# (about 5 ms each), bounded so that a large function never stalls.
ROUNDS = 12


# ---- the proof ------------------------------------------------------------------------


def zero_cotangents(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any],
                    mutated: set[str]) -> set[tuple[str, int]]:
    """Cotangents (``*_bar`` bound to a sum) zero in exact arithmetic whatever the
    inputs, as (name, SSA version)."""
    L = language()
    if L is None:
        return set()
    from egglog import i64, union

    T = L.Term
    shapes = Shapes()
    leaves: dict[str, tuple] = {}
    opaque: dict[str, str] = {}

    def to_term(node: ast.AST, seen: dict[str, int]) -> Any:
        def leaf(key: str, f: Any) -> Any:
            if f is None or not np.issubdtype(f[1], np.floating):
                raise ValueError
            leaves[key] = f[0]
            shapes.shape(f[0])
            return T.var(key)

        def go(n: ast.AST) -> Any:
            if isinstance(n, ast.Constant) and type(n.value) in (int, float):
                return T(float(n.value))
            if isinstance(n, ast.Call) and call_name(n) in ("float64", "float32") and \
                    len(n.args) == 1 and not n.keywords and isinstance(
                        n.args[0], ast.Constant) and type(n.args[0].value) in (int, float):
                return T(float(n.args[0].value))  # np.float64(1.0): the number
            if isinstance(n, ast.Name):
                return leaf(f"{n.id}@{seen[n.id]}", fact(n))
            if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
                return -go(n.operand)
            if isinstance(n, ast.BinOp) and type(n.op) in OPS:
                p, q = go(n.left), go(n.right)
                return {ast.Add: p + q, ast.Sub: p - q, ast.Mult: p * q,
                        ast.Div: p / q}[type(n.op)]
            f = fact(n)
            operand = summed(n)
            if operand is not None:
                g = fact(operand)
                red = reduction(n, len(g[0]) if g is not None else None)
                if red is not None:
                    return L.rsum(go(red[0]), i64(shapes.reduction(red[1])))
            if isinstance(n, ast.Call) and call_name(n) == "broadcast_to" and \
                    len(n.args) == 2 and f is not None:
                return L.bcast(go(n.args[0]), i64(shapes.shape(f[0])))
            if not isinstance(n, (ast.Call, ast.Subscript, ast.Attribute, ast.BinOp)):
                raise ValueError
            # any other floating value: one unknown per expression and versions read
            reads = sorted({f"{m.id}@{seen[m.id]}" for m in ast.walk(n)
                            if isinstance(m, ast.Name)})
            key = opaque.setdefault(ast.dump(n) + repr(reads), f"o{len(opaque)}_")
            return leaf(key, f)

        return go(node)

    definitions, candidates = [], []
    zeros: dict[str, int] = {}  # a name bound to np.zeros(...): its version
    scattered = None  # (name, the version it had, the added value's term) of a one-hot
    for stmt, seen, defined, v in _ssa(fn, mutated):
        if scattered is not None:
            # `z = np.zeros(s); z[i] += v` with i one integer and v a number: whatever
            # the index, the elements sum to v exactly (v + zeros, in IEEE too)
            z, before, added = scattered
            if seen[z] == before + 1 and f"{z}@{before}" in leaves:
                definitions.append(union(L.rsum(T.var(f"{z}@{seen[z]}"), i64(
                    shapes.reduction((None, False, None))))).with_(added))
                leaves[f"{z}@{seen[z]}"] = leaves[f"{z}@{before}"]
            scattered = None
        one_hot = _one_hot(stmt, zeros, seen, fact)
        if one_hot is not None:
            try:
                scattered = (one_hot[0], seen[one_hot[0]], to_term(one_hot[1], seen))
            except ValueError:
                pass
        if defined is None:
            continue
        if isinstance(stmt.value, ast.Call) and call_name(stmt.value) == "zeros":  # type: ignore[attr-defined]
            zeros[defined] = v
        else:
            zeros.pop(defined, None)
        try:
            term = to_term(stmt.value, seen)  # type: ignore[attr-defined]
        except ValueError:
            continue
        name = f"{defined}@{v}"
        definitions.append(union(T.var(name)).with_(term))
        if defined.endswith(("_bar", "_bar_dot")):  # (a jvp's tangent of a cotangent)
            candidates.append((defined, v))
        f = fact(stmt.value)  # type: ignore[attr-defined]
        if f is not None:
            leaves[name] = f[0]
            shapes.shape(f[0])
    if not candidates:
        return set()
    return _prove(L, definitions, leaves, shapes, candidates)


def _prove(L: Any, definitions: list, leaves: dict[str, tuple], shapes: Shapes,
           candidates: list[tuple[str, int]]) -> set[tuple[str, int]]:
    """The candidates the e-graph of the definitions, shapes and rules proves zero."""
    from egglog import EGraph, i64, set_

    T = L.Term
    shapes.close()
    eg = EGraph()
    try:
        try:
            eg.register(*definitions, *shapes.facts(L))
            eg.register(*[set_(L.shape(T.var(n))).to(i64(shapes.ids[s]))
                          for n, s in leaves.items()])
            eg.register(*_rules(L))
            eg.run(ROUNDS)
        except Exception:  # a shape conflict: facts that disagree prove nothing
            return set()
        zero = set()
        for name, v in candidates:
            try:
                eg.check(L.is_zero(T.var(f"{name}@{v}")))
            except Exception:
                continue
            zero.add((name, v))
        return zero
    finally:
        release(eg)


def _one_hot(stmt: ast.stmt, zeros: dict[str, int], seen: dict[str, int],
             fact: Callable[[ast.AST], Any]) -> tuple[str, ast.AST] | None:
    """``z[i] += v`` into ``z`` as ``np.zeros`` made it (the version it is read at),
    ``i`` a 0-d integer and ``v`` a floating scalar (facts of the signature): (z, v)."""
    if not (isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add)
            and isinstance(stmt.target, ast.Subscript)
            and isinstance(stmt.target.value, ast.Name)):
        return None
    z = stmt.target.value.id
    fi, fv, fz = fact(stmt.target.slice), fact(stmt.value), fact(stmt.target.value)
    if zeros.get(z) != seen[z] or fi is None or fi[0] != () or \
            not np.issubdtype(fi[1], np.integer) or fv is None or fv[0] != () or \
            fz is None or not fz[0] or not np.issubdtype(fv[1], np.floating):
        return None
    return z, stmt.value


def drop_zero_cotangents(fn: ast.FunctionDef, zero: set[tuple[str, int]],
                         fact: Callable[[ast.AST], Any], mutated: set[str]) -> None:
    """A cotangent proven zero contributes nothing: a sum's term whose numerator has it
    as a factor is dropped (where the other term already has the sum's shape and
    dtype), and dead-code removal then takes the statements that computed it."""
    zero = set(zero)
    for stmt, seen, defined, version in list(_ssa(fn, mutated)):

        def has_zero_factor(node: ast.AST) -> bool:
            if isinstance(node, ast.Name):
                return (node.id, seen[node.id]) in zero  # noqa: B023
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
                return has_zero_factor(node.operand)
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                return has_zero_factor(node.left) or has_zero_factor(node.right)
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                return has_zero_factor(node.left)
            if isinstance(node, ast.Call) and call_name(node) == "where" and \
                    isinstance(node.func, ast.Attribute) and len(node.args) == 3:
                # (np.max's spread: np.where(winners, share, share * 0.0))
                return has_zero_factor(node.args[1]) and has_zero_factor(node.args[2])
            return False

        if defined is not None and has_zero_factor(stmt.value):  # type: ignore[attr-defined]
            zero.add((defined, version))  # (forward mode splits `g / count * w` in steps)
        if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.BinOp):
            continue
        v = stmt.value
        if not isinstance(v.op, (ast.Add, ast.Sub)):
            continue
        out = fact(v)
        if out is not None and has_zero_factor(v.right) and fact(v.left) == out:
            stmt.value = v.left
        elif out is not None and isinstance(v.op, ast.Add) and \
                has_zero_factor(v.left) and fact(v.right) == out:
            stmt.value = v.right
    # ``x = x`` is left where a term was dropped from ``x = x + ...``
    fn.body = [s for s in fn.body if not (
        isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.value, ast.Name)
        and isinstance(s.targets[0], ast.Name) and s.targets[0].id == s.value.id)]
