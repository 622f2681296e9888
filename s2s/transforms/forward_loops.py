"""Forward mode's loops: a loop carries its values' tangents beside them.

Each carried value's tangent gets one name the body reads and the back edge
updates (an array written in place: its tangent buffer's one name); a ``break``
hands the loop's tangents their values where it leaves.
"""

from __future__ import annotations

from typing import Any

from ..emit.code import Block, Line
from ..ir.kinds import Seq, leaf_paths
from ..ir.nodes import Break, For, Let, Var, walk
from ..ir.spelling import atom_text
from ..ir.walk import effective_carried
from .forward_state import ForwardState, Slots, Walk
from .replay import parallel_copies


class Loops:
    """The tangents of the loops of one forward pass."""

    def __init__(self, state: ForwardState, walk: Walk) -> None:
        self.state = state
        self.walk = walk  # (a loop's body)
        self.loop_names: list[dict[str, Slots]] = []  # per loop: entry -> tangent names

    def for_(self, s: For, out: list[Any]) -> None:
        state = self.state
        all_carried = effective_carried(s)
        carried = [(e, x) for e, x in all_carried
                   if e in state.facts.active or x in state.facts.active]
        names = self._entry_names(s, carried, out)
        self.loop_names.append(names)
        holes_before = {k: list(v) for k, v in state.holes.items()}
        body: list[Any] = []
        self.walk.block(s.body, body)
        for _, exit_ in carried:
            state.settle(Var(exit_), body)
        self.loop_names.pop()
        inside = {t.target for t in walk(s.body) if isinstance(t, Let)}
        for key in [k for k in state.when if k[0] in inside]:  # (one iteration's)
            del state.when[key]
        state.holes = {k: v for k, v in holes_before.items() if k in state.holes}
        body += [Line(f"{e} = {x}") for e, x in s.carried]
        body += parallel_copies(state.names.fresh, [
            (name, state.slot(exit_, path)) for entry, exit_ in carried
            for path, name in names[entry].items()])
        for entry, _ in carried:
            for path, name in names[entry].items():
                state.tan[entry][path] = name
        for entry, _ in carried:
            for name in names[entry].values():
                if name not in state.buffer_names.values():
                    state.owned.discard(name)
        if s.test is None:
            out.append(Block(f"for {s.target} in {state.replay.range_text(s)}:", body, []))
        else:
            out.append(Block(f"while {atom_text(s.test)}:", body, []))

    def _entry_names(self, s: For, carried: list[tuple[str, str]],
                     out: list[Any]) -> dict[str, Slots]:
        """The names the carried values' tangents have through the loop, bound before
        it (entry -> leaf path -> name)."""
        state = self.state
        written = {state.root(t.args[0].name) for t in walk(s.body)
                   if isinstance(t, Let) and t.prim in ("setitem", "append")
                   and isinstance(t.args[0], Var)}
        names: dict[str, Slots] = {}
        for entry, _ in carried:  # carried on from iteration to iteration: everywhere
            state.settle(Var(entry), out)
        for entry, _ in carried:
            names[entry] = {}
            for path in leaf_paths(state.kind(entry)):
                current = state.tan.get(entry, {}).get(path)
                in_place = path == () and state.root(entry) in written
                name = state.buffer_name(entry) if in_place else state.dot_name(entry, path)
                if current is not None and isinstance(state.kind(entry), Seq) \
                        and not in_place:
                    name = current  # a list's tangents: one list, changed in place too
                start = state.list_of_slots(entry, None, state.tan.get(entry, {})) if (
                    current is None and isinstance(state.kind(entry), Seq)) else None
                if start is not None:  # a list of known length, grown from here on
                    out.append(Line(f"{name} = {start}"))
                elif current is None:
                    out.append(Line(f"{name} = {state.zeros(entry, path)}"))
                elif in_place and (current != name or name not in state.owned):
                    copy = "list" if isinstance(state.kind(entry), Seq) else "np.copy"
                    out.append(Line(f"{name} = {copy}({current})"))
                elif current != name:
                    out.append(Line(f"{name} = {current}"))
                if in_place or current is None:
                    state.owned.add(name)
                names[entry][path] = name
                state.tan.setdefault(entry, {})[path] = name
        return names

    def break_(self, s: Break, out: list[Any]) -> None:
        """Leaving early: each carried tangent gets its value here, as the back edge would.

        ``s.copies`` names the primal's values where the break is; a value only a nested
        loop updates (``effective_carried``'s ``(s, s)``) is not among them, as the
        nested loop leaves it under its entry name, but its tangent is under the nested
        loop's own name (``s_dot_2``) and must be copied to this loop's one too.
        """
        state = self.state
        names = self.loop_names[-1] if self.loop_names else {}
        held = dict(s.copies)
        for entry, _ in names.items():
            state.settle(Var(held.get(entry, entry)), out)
        for entry, name in s.copies:
            if entry != name:
                out.append(Line(f"{entry} = {name}"))
        out += parallel_copies(state.names.fresh, [
            (dot, state.slot(held.get(entry, entry), path))
            for entry, dots in names.items() for path, dot in dots.items()])
        out.append(Line("break", keep=True))
