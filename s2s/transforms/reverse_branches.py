"""Reverse mode's `if`s: the backward of an `if` replayed on the same test, and
where each cotangent is bound once its branches meet (structural zeros).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..emit.code import Block, Line
from ..ir.kinds import Seq
from ..ir.nodes import If
from ..ir.spelling import atom_text
from ..ir.walk import all_lets
from .paths import decided, simplified, within
from .reverse_state import ReverseState, Sweep, extend
from .reverse_tapes import Tapes


@dataclass(eq=False)
class ReplayedIf(If):
    """An `if` of the forward's, replayed around one statement's backward only (its
    cotangent is bound on that path): it has no tape of its own, the code around it
    saves what it reads."""


class Branches:
    """The backward of the `if`s of one reverse pass."""

    def __init__(self, state: ReverseState, sweep: Sweep, tapes: Tapes) -> None:
        self.state = state
        self.sweep = sweep  # (a branch's statements: its backward)
        self.tapes = tapes  # (what a branch inside a loop saves)

    def if_(self, s: If, adj: dict[str, dict[tuple, str]]) -> Block:
        """The backward of an `if`, replayed on the same test.  A cotangent that one
        branch gives a value and the other none (no path from the output reaches it
        there) is bound on that branch's paths only (``when``), not to zeros on the
        other: what reads it later runs under the same test (a ``ReplayedIf``: an `if`
        made for one statement, ``Backward.guarded``)."""
        test = atom_text(s.test)
        before = {k: dict(v) for k, v in adj.items()}
        outer_context, outer_when = self.state.context, self.state.when
        fresh_before = set(self.state.fresh_buffers)
        states, fresh = [], []
        for way, branch in ((True, s.body), (False, s.orelse)):
            self.state.context, self.state.when = outer_context, outer_when
            literal = self.state.facts.path_literal(test, way)
            state, self.state.when = self._enter_branch(adj, literal)
            self.state.context = outer_context | {literal}
            self.state.fresh_buffers = set(fresh_before)
            items = self.sweep.block(branch, state)
            states.append((state, self.state.when, items, self.state.context))
            fresh.append(self.state.fresh_buffers)
        self.state.context, self.state.when = outer_context, {
            k: v for k, v in outer_when.items() if not self.state.was_filled(k, adj)}
        # a buffer is ours to write into after the if only if it is on both paths
        self.state.fresh_buffers = fresh[0] & fresh[1]
        body, orelse = states[0][2], states[1][2]
        if self.state.loop_depth and not isinstance(s, ReplayedIf):
            # values a branch computed are overwritten by later iterations: the
            # branch saves the ones its backward reads, and pops them back
            for branch, items in ((s.body, body), (s.orelse, orelse)):
                self.tapes.save_branch(branch, items)
        defined_inside = {t.target for t in all_lets(s.body) + all_lets(s.orelse)}
        changed: set[tuple[str, tuple]] = set()
        for state, when, _, _ in states:
            for var, slots in state.items():
                if var in defined_inside:
                    continue
                for path, text in slots.items():
                    if before.get(var, {}).get(path) != text:
                        changed.add((var, path))
            changed |= {k for k in when if k[0] not in defined_inside}
        changed |= {k for k in outer_when if k[0] not in defined_inside}
        for key in sorted(changed):
            self._join_slot(key, states, adj, key in outer_when)
        for var in defined_inside:
            adj.pop(var, None)
            for key in [k for k in self.state.when if k[0] == var]:
                del self.state.when[key]
        # (empty branches stay: zeros may still go into one, see complete(); the
        # finished code drops what stays empty, tidy_replays)
        return Block(f"if {test}:", body, orelse)

    def _enter_branch(self, adj: dict, literal: tuple[str, bool]) -> tuple[dict, dict]:
        """The cotangents as a branch sees them: those bound only on the other path
        are not there (structural zeros), those bound on every path of the branch are
        there unconditionally."""
        context = self.state.context | {literal}
        state = {k: dict(v) for k, v in adj.items()}
        when: dict[tuple[str, tuple], frozenset] = {}
        for (var, path), cond in self.state.when.items():
            if self.state.was_filled((var, path), state):
                continue
            here = within(cond, context)
            if here is None:
                continue
            if not here:
                state.get(var, {}).pop(path, None)
                if var in state and not state[var]:
                    del state[var]
            else:
                when[(var, path)] = here
        return state, when

    def _join_slot(self, key: tuple[str, tuple], states: list, adj: dict,
                   was_partial: bool = False) -> None:
        """One cotangent where the branches of an `if` meet: one name on every path
        that binds it; a path that binds none leaves it unbound (a structural zero),
        except for a list's cotangent, which is zeros there (a transform of the
        emitted code could not make a list's zeros where it is None)."""
        var, path = key
        texts = [state.get(var, {}).get(path) for state, _, _, _ in states]
        if texts == [None, None]:
            adj.get(var, {}).pop(path, None)
            if var in adj and not adj[var]:
                del adj[var]
            self.state.when.pop(key, None)
            return
        conds = [frozenset() if text is None else frozenset(
            c | context for c in when.get(key) or {frozenset()})
            for text, (_, when, _, context) in zip(texts, states)]
        zeros = None if self.state.may_be_unbound(var, path) else self.state.zeros_text(var, path)
        if key in self.state.bound_anyway:
            zeros = None
        present = {t for t in texts if t is not None}
        if len(present) == 1 and zeros is None:
            name = present.pop()
        elif isinstance(self.state.facts.kinds.get(var), Seq):
            name = _list_join_name(var, path, tuple(st[0] for st in states),
                                   self.state.fn.aliases) or self.state.canonical_name(var, path)
        else:
            name = self.state.canonical_name(var, path)
        for text, cond, (_, _, items, context) in zip(texts, conds, states):
            if text is None:
                if zeros is not None:
                    items.append(Line(f"{name} = {zeros}"))
                continue
            extend(items, decided(within(cond, context), context, lambda holds, t=text: (
                [Line(f"{name} = {t}")] if holds and t != name
                else [Line(f"{name} = {zeros}")] if not holds and zeros is not None
                else []), self.state.facts.test_order))
        adj.setdefault(var, {})[path] = name
        if name == self.state.canonical_name(var, path):
            self.state.owned.add(name)
        self.state.fresh_buffers.discard(name)
        union = simplified(conds[0] | conds[1])
        if zeros is not None or within(union, self.state.context) is None:
            self.state.when.pop(key, None)
            self.state.bound_anyway.discard(key)
            return
        self.state.when[key] = union
        missing = [k for k, t in enumerate(texts) if t is None]
        if len(missing) == 1 and key not in self.state.bound_anyway and not was_partial and within(conds[1 - missing[0]], states[1 - missing[0]][3]) is None:
            self.state.unbound_at[key] = (states[missing[0]][2], states[1 - missing[0]][2], name,
                                    union, self.state.context)


def _list_join_name(var: str, path: tuple, states: tuple[dict, dict],
                    aliases: dict[str, str]) -> str | None:
    """The name a list's cotangent (a tape's) keeps after an ``if``: it is appended
    to and popped in place, so a path that holds it under a name goes on with that
    name (a copy under another would be an alias of the list); the other path binds
    it there, provided that path gives the name to no other value (other versions
    of the same list share it)."""
    texts = [state.get(var, {}).get(path) for state in states]
    if texts[0] == texts[1]:
        return texts[0]
    root = aliases.get(var, var)
    for k, text in enumerate(texts):
        other = states[1 - k]
        if text is not None and text.isidentifier() and not any(
                t == text for v, slots in other.items() for p, t in slots.items()
                if aliases.get(v, v) != root):
            return text
    return None
