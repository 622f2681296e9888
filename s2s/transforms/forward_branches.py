"""Forward mode's ``if``: each branch computes its joins' tangents.

A join's tangent gets one name both branches bind; a tangent one branch gives no
value (a structural zero) is bound on the other path only, and the zeros go where
something needs it everywhere (``ForwardState.settle``).
"""

from __future__ import annotations

from typing import Any

from ..emit.code import Block, Line
from ..ir.kinds import LEAF, Seq, Tree, leaf_paths
from ..ir.nodes import Const, If, Let
from ..ir.spelling import atom_text
from .forward_state import ForwardState, Slots, Walk
from .paths import decided, simplified, within


class Branches:
    """The tangents of the ``if``s of one forward pass."""

    def __init__(self, state: ForwardState, walk: Walk) -> None:
        self.state = state
        self.walk = walk  # (a branch's statements)

    def if_(self, s: If, out: list[Any]) -> None:
        state = self.state
        before = {k: dict(v) for k, v in state.tan.items()}
        owned_before = set(state.owned)
        outer_context, outer_when = state.context, state.when
        joins = [j for j in s.joins if j in state.facts.active]
        reserved = [j for j in joins if j not in state.join_names and not isinstance(
            state.kind(j), Tree)]
        for j in reserved:  # the branches bind the join's tangent under one name
            # (an array or list written in place: its tangent buffer's one name, which
            # writes and appends in the branches use too; a copy would be an alias)
            state.join_names[j] = state.buffer_name(j) if j in state.fn.aliases \
                else state.dot_name(j)
        test = atom_text(s.test)
        branches: list[tuple[list[Any], dict[str, Slots], set[str], dict, frozenset]] = []
        for way, stmts in ((True, s.body), (False, s.orelse)):
            literal = state.facts.path_literal(test, way)
            state.context = outer_context | {literal}
            state.tan, state.when = self._enter_branch(before, outer_when)
            state.owned = set(owned_before)
            items: list[Any] = []
            self.walk.block(stmts, items)
            branches.append((items, state.tan, state.owned, state.when, state.context))
        state.tan, state.context = before, outer_context
        state.when = dict(outer_when)
        state.owned = branches[0][2] & branches[1][2]
        for j in joins:
            for path in leaf_paths(state.kind(j)):
                self._join(s, j, path, branches)
        for j in reserved:
            del state.join_names[j]
        out.append(Block(f"if {test}:", branches[0][0], branches[1][0]))

    def _join(self, s: If, j: str, path: tuple, branches: list[tuple]) -> None:
        """The tangent of join ``j``'s leaf ``path`` after the ``if``: one name each
        branch binds (or a structural zero where a branch gives it none)."""
        state = self.state
        texts = [self._joined_text(s, k, j, path, b[1]) for k, b in enumerate(branches)]
        conds = [frozenset() if t is None else frozenset(
            c | b[4] for c in b[3].get((j, path)) or {frozenset()})
            for t, b in zip(texts, branches)]
        union = simplified(conds[0] | conds[1])
        unbound = isinstance(state.kind(j), type(LEAF)) and path == () and (
            j not in state.fn.aliases)  # (a buffer's, a list's: zeros there)
        if unbound and within(union, state.context) is not None:
            state.when[(j, path)] = union
        else:
            state.when.pop((j, path), None)
        if texts[0] == texts[1] and texts[0] is not None:
            state.tan.setdefault(j, {})[path] = texts[0]
            return
        if not unbound:  # zeros where unbound in a branch, as before
            for b in branches:
                self._settle_in(b, j, path)
            texts = [self._joined_text(s, k, j, path, b[1])
                     for k, b in enumerate(branches)]
        name = state.join_names.get(j) or state.dot_name(j, path) if path == () \
            else state.dot_name(j, path)
        own = j in state.fn.aliases  # the join's buffer: is it ours on every path?
        for (items, tan, owned, when, context), text, branch_stmts in zip(
                branches, texts, (s.body, s.orelse)):
            if text == name:
                own = own and name in owned
            elif text is None and unbound and _binds_none(branch_stmts, j):
                # `j = None` here (emitted code's structural zero: a gradient's
                # cotangent no path reaches): its tangent None too, so that the name
                # is bound on every path, as the value is (vmap of this code would
                # take it for a value bound only by an earlier iteration)
                items.append(Line(f"{name} = None"))
            elif text is None and unbound:  # no tangent here: a structural zero
                state.holes.setdefault(name, []).append((items, state.zeros(j, path)))
            elif text is None or text.startswith("["):  # zeros, or a new list
                items.append(Line(f"{name} = {text or state.zeros(j, path)}"))
            else:
                here = when.get((j, path))
                copy = decided(None if here is None else within(here, context),
                               context, lambda holds, t=text: [
                                   Line(f"{name} = {t}")] if holds else [],
                               state.facts.test_order)
                self._holes_in(copy, name, state.zeros(j, path))
                items += copy
                own = False
        state.tan.setdefault(j, {})[path] = name
        if own:
            state.owned.add(name)
        else:
            state.owned.discard(name)

    def _holes_in(self, items: list[Any], name: str, zeros: str) -> None:
        """The paths of ``items`` (`if`s binding ``name`` on some paths) binding it
        nothing: where settle() puts its zeros."""
        for item in items:
            if isinstance(item, Block) and not item.is_loop:
                for code in (item.body, item.orelse):
                    if not code:
                        self.state.holes.setdefault(name, []).append((code, zeros))
                    else:
                        self._holes_in(code, name, zeros)

    def _enter_branch(self, tan: dict[str, Slots], when: dict) -> tuple[dict, dict]:
        """The tangents as a branch sees them (see reverse_branches' _enter_branch)."""
        state = {k: dict(v) for k, v in tan.items()}
        inside: dict[tuple[str, tuple], frozenset] = {}
        for (var, path), cond in when.items():
            here = within(cond, self.state.context)
            if here is None:
                continue
            if not here:
                state.get(var, {}).pop(path, None)
            else:
                inside[(var, path)] = here
        return state, inside

    def _settle_in(self, branch: tuple, j: str, path: tuple) -> None:
        """settle() of one leaf at the end of a branch already emitted."""
        state = self.state
        items, tan, _, when, context = branch
        saved = state.tan, state.when, state.context
        state.tan, state.when, state.context = tan, when, context
        try:
            cond = state.cond(j, path)
            if cond is not None and j in tan:
                text = tan[j][path]
                name = text if text.isidentifier() else state.dot_name(j, path)
                zeros = state.zeros(j, path)
                items += decided(cond, context, lambda holds: (
                    [Line(f"{name} = {text}")] if holds and text != name
                    else [] if holds else [Line(f"{name} = {zeros}")]), state.facts.test_order)
                tan[j][path] = name
                when.pop((j, path), None)
        finally:
            state.tan, state.when, state.context = saved

    def _joined_text(self, s: If, k: int, j: str, path: tuple, tan: dict[str, Slots]) -> str | None:
        """The tangent of join ``j``'s leaf ``path`` where branch ``k`` ends.  A list the
        branch built of known length (``ys = [a]``) joined with one grown in a loop on
        the other path is a grown list after the `if`: its tangent, a list literal."""
        text = tan.get(j, {}).get(path)
        if text is None and path == () and isinstance(self.state.kind(j), Seq):
            kind = self.state.facts.branch_kinds.get((id(s), k), {}).get(j)
            return self.state.list_of_slots(j, kind, tan.get(j, {}))
        return text


def _binds_none(stmts: list[Any], name: str) -> bool:
    """Does the branch ``stmts`` end by binding ``name = None``?"""
    last = None
    for st in stmts:
        if isinstance(st, Let) and st.target == name:
            last = st
    return (last is not None and last.prim == "identity" and isinstance(
        last.args[0], Const) and last.args[0].value is None)
