"""Forward mode's tangent of a statement by its primitive's JVP rule: the rule
inlined once per operand that carries a tangent, the contributions summed (on the
paths where each tangent is bound), and the rules' code tidied (``x * 1.0`` is
``x``)."""

from __future__ import annotations

import ast
import inspect
from typing import Any

import numpy as np

from .. import syntax
from ..emit.code import Block, Line
from ..errors import NonDifferentiableError
from ..ir.kinds import LEAF, Tree
from ..ir.nodes import KEYWORD_OPERANDS, Const, Let, Var
from ..primitives import PRIMITIVES
from ..primitives.registry import arg_slots, refuse_underived
from .inline import Array, located_refusals
from .paths import in_order, simplified, within
from .replay import paren

# families whose operands broadcast against each other: a tangent contribution from
# one operand may lack the shape another (inactive) operand gives the output
_BROADCASTING = {"binary", "elementwise", "special", "comparison"}


class JvpRules:
    """Inlines JVP rules for one forward pass (``f``, whose tangents they compute)."""

    def __init__(self, f: Any) -> None:  # (the forward pass's forward_state.ForwardState)
        self.f = f

    def inline(self, s: Let, out: list[Any]) -> None:
        """Inline the primitive's JVP rule for each argument carrying a tangent."""
        prim = PRIMITIVES[s.prim]
        refuse_underived(prim, s, [j for j, a in enumerate(s.args) if self.f.is_active(a)])
        slots = arg_slots(s)
        bindings: dict[str, Any] = {"ans": Var(s.target)}
        for pname in prim.params:
            p = prim.signature.parameters[pname]
            if p.kind is p.VAR_POSITIONAL:
                bindings[pname] = tuple(a for a, (n, _) in zip(s.args, slots) if n == pname)
            elif pname in s.params:
                bindings[pname] = s.params[pname]
            elif p.default is p.empty or pname in s.params.get(KEYWORD_OPERANDS, ()):
                arg = s.args[[n for n, _ in slots].index(pname)]
                bindings[pname] = Array(arg) if self.f.is_active(arg) else arg
        contributions: list[list[ast.expr]] = []
        conds: list[frozenset | None] = []  # where each contribution's operand has one
        deferred: list[list[Any]] = []  # a conditional contribution's rule statements
        single = not isinstance(self.f.kind(s.target), Tree)
        for pname in prim.diff:
            positions = [j for j, (n, _) in enumerate(slots) if n == pname]
            if not any(self.f.is_active(s.args[j]) for j in positions):
                continue
            rule = prim.jvps.get(pname)
            if rule is None:
                raise NonDifferentiableError(
                    f"`{s.prim}` has no forward-mode rule", s.loc,
                    "compute this value from its inputs without this function",
                )
            p = prim.signature.parameters[pname]
            cond = None
            if p.kind is p.VAR_POSITIONAL or not single or not isinstance(
                    self.f.kind(s.args[positions[0]].name), type(LEAF)):
                for j in positions:  # (several operands, or several results: zeros)
                    self.f.settle(s.args[j], out)
            else:
                cond = self.f.cond(s.args[positions[0]].name)
            if p.kind is p.VAR_POSITIONAL:  # all the operands' tangents, as a tuple
                parts = [self.f.whole(s.args[j]) for j in positions]
                tangent = syntax.parse("(" + ", ".join(parts) + ",)", mode="eval").body
            else:
                tangent = syntax.parse(self.f.whole(s.args[positions[0]]), mode="eval").body
            stmts, results = self.f.inliner.inline(
                rule, {**bindings, pname + "_dot": tangent}, {}, None
            )
            stmts = [tidy(st) for st in located_refusals(stmts, s.loc)]
            results = [tidy(r) for r in results]
            if cond is None:
                out += [_rule_item(st) for st in stmts]
                deferred.append([])
            else:  # this operand's tangent is bound on those paths only: its part too
                deferred.append([_rule_item(st) for st in stmts])
            contributions.append(results)
            conds.append(cond)
        if not contributions:
            return
        if any(c is not None for c in conds):
            self._conditional_sum(s, prim, contributions, conds, deferred, out)
            return
        kind = self.f.kind(s.target)
        if isinstance(kind, Tree):  # several results: a rule may return them as one
            n = len(kind.keys)
            for k, c in enumerate(contributions):
                if len(c) == 1 and (n != 1 or prim.results is not None):
                    whole = self.f.names.fresh(f"{s.target}_dot")
                    out.append(Line(f"{whole} = {ast.unparse(c[0])}"))
                    contributions[k] = [
                        syntax.parse(f"{whole}[{i}]", mode="eval").body for i in range(n)
                    ]
        n = len(contributions[0])
        paths = [()] if n == 1 and not isinstance(kind, Tree) else [(i,) for i in range(n)]
        for k, path in enumerate(paths):
            text = " + ".join(paren(ast.unparse(c[k])) for c in contributions)
            text = ast.unparse(tidy(syntax.parse(text, mode="eval")))
            if prim.family in _BROADCASTING and self._may_lack_shape(s, text):
                text = f"np.broadcast_to({text}, np.shape({s.target}))"
            self.f.bind(s.target, path, text, out)

    def _conditional_sum(self, s: Let, prim: Any, contributions: list, conds: list,
                         deferred: list, out: list[Any]) -> None:
        """The tangent of ``s`` where some operands' tangents are bound on some paths
        only: on each path, the sum of the parts there (none: unbound there too), each
        part's rule statements with it."""
        tests = in_order({t for c in conds if c for conj in c for t, _ in conj}
                          - {t for t, _ in self.f.context}, self.f.facts.test_order)
        name = self.f.join_names.get(s.target) or self.f.dot_name(s.target)

        def leaf(taken: frozenset) -> list[Any]:
            kept = [k for k, cond in enumerate(conds)
                    if cond is None or any(conj <= taken for conj in cond)]
            here = [contributions[k][0] for k in kept]
            if not here:
                return []
            steps = [item for k in kept for item in deferred[k]]
            text = ast.unparse(tidy(syntax.parse(
                " + ".join(paren(ast.unparse(e)) for e in here), mode="eval")))
            if prim.family in _BROADCASTING and self._may_lack_shape(s, text):
                text = f"np.broadcast_to({text}, np.shape({s.target}))"
            return steps + [Line(f"{name} = {text}")]

        def tree(k: int, taken: frozenset) -> list[Any]:
            if k == len(tests):
                return leaf(taken)
            on = tree(k + 1, taken | {(tests[k], True)})
            off = tree(k + 1, taken | {(tests[k], False)})
            if on == off and on:
                return on
            for code in (on, off):
                if not code:  # unbound on this path: the zeros can go here
                    self.f.holes.setdefault(name, []).append((code, self.f.zeros(s.target)))
            return [Block(f"if {tests[k]}:", on, off)]

        out += tree(0, self.f.context)
        self.f.owned.add(name)
        self.f.tan.setdefault(s.target, {})[()] = name
        if any(c is None for c in conds):
            self.f.when.pop((s.target, ()), None)
        else:
            union = simplified(frozenset().union(*conds))
            if within(union, self.f.context) is None:
                self.f.when.pop((s.target, ()), None)
            else:
                self.f.when[(s.target, ())] = self.f.here(union)

    def _may_lack_shape(self, s: Let, text: str) -> bool:
        """Could the tangent miss axes an operand without a tangent broadcast in?"""
        names = {n.id for n in ast.walk(syntax.parse(text, mode="eval")) if isinstance(n, ast.Name)}
        if s.target in names:
            return False
        for a in s.args:
            if self.f.is_active(a) or self.f.facts.is_scalar(a):
                continue
            if isinstance(a, Const) or a.name not in names:
                return True
        return False


class _Tidy(ast.NodeTransformer):
    """Small rewrites that make inlined rules read as written by hand:
    ``a + -b`` is ``a - b``; ``np.sum(x, axis=None, keepdims=False)`` is ``np.sum(x)``."""

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        self.generic_visit(node)
        if isinstance(node.op, ast.Add) and isinstance(node.right, ast.UnaryOp) and \
                isinstance(node.right.op, ast.USub):
            return ast.BinOp(node.left, ast.Sub(), node.right.operand)
        return node

    def visit_Call(self, node: ast.Call) -> Any:
        self.generic_visit(node)
        fn = _numpy_function(node.func)
        if fn is None or not node.keywords:
            return node
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            return node
        kept = []
        for kw in node.keywords:
            p = params.get(kw.arg) if kw.arg else None
            if p is not None and kw.arg == "keepdims" and p.default is np._NoValue and \
                    isinstance(kw.value, ast.Constant) and kw.value.value is False:
                continue  # NumPy's "not given" means False
            if (p is not None and isinstance(kw.value, ast.Constant)
                    and p.default is not inspect.Parameter.empty
                    and type(p.default) is type(kw.value.value)
                    and p.default == kw.value.value):
                continue  # the default, spelled out
            kept.append(kw)
        node.keywords = kept
        return node


def _numpy_function(func: ast.expr) -> Any:
    path = []
    while isinstance(func, ast.Attribute):
        path.append(func.attr)
        func = func.value
    if not (isinstance(func, ast.Name) and func.id == "np"):
        return None
    obj: Any = np
    for part in reversed(path):
        obj = getattr(obj, part, None)
    return obj


def tidy(node: Any) -> Any:
    return ast.fix_missing_locations(_Tidy().visit(node))


def _rule_item(st: ast.stmt) -> Any:
    if isinstance(st, ast.If):
        return Block(f"if {ast.unparse(st.test)}:", [_rule_item(x) for x in st.body],
                     [_rule_item(x) for x in st.orelse])
    return Line(ast.unparse(st), keep=not isinstance(st, ast.Assign) or any(
        not isinstance(t, ast.Name) for t in st.targets))
