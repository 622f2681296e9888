"""Reverse mode's calls of user functions: a callee's ``*_vjp`` helper, and the
rules of ``custom_vjp`` and ``custom_jvp`` functions.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..emit.code import Line
from ..errors import MissingRuleError
from ..ir.kinds import LEAF, Seq, Tree, leaf_paths, literal, path_text
from ..ir.names import NameTable
from ..ir.nodes import Const, For, Function, If, Index, Let, Stmt, Var, walk
from ..ir.spelling import atom_text
from ..primitives.custom import checked_bwd, custom_vjp
from .analysis import callee_of, const_kind
from .module import Module, bind_object, tuple_text
from .reverse_state import ReverseState


class Calls:
    """The backward of one reverse pass's calls; ``vjp_of(callee, positions, kinds,
    module)`` names a callee's VJP helper (emitting it the first time)."""

    def __init__(self, state: ReverseState, vjp_of: Any) -> None:
        self.state = state
        self.vjp_of = vjp_of

    def call(self, s: Let, g: dict, adj: dict, active_args) -> list[Any]:
        if "custom" in s.params or "custom_bwd" in s.params:
            return self.custom(s, g, adj, active_args)
        callee = callee_of(s)
        arg_kinds = tuple(
            self.state.facts.kinds.get(a.name, LEAF) if isinstance(a, Var) else const_kind(a)
            for a in s.args
        )
        positions = tuple(i for i, _ in active_args)
        vjp_name = self.vjp_of(callee, positions, arg_kinds, self.state.module)
        out_kind = self.state.facts.kinds[s.target]
        ct = literal(out_kind, lambda p: g.get(p) or f"np.zeros_like({path_text(s.target, p)})")
        args = ", ".join(atom_text(a) for a in s.args)
        results = [self.state.names.fresh(f"{name}_bar") for _, name in active_args]
        lhs = results[0] if len(results) == 1 else ", ".join(results)
        out: list[Any] = [Line(f"{lhs} = {vjp_name}({args}, {ct})")]
        for (i, name), r in zip(active_args, results):
            kind = self.state.facts.kinds.get(name, LEAF)
            if isinstance(kind, Seq) and _items_written(self.state.fn, name):
                # (the code before writes its items' cotangents into this list: a list
                # of its own, as a transform of this code reads it)
                out.append(Line(f"{r} = list({r})"))
            self.state.accumulate_tree(name, (), {p: path_text(r, p) for p in leaf_paths(kind)}, adj, out)
        return out

    def custom(self, s: Let, g: dict, adj: dict, active_args) -> list[Any]:
        """A function with rules of its own: ``custom_vjp``'s ``bwd``, or the transpose
        of ``custom_jvp``'s rule (the rule's VJP in its tangents, which it is linear in)."""
        custom = s.params.get("custom") or s.params["custom_bwd"]
        nondiff = [atom_text(a) for i, a in enumerate(s.args) if i in custom.nondiff_argnums]
        positions = [i for i in range(len(s.args)) if i not in custom.nondiff_argnums]
        out: list[Any] = []
        if "custom_bwd" in s.params:
            # s.target holds fwd's (out, residuals); bwd maps out's cotangent to the args'
            out_kind = self.state.facts.kinds[s.target].child(0)
            ct = literal(out_kind, lambda p: g.get((0,) + p) or (
                f"np.zeros_like({path_text(s.target, (0,) + p)})"))
            _, bwd = custom.rules_for_transform()
            bwd_name = bind_object(self.state.module, bwd.__name__, checked_bwd(bwd, len(positions)),
                                   f"{custom.__name__}_bwd")
            cts = [self.state.names.fresh(f"{atom_text(s.args[i])}_bar") for i in positions]
            lhs = ", ".join(cts) + ("," if len(cts) == 1 else "")
            call_args = nondiff + [f"{s.target}[1]", ct]
            out.append(Line(f"{lhs} = {bwd_name}({', '.join(call_args)})"))
            results = dict(zip(positions, cts))
        else:
            try:
                rule = custom.rule_for_transform()
            except AttributeError as err:
                raise MissingRuleError(str(err), s.loc, "define its rule with @f.defjvp") \
                    from None
            ct = literal(self.state.facts.kinds[s.target],
                         lambda p: g.get(p) or f"np.zeros_like({path_text(s.target, p)})")
            kinds = [self.state.facts.kinds.get(a.name, LEAF) if isinstance(a, Var) else const_kind(a)
                     for a in s.args]
            primals = Tree(tuple, tuple(range(len(positions))), tuple(kinds[i] for i in positions))
            rule_kinds = tuple(kinds[i] for i in custom.nondiff_argnums) + (primals, primals)
            vjp_name = self.vjp_of(_lower(rule), (len(nondiff) + 1,), rule_kinds,
                                  self.state.module)
            zeros = [literal(kinds[i], lambda p, a=s.args[i]: (
                f"np.zeros_like({path_text(atom_text(a), p)})")) for i in positions]
            out_zeros = literal(self.state.facts.kinds[s.target],
                                lambda p: f"np.zeros_like({path_text(s.target, p)})")
            out_ct = f"({out_zeros}, {ct})"  # (primal_out, tangent_out): only the tangent
            tangents_bar = self.state.names.fresh(f"{s.target}_tangents_bar")
            call_args = nondiff + [tuple_text([atom_text(s.args[i]) for i in positions]),
                                   tuple_text(zeros), out_ct]
            out.append(Line(f"{tangents_bar} = {vjp_name}({', '.join(call_args)})"))
            results = {i: f"{tangents_bar}[{k}]" for k, i in enumerate(positions)}
        for i, name in active_args:
            if i not in results:
                continue
            kind = self.state.facts.kinds.get(name, LEAF)
            self.state.accumulate_tree(name, (), {p: path_text(results[i], p)
                                            for p in leaf_paths(kind)}, adj, out)
        return out


def _items_written(fn: Function, name: str) -> bool:
    """Is an item of the list ``name`` (any version of it) written in ``fn``
    (``ys[k] = v``, whose backward writes into the list's cotangent)?"""
    root = fn.aliases.get(name, name)
    return any(isinstance(t, Let) and t.prim == "setitem" and isinstance(t.args[0], Var)
               and fn.aliases.get(t.args[0].name, t.args[0].name) == root
               for t in walk(fn.body))


def expand_custom_vjp(fn: Function, module: Module) -> Function:
    """Spell each call of a ``custom_vjp`` function as its ``fwd``, as JAX does under
    reverse mode: ``t = f_fwd(x)`` (the output and the residuals), ``y = t[0]``.  The
    backward of ``t`` is ``bwd(t[1], y_bar)``; ``fwd`` is ordinary code to any
    transform of the emitted gradient."""
    if not any(isinstance(s, Let) and isinstance(s.params.get("custom"), custom_vjp)
               for s in walk(fn.body)):
        return fn
    names = NameTable(fn.names.taken)

    def block(stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, If):
                out.append(replace(s, body=block(s.body), orelse=block(s.orelse)))
            elif isinstance(s, For):
                out.append(replace(s, body=block(s.body)))
            elif isinstance(s, Let) and isinstance(s.params.get("custom"), custom_vjp):
                custom = s.params["custom"]
                try:
                    fwd, _ = custom.rules_for_transform()
                except AttributeError as err:
                    raise MissingRuleError(str(err), s.loc, "define its rules with "
                                           "f.defvjp(fwd, bwd)") from None
                spelling = bind_object(module, fwd.__name__, fwd, f"{custom.__name__}_fwd")
                both = names.fresh(f"{s.target}_fwd")
                params = {"callee": _lower(fwd), "spelling": spelling, "custom_bwd": custom}
                out.append(Let(both, "call", s.args, params, s.loc))
                out.append(Let(s.target, "getitem", (Var(both),),
                               {"index": Index((Const(0, "0"),), False)}, s.loc))
            else:
                out.append(s)
        return out

    return replace(fn, body=block(fn.body), names=names)


def _lower(fn: Any) -> Any:
    """A custom rule's function as IR: the frontend is loaded by the first transform
    (``import s2s`` does not load libcst)."""
    from ..frontend.normalize import normalize

    return normalize(fn)
