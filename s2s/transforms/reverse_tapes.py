"""Reverse mode's tapes: what a loop's (or a branch's) backward reads of the values
each iteration computed, pushed by the forward sweep (replay.py) and popped back.
"""

from __future__ import annotations

from typing import Any

from ..emit.code import Line
from ..ir.kinds import Seq, Tree
from ..ir.nodes import For, Let, Stmt, Var, uses, walk
from ..ir.walk import all_fors, all_lets, block_defs, loop_counter
from .replay import leave_point, spell, tape_tuple_text, uses_of
from .reverse_state import ReverseState


class Tapes:
    """Which values of an iteration one reverse pass saves on a tape, and how."""

    def __init__(self, state: ReverseState) -> None:
        self.state = state
        self.loops: list[For] = []  # the loops being differentiated, innermost last
        # per loop being differentiated: its branches' (statements, backward), saved
        # with the loop's own tape, once the loop's backward is whole
        self.branches: list[list[tuple[list[Stmt], list[Any]]]] = []

    @property
    def loop_bodies(self) -> list[list[Stmt]]:
        """The bodies of the loops being differentiated, innermost last."""
        return [loop.body for loop in self.loops]

    def enter(self, s: For) -> None:
        """The backward of loop ``s`` begins: its branches are saved with its tape."""
        self.loops.append(s)
        self.branches.append([])

    def save_on_tape(self, s: For, body: list[Any]) -> None:
        """What the loop's backward reads of an iteration's values, pushed by the
        forward (a tape) and popped at the top of ``body``."""
        before_exit = s.body[: leave_point(s.body)]
        restorable = self.defs(before_exit) | set(dict(s.carried))
        if loop_counter(s) is not None and s.test is None:
            restorable.add(s.target)  # the index, when the range cannot replay it
        self.loops.append(s)
        for branch, items in self.branches.pop() if self.branches else ():
            self._save_branch(branch, items)
        saved = sorted(n for n in uses_of(body) if n in restorable and not self.one_object(n))
        again = self.invariant(s, before_exit, saved)
        saved = [n for n in saved if n not in again]
        self.state.replay.view_copies |= {n for n in saved if self.view_of_written(n, s.body)}
        self.loops.pop()
        body[:0] = [Line(f"{t.target} = {spell(t)}") for t in again.values()]
        if saved:
            tape = self.state.names.fresh("tape")
            self.state.replay.tapes[id(s.body)] = (tape, saved)
            body.insert(0, Line(f"{tape_tuple_text(saved)} = {tape}.pop()"))

    def invariant(self, s: For, before_exit: list[Stmt], wanted: list[str]) -> dict[str, Let]:
        """Of the ``wanted`` names, those every iteration binds to the same value, cheap
        to compute again (Python ints: ``2 * H``, ``len(xs)``; an entry of a container
        the function never writes into: ``params["w"]``), with what they are computed
        from, in order: the backward computes them again instead of popping them.  A
        tape holds only what changes; a static index stays a Python int (under
        ``lax.scan`` a taped one would be a traced array, and ``z[k:]`` refused)."""
        inside = {t.target for t in all_lets(s.body)} | {s.target} | {e for e, _ in s.carried}
        if loop_counter(s) is not None:
            inside.add(loop_counter(s))
        aliases = self.state.fn.aliases
        written = set(aliases) | set(aliases.values())
        found: dict[str, Let] = {}
        for t in before_exit:
            if not isinstance(t, Let) or not self._cheap(t, written):
                continue
            if all(n in found or n not in inside for n in uses(t)):
                found[t.target] = t
        needed: set[str] = set()
        todo = [n for n in wanted if n in found]
        while todo:
            n = todo.pop()
            if n not in needed:
                needed.add(n)
                todo += [u for u in uses(found[n]) if u in found]
        return {n: t for n, t in found.items() if n in needed}

    def _cheap(self, t: Let, written: set[str]) -> bool:
        facts = self.state.facts
        if t.target in facts.int_vars or t.prim == "shape":
            return t.target not in written
        if t.prim != "getitem" or not isinstance(t.args[0], Var):
            return False
        base = t.args[0].name
        return (isinstance(facts.kinds.get(base), (Tree, Seq)) and base not in written
                and t.target not in written and not self.made_anew(base))

    def made_anew(self, name: str) -> bool:
        """Is ``name`` a list grown in a loop that a loop around the one being saved
        carries as a new list at each iteration (``q = list(parts)``, ``q.append(v)``,
        ``parts = q``)?  An item read of it is saved, not read again in the backward:
        that would save the list itself on the outer loop's tape, a list of another
        length at each iteration (which vmap cannot batch as one structure)."""
        if not isinstance(self.state.facts.kinds.get(name), Seq) or self.one_object(name):
            return False
        bodies = {id(b) for b in self.loop_bodies}
        return any(name in dict(f.carried) for f in all_fors(self.state.fn.body)
                   if id(f.body) in bodies)

    def save_branch(self, branch: list[Stmt], items: list[Any]) -> None:
        """What the backward ``items`` of a branch inside a loop reads of the values
        the branch computed (later iterations overwrite them), pushed by the forward
        and popped at the top of ``items``: once the loop's backward is whole (a
        statement before the `if` may still add to ``items`` a line under the `if` of
        an `elif` that reads the branch's test: ``x_bar[k] += v_bar`` under ``if
        v_greater_hi:``, the test of the iteration the loop ran last where unsaved)."""
        if self.branches:
            self.branches[-1].append((branch, items))
        else:
            self._save_branch(branch, items)

    def _save_branch(self, branch: list[Stmt], items: list[Any]) -> None:
        defs = self.defs(branch[: leave_point(branch)])
        saved = sorted(n for n in uses_of(items) if n in defs and not self.one_object(n))
        if saved:
            tape = self.state.names.fresh("tape")
            self.state.replay.tapes[id(branch)] = (tape, saved)
            items.insert(0, Line(f"{tape_tuple_text(saved)} = {tape}.pop()"))

    def one_object(self, name: str) -> bool:
        """Is ``name`` a version of an array (or list) written in place that is one
        object throughout the innermost loop?  Then a tape need not save it: every
        version is spelled with the array's name, and the backward sweep puts back
        what the writes overwrote."""
        aliases = self.state.fn.aliases
        root = aliases.get(name, name)
        if root not in aliases.values():
            return False
        loop = self.loops[-1]
        for f in [loop, *all_fors(loop.body)]:
            if any(aliases.get(e, e) == root and aliases.get(x, x) != root for e, x in f.carried):
                return False  # a loop rebinds it to another list (`acc = [t] + acc`)
        for t in all_lets(loop.body):
            if aliases.get(t.target, t.target) != root:
                continue
            same = t.prim in ("setitem", "add_at", "append", "pop") or (
                t.prim == "identity" and isinstance(t.args[0], Var)
                and aliases.get(t.args[0].name, t.args[0].name) == root
            )
            if not same:
                return False  # made anew inside the loop: each iteration's is its own
        return True

    def view_of_written(self, name: str, scope: list[Stmt], later: bool = False) -> bool:
        """Is ``name`` an index read (``y[i - 1]``, maybe a view) of an array written
        into in ``scope`` (the loop whose tape saves it; with ``later``, the function
        after the read)?  The backward sweep puts back what the writes overwrote, so
        a view holds the right values where the backward reads it; but code that
        reads a view after a write into its array is refused when it is transformed
        again, so the read is bound as a copy."""
        prod = self.state.facts.producer.get(name)
        if prod is None or prod.prim != "getitem" or not isinstance(prod.args[0], Var):
            return False
        aliases = self.state.fn.aliases
        root = aliases.get(prod.args[0].name, prod.args[0].name)
        stmts = list(walk(scope))
        if later:
            stmts = stmts[next((k for k, t in enumerate(stmts) if t is prod), 0):]
        return any(isinstance(t, Let) and t.prim in ("setitem", "add_at")
                   and aliases.get(t.target, t.target) == root for t in stmts)

    def defs(self, stmts: list[Stmt]) -> set[str]:
        """Names a block binds at its level, with the elements its writes saved."""
        return block_defs(stmts) | {
            self.state.replay.saved[id(t)] for t in stmts if isinstance(t, Let) and id(t) in self.state.replay.saved
        }
