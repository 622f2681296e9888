"""Reverse mode's backward sweep: a block's statements walked backwards.

``Backward`` hands each statement to the collaborator that knows its kind (an `if`
to ``Branches``, a loop to ``Loops``, writes in place and lists to ``Buffers``, a
user callee to ``Calls``) and differentiates the straight-line ones itself: a
structural primitive routes its cotangent, any other inlines its VJP rule
(vjp_rules.py), under the tests where its cotangent is bound (structural zeros).
"""

from __future__ import annotations

import ast
from typing import Any

from ..emit.code import Block, Comment, Line
from ..ir.kinds import Seq, Tree, leaf_paths, path_text
from ..ir.nodes import Break, Const, For, If, Index, Let, Stmt, Var
from ..ir.spelling import atom_text
from ..ir.unroll import unrolled_header
from . import odes
from .inline import _expr_of
from .paths import in_order, within
from .reverse_branches import Branches, ReplayedIf
from .reverse_buffers import Buffers
from .reverse_calls import Calls
from .reverse_loops import Loops
from .reverse_state import ReverseState
from .reverse_tapes import Tapes
from .vjp_rules import VjpRules


class Backward:
    """The backward sweep of one reverse pass, and the collaborators it hands
    statements to; ``vjp_of`` names (and emits) a user callee's ``*_vjp`` helper."""

    def __init__(self, state: ReverseState, vjp_of: Any) -> None:
        self.state = state
        self.rules = VjpRules(state)  # a statement's backward by its primitive's VJP rule
        self.tapes = Tapes(state)
        self.branches = Branches(state, self, self.tapes)
        self.loops = Loops(state, self, self.tapes)
        self.buffers = Buffers(state, self)
        self.calls = Calls(state, vjp_of)
        # structural primitives: their backward routes cotangents (a handler returns
        # None where the statement is not its case, and the primitive's rule runs)
        self.structural = {
            "identity": self._backward_identity, "list": self._backward_list,
            "make_tuple": self._backward_container, "make_list": self._backward_container,
            "make_dict": self._backward_container, "getitem": self._backward_item,
            "call": self.calls.call, "append": self.buffers.append,
            "odeint": lambda s, g, adj, args: odes.backward(state, vjp_of, s, g, adj, args),
            "odeint_adjoint": lambda s, *_: odes.refuse_again(s),
            "odeint_tangent": lambda s, *_: odes.refuse_again(s),
        }

    def block(self, stmts: list[Stmt], adj: dict[str, dict[tuple, str]]) -> list[Any]:
        """The backward of a block: its statements from the last, each adding to the
        cotangents in ``adj`` (var -> leaf path -> name) of what it read."""
        out: list[Any] = []
        last_line = None
        # what follows a `break` in its block never runs (the normalizer binds an if's
        # joined names there too): the loop's result flows back through the break's
        # copies alone
        stop = next((k for k, t in enumerate(stmts) if isinstance(t, Break)), None)
        if stop is not None:
            stmts = stmts[:stop + 1]
        for s in reversed(stmts):
            out += self.buffers.share_copy(s, adj)  # (a read of a list copied before it)
            if isinstance(s, If):
                out.append(self.branches.if_(s, adj))
                last_line = None
                continue
            if isinstance(s, For):
                out += self.loops.for_(s, adj)
                last_line = None
                continue
            if isinstance(s, Break):
                out += self.loops.break_(s, adj)
                continue
            assert isinstance(s, Let)
            if s.prim == "pop" and s.args[0].name in self.state.facts.active:
                out += self.buffers.pop(s, adj)
                continue
            if s.prim in ("setitem", "add_at"):
                lines = self.buffers.setitem(s, adj)
                if lines and s.loc is not None and _line_key(s.loc) != last_line:
                    header = unrolled_header(s.loc)
                    if header is not None and (last_line is None or last_line[1] != s.loc.unrolled):
                        out.append(Comment(header))
                    out.append(Comment(s.loc.text.strip()))
                    last_line = _line_key(s.loc)
                out += lines
                continue
            if s.prim == "append" and s.target not in adj:
                out += self.buffers.unread_growth(s, adj)
            if s.target not in self.state.facts.active or s.target not in adj or not self.state.facts.is_active(s):
                continue  # (a loop may make a name active that began as a constant)
            groups = self.routed_groups(s, adj)
            if groups is not None:  # a tuple's leaves, reached on different paths
                for cond, slots in groups:
                    adj[s.target] = slots
                    if cond is None:
                        out += self.known_list(s, adj)
                    else:
                        out.append(self.guarded(s, cond, adj))
                last_line = None
                continue
            guard = self.guard_of(s, adj, out)
            if guard:  # its cotangent is bound on those paths only: run it there
                out.append(self.guarded(s, guard, adj))
                last_line = None
                continue
            lines = self.known_list(s, adj)
            if lines and s.loc is not None and _line_key(s.loc) != last_line:
                header = unrolled_header(s.loc)
                if header is not None and (last_line is None or last_line[1] != s.loc.unrolled):
                    out.append(Comment(header))
                out.append(Comment(s.loc.text.strip()))
                last_line = _line_key(s.loc)
            out += lines
        return out

    def known_list(self, s: Let, adj: dict) -> list[Any]:
        """``let``, where a grown list's cotangent (one Python list) reaches a
        statement that made a list of known length: the cotangent's items become the
        list's slots (``ys_bar[0]``, ...), as literals and appends read them."""
        kind, joined = self.state.facts.stmt_kind(s), self.state.facts.kinds.get(s.target)
        if not (isinstance(joined, Seq) and isinstance(kind, Tree)):
            return self.let(s, adj)
        (seq,) = adj[s.target].values()
        adj[s.target] = {p: path_text(seq, p) for p in leaf_paths(kind)}
        self.state.facts.kinds[s.target] = kind
        try:
            return self.let(s, adj)
        finally:
            self.state.facts.kinds[s.target] = joined

    def routed_groups(self, s: Let, adj: dict) -> list[tuple[frozenset | None, dict]] | None:
        """A statement that only routes cotangents (a tuple, list or dict literal, a
        copy, a constant key), whose leaves' cotangents are bound on different paths:
        its leaves in groups bound alike, each group's backward on its paths (no
        partial is multiplied there, so no zeros are needed)."""
        slots = adj.get(s.target, {})
        if len(slots) < 2 or not (s.prim in ("identity", "make_tuple", "make_list", "make_dict")
                                  or s.prim == "getitem" and isinstance(
                                      self.state.facts.kinds.get(s.args[0].name), Tree)):
            return None
        groups: dict[frozenset | None, dict] = {}
        for path, text in slots.items():
            cond = self.state.when.get((s.target, path))
            groups.setdefault(None if cond is None else within(cond, self.state.context), {})[
                path] = text
        if len(groups) == 1 and None in groups:
            return None
        return sorted(groups.items(), key=lambda g: g[0] is not None)

    def guard_of(self, s: Let, adj: dict, out: list[Any]) -> frozenset | None:
        """Where the backward of ``s`` must run: the paths its cotangent is bound on
        (None: all).  A container's, whose leaves may be bound on different paths, is
        made zeros where a leaf is unbound first, as before structural zeros were
        tracked."""
        keys = [(s.target, p) for p in adj.get(s.target, {})]
        conds = [self.state.when.get(k) for k in keys]
        if not any(c is not None for c in conds):
            return None
        if len(keys) == 1:
            return within(conds[0], self.state.context) or None
        for var, path in keys:
            self.state.complete(var, path, adj, out)
        return None

    def guarded(self, s: Let, cond: frozenset, adj: dict) -> Block:
        """The backward of ``s`` on the paths ``cond`` names only: `if`s on the
        forward's tests, read again by name (``cond`` is rarely more than one
        conjunction; then the paths that bind it each get the statement's backward)."""
        tests = in_order({t for conj in cond for t, _ in conj} - {t for t, _ in self.state.context},
                          self.state.facts.test_order)

        def tree(k: int, taken: frozenset) -> list[Stmt]:
            if k == len(tests):
                return [s] if any(conj <= taken for conj in cond) else []
            on = tree(k + 1, taken | {(tests[k], True)})
            off = tree(k + 1, taken | {(tests[k], False)})
            return on if on == off else [ReplayedIf(Var(tests[k]), on, off, s.loc)]

        (replay,) = tree(0, self.state.context)
        return self.branches.if_(replay, adj)

    def let(self, s: Let, adj: dict) -> list[Any]:
        """One statement's backward: a structural primitive's routing, else its rule."""
        g = adj[s.target]
        active_args = [
            (i, a.name) for i, a in enumerate(s.args)
            if isinstance(a, Var) and a.name in self.state.facts.active
        ]
        handler = self.structural.get(s.prim)
        if handler is not None:
            out = handler(s, g, adj, active_args)
            if out is not None:
                return out
        return self.rules.backward(s, g, adj, active_args)

    def _backward_identity(self, s: Let, g: dict, adj: dict, active_args) -> list[Any]:
        out: list[Any] = []
        for _, name in active_args:
            self.state.accumulate_tree(name, (), g, adj, out)
        return out

    def _backward_list(self, s: Let, g: dict, adj: dict, active_args) -> list[Any] | None:
        """A tuple's items, as a list: the same slots (a grown list's: its rule; a
        copy of a grown list: buffers.copied)."""
        if isinstance(self.state.facts.kinds.get(s.target), Seq):
            return self.buffers.copied(s, adj)
        return self._backward_identity(s, g, adj, active_args)

    def _backward_container(self, s: Let, g: dict, adj: dict, active_args) -> list[Any]:
        out: list[Any] = []
        kind = self.state.facts.kinds[s.target]
        assert isinstance(kind, Tree)
        for i, name in active_args:
            key = kind.keys[i]
            sub = {p[1:]: t for p, t in g.items() if p[:1] == (key,)}
            self.state.accumulate_tree(name, (), sub, adj, out)
        return out

    def _backward_item(self, s: Let, g: dict, adj: dict, active_args) -> list[Any] | None:
        """A container's item routes its slots; an array's read accumulates in place
        into a buffer this pass allocated (else: the rule)."""
        if isinstance(self.state.facts.kinds.get(s.args[0].name), Seq):
            return self.buffers.item(s, g, adj)  # an item of a list grown in a loop
        if isinstance(self.state.facts.kinds.get(s.args[0].name), Tree):
            out: list[Any] = []
            key = self.state.facts.container_key(s, self.state.facts.kinds[s.args[0].name])
            self.state.accumulate_tree(s.args[0].name, (key,), g, adj, out)
            return out
        if isinstance(s.args[0], Var):
            current = adj.get(s.args[0].name, {}).get(())
            if current is not None and current in self.state.fresh_buffers:
                lines = [self._accumulate_index(current, s.params["index"], g[()])]
                self.state.reached(current, lines)
                self.state.added_here((s.args[0].name, ()))  # (after a loop that may not)
                return lines
        return None

    def _accumulate_index(self, buffer: str, index: Index, g: str) -> Line:
        """``x_bar[i] += g`` into a buffer this pass owns (``np.add.at`` if fancy)."""
        ints = all(
            not isinstance(i, Var) or i.name in self.state.facts.int_vars for i in index.items
        )
        if ints and Index(tuple(Const(0, "0") if isinstance(i, Var) else i
                                for i in index.items), index.is_tuple).is_basic():
            return Line(f"{buffer}[{atom_text(index)}] += {g}")

        return Line(f"np.add.at({buffer}, {ast.unparse(_expr_of(index))}, {g})")


def _line_key(loc: Any) -> tuple:
    """Statements under one quoted-line comment: one line, in one unrolled iteration."""
    return (loc.line, getattr(loc, "unrolled", ()))
