"""Reverse mode's backward of a statement by its primitive's VJP rule: the rule
inlined with its parameters bound to the statement's operands and ``g`` to the
cotangent, its locals named after the cotangents they compute, and each result
added to its argument's cotangent."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

from ..emit.code import Block, Line
from ..errors import NonDifferentiableError, TransformError
from ..ir.kinds import LEAF, Seq, Tree, leaf_paths, literal, path_text
from ..ir.nodes import KEYWORD_OPERANDS, Const, Let, Var
from ..primitives import PRIMITIVES
from ..primitives.registry import arg_slots, refuse_underived
from .batched_masks import made_a_mask
from .inline import Array, located_refusals
from .replay import is_simple


class VjpRules:
    """Inlines VJP rules for one reverse pass (``r``, whose cotangents it adds to)."""

    def __init__(self, r: Any) -> None:  # (the reverse pass's state, reverse_state.ReverseState)
        self.r = r

    def backward(self, s: Let, g: dict, adj: dict, active_args) -> list[Any]:
        """Inline the primitive's VJP rule; hand each active argument its cotangent."""
        out: list[Any] = []
        prim = PRIMITIVES[s.prim]
        if prim.vjp is None:
            raise NonDifferentiableError(
                f"`{s.prim}` has no reverse-mode rule", s.loc,
                "compute this value from its inputs without this function",
            )
        refuse_underived(prim, s, [i for i, _ in active_args])
        slots = arg_slots(s)
        bindings = self._rule_bindings(s, self._cotangent_text(s, g, out), slots)
        locals_hint = self._rule_hints(s, slots, adj, active_args)
        result_hints = [locals_hint.get(p + "_bar") for p in prim.diff]
        stmts, results = self.r.inliner.inline(prim.vjp, bindings, locals_hint, result_hints)
        stmts = located_refusals(stmts, s.loc)
        if len(results) != len(prim.diff):
            raise TypeError(f"VJP rule of {s.prim} returned {len(results)} cotangents, "
                            f"expected {len(prim.diff)}")
        positions = [j for j, (n, _) in enumerate(slots) if n in prim.diff]
        if len(positions) == len(prim.diff):
            for k, j in enumerate(positions):
                others = s.args[:j] + s.args[j + 1 :]
                if others and all(self.r.facts.is_scalar(o) for o in others) and not any(
                        self._complex_scalar(o) for o in others):
                    # every other argument has shape (): nothing broadcast against it
                    # (kept beside a complex constant: a real operand's part is real)
                    results[k] = _drop_unbroadcast(results[k])
        wanted: list[tuple[str, ast.expr, Any]] = []  # (var, rule result, element)
        for i, name in active_args:
            pname, sub = slots[i]
            if pname in prim.diff:
                wanted.append((name, results[prim.diff.index(pname)], sub, pname))
        stmts = _prune(stmts, _names_in([e for _, e, _, _ in wanted]))
        out += [_item(st) for st in stmts]
        defined = {t for st in stmts for n in ast.walk(st) for t in _targets(n)}
        bound: dict[str, str] = {}  # sequence-valued results, bound to a name once
        for name, e, sub, pname in wanted:
            self._hand_out(s, name, ast.unparse(e), sub, pname, (defined, bound), adj, out)
        return out

    def _complex_scalar(self, a: Any, depth: int = 4) -> bool:
        """Is ``a`` a complex literal, or computed from one (``1 + 2j``)?  A real
        operand's cotangent beside it is the real part: its unbroadcast stays."""
        if isinstance(a, Const):
            return isinstance(a.value, complex)
        s = self.r.facts.producer.get(a.name) if isinstance(a, Var) else None
        return s is not None and depth > 0 and (s.prim == "complex" or any(
            self._complex_scalar(b, depth - 1) for b in s.args))

    def _cotangent_text(self, s: Let, g: dict, out: list[Any]) -> str:
        """The cotangent a rule reads as ``g`` (several results: their tuple, named)."""
        out_kind = self.r.facts.kinds.get(s.target, LEAF)
        if not isinstance(out_kind, Tree):
            (g_text,) = g.values()
            return g_text
        g_text = literal(
            out_kind, lambda p: g.get(p) or f"np.zeros_like({path_text(s.target, p)})"
        )
        if not is_simple(g_text):
            name = self.r.names.fresh(f"{s.target}_bar")
            out.append(Line(f"{name} = {g_text}"))
            g_text = name
        return g_text

    def _rule_bindings(self, s: Let, g_text: str, slots: list) -> dict[str, Any]:
        """What the rule's parameters are bound to (an active operand as an Array)."""
        prim = PRIMITIVES[s.prim]
        bindings: dict[str, Any] = {"g": ast.Name(g_text, ast.Load()), "ans": Var(s.target)}
        for pname in prim.params:
            p = prim.signature.parameters[pname]
            if p.kind is p.VAR_POSITIONAL:
                bindings[pname] = tuple(
                    a for a, (n, _) in zip(s.args, slots) if n == pname
                )
            elif pname in s.params:
                bindings[pname] = s.params[pname]
                if s.prim == "setitem" and pname == "index":  # (ints, masks never repeat)
                    index = s.params[pname]
                    bindings[pname] = replace(index, ints=tuple(
                        a.name for a in index.atoms()
                        if isinstance(a, Var) and a.name in self.r.facts.int_vars),
                        mask=len(index.items) == 1 and made_a_mask(
                            self.r.facts.producer, index.items[0]))
            elif p.default is p.empty or pname in s.params.get(KEYWORD_OPERANDS, ()):
                arg = s.args[[n for n, _ in slots].index(pname)]
                active = isinstance(arg, Var) and arg.name in self.r.facts.active
                bindings[pname] = Array(arg) if active else arg
        return bindings

    def _rule_hints(self, s: Let, slots: list, adj: dict, active_args) -> dict[str, Any]:
        """Names for the rule's ``x_bar`` locals: the cotangents' own names."""
        prim = PRIMITIVES[s.prim]
        locals_hint: dict[str, Any] = {}
        hinted: set[str] = set()  # np.outer(x, x): one canonical name, the other fresh
        for i, name in active_args:
            pname, sub = slots[i]
            if pname in prim.diff and sub is None and isinstance(
                self.r.facts.kinds.get(name, LEAF), type(LEAF)
            ) and name not in hinted:
                hinted.add(name)
                canonical = self.r.canonical_name(name, ())
                # first contribution: the rule's local is the cotangent itself;
                # later ones get a numbered name beside it (x_bar_2)
                locals_hint[pname + "_bar"] = (
                    canonical if name not in adj
                    else lambda c=canonical: self.r.names.fresh(c)
                )
        return locals_hint

    def _hand_out(self, s: Let, name: str, text: str, sub: Any, pname: str,
                  seen: tuple[set[str], dict[str, str]], adj: dict, out: list[Any]) -> None:
        """Add a rule's result ``text`` to the cotangent of argument ``name``
        (``seen``: the names the rule defined, sequence results bound so far)."""
        defined, bound = seen
        kind = self.r.facts.kinds.get(name, LEAF)
        if isinstance(kind, Seq) and kind.item != LEAF:
            # NumPy reads a list of tuples as one array; their cotangent would come
            # back as arrays where the tuples' slots are expected (and be lost)
            raise TransformError(
                f"`{s.prim}` reads a list whose items are containers, not arrays",
                s.loc, "append arrays to the list (e.g. `rows.append(t[0])`)",
            )
        if isinstance(kind, Seq):
            # the cotangent of a list grown in a loop: a list of its elements'
            seq = self.r.canonical_name(name, ()) if name not in adj else (
                self.r.names.fresh(f"{name}_bar")
            )
            out.append(Line(f"{seq} = list({text})"))
            if name in adj:  # (its items read too: `np.stack(hs)` and `hs[0]`)
                out += self.r.add_lists(adj[name][()], seq)
                return
            adj[name] = {(): seq}
            return
        if sub is not None or isinstance(kind, Tree):
            # a cotangent for a sequence: one element per argument, or per leaf
            if text not in bound:
                if is_simple(text):
                    bound[text] = text
                else:
                    seq = self.r.names.fresh(f"{pname}_bar")
                    out.append(Line(f"{seq} = {text}"))
                    bound[text] = seq
            base = bound[text] if sub is None else f"{bound[text]}[{sub}]"
            for path in leaf_paths(kind):
                self.r.accumulate(name, path, path_text(base, path), adj, out)
            return
        if text in defined and name not in adj and text == self.r.canonical_name(name, ()):
            adj[name] = {(): text}
            self.r.owned.add(text)
            if s.prim in ("getitem", "setitem"):
                self.r.fresh_buffers.add(text)  # the rule allocated it
            return
        self.r.accumulate(name, (), text, adj, out)


def _names_in(exprs: Any) -> set[str]:
    found: set[str] = set()
    stack = [exprs]
    while stack:
        e = stack.pop()
        if isinstance(e, list):
            stack += e
        elif isinstance(e, ast.AST):
            found |= {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}
    return found


def _targets(st: ast.stmt) -> set[str]:
    if isinstance(st, ast.Assign):
        return {t.id for t in st.targets if isinstance(t, ast.Name)}
    return set()


def _prune(stmts: list[ast.stmt], needed: set[str]) -> list[ast.stmt]:
    """Drop rule statements whose results no wanted cotangent uses."""
    kept: list[ast.stmt] = []
    needed = set(needed)
    for st in reversed(stmts):
        if isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets):
            if not (_targets(st) & needed):
                continue
            needed |= {n.id for n in ast.walk(st.value) if isinstance(n, ast.Name)}
        else:
            written = {n.id for n in ast.walk(st) if isinstance(n, ast.Name)}
            if isinstance(st, ast.If) or (written & needed):
                needed |= written
            else:
                continue
        kept.append(st)
    kept.reverse()
    return kept


def _item(st: ast.stmt) -> Any:
    """An emitted item from an inlined rule statement (an ``if`` stays a block)."""
    if isinstance(st, ast.If):
        return Block(
            f"if {ast.unparse(st.test)}:",
            [_item(s) for s in st.body],
            [_item(s) for s in st.orelse],
        )
    return Line(ast.unparse(st))


def _drop_unbroadcast(expr: ast.expr) -> ast.expr:
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "unbroadcast"
    ):
        return expr.args[0]
    return expr
