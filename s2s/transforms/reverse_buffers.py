"""Reverse mode's writes in place and lists: ``y[i] = v`` (and ``np.add.at``) undone
after its backward, ``ys.append(v)`` and ``v = ys.pop()`` turned around on the
list's cotangent (one Python list, popped and appended in place).
"""

from __future__ import annotations

from typing import Any

from ..emit.code import Line
from ..errors import TransformError
from ..ir.kinds import LEAF, Tree, leaf_paths, literal, path_text, unpack_text, unpackable
from ..ir.nodes import Function, Let, Stmt, Var
from ..ir.spelling import atom_text
from ..ir.walk import all_bodies, all_lets
from .reverse_state import ReverseState, Sweep, elem_name


class Buffers:
    """The backward of one reverse pass's writes in place and list operations."""

    def __init__(self, state: ReverseState, sweep: Sweep) -> None:
        self.state = state
        self.sweep = sweep  # (a write's own backward: its rule)
        # ``v = ys.pop()`` is ``v = ys[-1]`` then ``ys2 = pop(ys)``: id(pop) -> v
        self.popped: dict[int, str] = pop_pairs(state.fn.body)

    def append(self, s: Let, g: dict[tuple, str], adj: dict, active_args) -> list[Any]:
        """``ys.append(v)``: v's cotangent is the list cotangent's last element."""
        out: list[Any] = []
        base, item = s.args
        kind = self.state.facts.kinds[s.target]
        if isinstance(kind, Tree):  # a list of known length: slots, as for literals
            n = len(kind.keys) - 1
            if isinstance(item, Var) and item.name in self.state.facts.active:
                sub = {p[1:]: t for p, t in g.items() if p[:1] == (n,)}
                self.state.accumulate_tree(item.name, (), sub, adj, out)
            if isinstance(base, Var) and base.name in self.state.facts.active:
                rest = {p: t for p, t in g.items() if p[:1] != (n,)}
                self.state.accumulate_tree(base.name, (), rest, adj, out)
            return out
        (seq,) = g.values()
        if isinstance(item, Var) and item.name in self.state.facts.active:
            paths = leaf_paths(kind.item)
            if paths == [()] or not unpackable(kind.item):
                part = self.state.names.fresh(f"{item.name}_bar")
                out.append(Line(f"{part} = {seq}.pop()"))
                for p in paths:
                    self.state.accumulate(item.name, p, path_text(part, p), adj, out)
            else:  # a tuple of values (a tape's entry): one cotangent per leaf
                parts = {p: self.state.names.fresh(
                    "_".join([elem_name(self.state.facts, item.name, p)] + ["bar"])) for p in paths}
                out.append(Line(f"{unpack_text(kind.item, parts)} = {seq}.pop()"))
                for p in paths:
                    self.state.accumulate(item.name, p, parts[p], adj, out)
        else:
            out.append(Line(f"{seq}.pop()"))
        if isinstance(base, Var) and base.name in self.state.facts.active:
            if base.name in adj:
                raise TransformError(
                    "a list grown with append is used in more than one way",
                    s.loc, "use the list once, e.g. only through np.stack(ys)",
                )
            adj[base.name] = {(): seq}  # the same list, one element shorter
        return out

    def pop(self, s: Let, adj: dict) -> list[Any]:
        """``v = ys.pop()`` undone: the list's cotangent gets v's cotangent back as its
        last item (zeros where v carries none), for the append that put v there to
        pop.  A list nothing reads afterwards starts from the zeros of its items."""
        out: list[Any] = []
        base = s.args[0].name
        item = self.popped.get(id(s))
        if item is None:
            raise TransformError(
                "reverse mode needs the value `ys.pop()` removes, to give it a "
                "cotangent", s.loc, "bind it, even if unused: `_ = ys.pop()`",
            )
        base_kind = self.state.facts.kinds.get(base, LEAF)
        for path in list(adj.get(item, {})):  # (an item of a list: bound on every path)
            self.state.complete(item, path, adj, out)
        slots = adj.pop(item, {})
        if isinstance(base_kind, Tree):  # a list of known length: its last slot back
            n = len(base_kind.keys) - 1
            after = adj.pop(s.target, {})
            adj[base] = dict(after) | {(n,) + p: t for p, t in slots.items()}
            return out
        seq = adj.get(s.target, {}).get(())
        if seq is None:
            seq = self.state.canonical_name(base, ())
            out.append(Line(f"{seq} = zeros_list({s.target})"))
            self.state.owned.add(seq)
        item_kind = self.state.facts.kinds.get(item, LEAF)
        value = literal(item_kind, lambda p: slots.get(p) or f"np.zeros_like({path_text(item, p)})")
        out.append(Line(f"{seq}.append({value})"))
        adj.pop(s.target, None)
        adj[base] = {(): seq}  # the same list, one item longer
        return out

    def setitem(self, s: Let, adj: dict[str, dict[tuple, str]]) -> list[Any]:
        """Differentiate ``y[i] = v`` (or ``np.add.at(y, i, v)``), then put back what
        it overwrote: the code before it, differentiated next, reads the array as it
        was.  (Elements ``np.add.at`` adds to more than once get their one saved value
        back from each place.)"""
        out: list[Any] = []
        if s.target in self.state.facts.active and s.target in adj and self.state.facts.is_active(s):
            # what it overwrote is put back on every path, so its cotangent is needed on
            # every path too: zeros where no path reached it
            for path in list(adj[s.target]):
                self.state.complete(s.target, path, adj, out)
            out += self.sweep.let(s, adj)
        base = atom_text(s.args[0])
        saved = self.state.names.fresh(f"{self.state.fn.aliases.get(base, base)}_overwritten")
        self.state.replay.saved[id(s)] = saved
        out.append(Line(f"{base}[{atom_text(s.params['index'])}] = {saved}"))
        return out


def is_popped(fn: Function, var: str) -> bool:
    """Is the list ``var`` names (any version of it) popped somewhere in ``fn``?"""
    root = fn.aliases.get(var, var)
    return any(fn.aliases.get(t.args[0].name, t.args[0].name) == root
               for t in all_lets(fn.body) if t.prim == "pop")


def pop_pairs(stmts: list[Stmt]) -> dict[int, str]:
    """id of each ``pop`` statement -> the name its ``ys[-1]`` read bound just before."""
    pairs: dict[int, str] = {}
    for body in all_bodies(stmts):
        for before, s in zip(body, body[1:]):
            if (isinstance(s, Let) and s.prim == "pop" and isinstance(before, Let)
                    and before.prim == "getitem" and before.args[:1] == s.args[:1]):
                pairs[id(s)] = before.target
    return pairs
