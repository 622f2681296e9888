"""Reverse mode's loops: the iterations walked backwards, popping what each saved.

Cotangents of values from outside the loop accumulate across iterations under one
name (with a flag where an iteration may never reach one); a carried value's
cotangent flows from each iteration to the one before it; a `break` hands the
loop's end cotangent to the values it copied out.
"""

from __future__ import annotations

from typing import Any

from ..emit.code import Block, Line
from ..errors import TransformError
from ..ir.kinds import LEAF, Seq, leaf_paths, path_text
from ..ir.nodes import Break, Const, For, Var
from ..ir.walk import all_fors, all_lets, all_reads, loop_breaks, loop_counter
from .analysis import Facts
from .checkpoint import policy_of, segmented_backward
from .paths import simplified
from .replay import is_simple, parallel_copies
from .reverse_buffers import is_popped, unchanged_after
from .reverse_state import FlagLine, ReverseState, Sweep, without_flags
from .reverse_tapes import Tapes


class Loops:
    """The backward of the loops of one reverse pass."""

    def __init__(self, state: ReverseState, sweep: Sweep, tapes: Tapes) -> None:
        self.state = state
        self.sweep = sweep  # (a loop's body: its backward)
        self.tapes = tapes  # (what an iteration saves for its backward)
        self.leaving: list[dict[str, tuple[str, str]]] = []  # per loop: entry -> handed, exit

    def for_(self, s: For, adj: dict[str, dict[tuple, str]]) -> list[Any]:
        """Run the loop backwards: pop what each iteration saved, then its adjoint.

        Cotangents of values from outside the loop accumulate across iterations under
        one name; a carried value's cotangent flows from each iteration to the one
        before it.
        """
        defined = {t.target for t in all_lets(s.body)} | {s.target} | {
            f.target for f in all_fors(s.body)
        }
        read = all_reads(s.body) - defined
        carried = [(e, x) for e, x in s.carried if x in self.state.facts.active]
        outer = sorted(v for v in read if v in self.state.facts.active and v not in dict(carried))
        if not outer and not carried:
            return []
        pre: list[Any] = []
        for entry, _ in carried:
            kind = self.state.facts.kinds.get(entry, LEAF)
            if not isinstance(kind, (type(LEAF), Seq)):
                raise TransformError(
                    f"the container `{entry}` (`{kind!r}`) is rebound in a loop being "
                    "differentiated, and its structure (its keys, its class) is not the same one in every "
                    "iteration, or is not known when s2s transforms the function",
                    s.loc, "build the same class (the same keys) in every iteration, or "
                    "carry its arrays through the loop",
                )
        flags, nonzero = self._loop_accumulators(s, outer, carried, adj, pre)
        for (var, path), flag in flags.items():
            self.state.reach_flags[adj[var][path]] = [flag, self.state.loop_depth + 1, self.state.context, False,
                                                False]
        unbound_before = dict(self.state.unbound_at)  # (the body's own end with it)
        inner = {k: dict(v) for k, v in adj.items()}
        handed: dict[str, str] = {}  # carried entry -> the name between iterations
        for entry, exit_ in carried:
            handed[entry] = self.state.canonical[(entry, ())]
            inner[exit_] = {(): handed[entry]}  # what flowed into this iteration's end
            inner.pop(entry, None)  # the entry's cotangent starts afresh each iteration
            self.state.canonical[(entry, ())] = self.state.names.fresh(f"{entry}_bar")
        fresh_before = set(self.state.fresh_buffers)
        self.state.fresh_buffers -= set(handed.values())  # carried cotangents are handed on
        self.state.loop_depth += 1
        self.tapes.enter(s)
        self.state.facts.int_vars.add(s.target)
        self.leaving.append({e: (handed[e], x) for e, x in carried})
        body = self.sweep.block(s.body, inner)
        self.leaving.pop()
        self.state.loop_depth -= 1
        self.tapes.loops.pop()
        # writing in place is safe across iterations only for what every path keeps
        self.state.fresh_buffers &= fresh_before
        for var in [e for e, _ in carried] + outer:  # handed on: bound on every path
            for path in list(inner.get(var, {})):
                self.state.complete(var, path, inner, body)
        seen = {key: self.state.reach_flags.pop(adj[key[0]][key[1]]) for key in flags}
        reached = [(key, flag) for key, flag in flags.items() if seen[key][4] and (
            seen[key][3] or not _runs_once(self.state.facts, s))]
        for key in flags:
            if not seen[key][4]:  # no iteration adds to it: as it was before the loop
                if key in nonzero:
                    self.state.when[key] = nonzero[key]
                    self.state.bound_anyway.add(key)
                else:
                    adj[key[0]].pop(key[1], None)
                    if not adj[key[0]]:
                        del adj[key[0]]
        if len(reached) < len(flags):  # every iteration adds to the others, and one runs
            body = without_flags(body, {f for k, f in flags.items() if (k, f) not in reached})
        for (var, path), flag in reached:
            pre.append(FlagLine(f"{flag} = False"))
            self.state.flag_names.add(flag)
        ends: list[tuple[str, str]] = []  # assigned all at once, as `a, b = b, a` is
        for entry, _ in carried:
            text = inner.get(entry, {}).get(())
            name = handed[entry]
            ends.append((name, self.state.zeros_text(entry, ()) if text is None else text))
            self.state.canonical[(entry, ())] = name
        for var in outer:
            for path, name in adj.get(var, {}).items():
                ends.append((name, inner[var][path]))
        body += parallel_copies(self.state.names.fresh, ends)
        self.tapes.save_on_tape(s, body)
        for var in defined:
            adj.pop(var, None)
        for key in [k for k in self.state.when if k[0] in defined]:
            del self.state.when[key]
        self.state.unbound_at = {k: v for k, v in unbound_before.items() if k in self.state.when}
        for (var, path), flag in reached:  # nonzero where an iteration reached it
            self.state.when[(var, path)] = simplified(
                nonzero.get((var, path), frozenset()) | {self.state.context | {(flag, True)}})
            self.state.bound_anyway.add((var, path))
        if not body and not pre:  # (no iteration adds to a cotangent: no loop to run)
            return []
        if loop_counter(s) is not None:
            header = f"for _ in range({loop_counter(s)}):"
        else:
            header = f"for {s.target} in {self.state.replay.range_text(s, backward=True)}:"
        if self.state.loop_depth == 0 and policy_of(self.state.fn) is not None:
            # s2s.checkpoint: saved states every few iterations, segments run again
            return segmented_backward(self.state, s, pre, Block(header, body, []))
        return pre + [Block(header, body, [])]

    def _loop_accumulators(self, s: For, outer: list[str], carried: list, adj: dict,
                           pre: list[Any]) -> tuple[dict, dict]:
        """Before a loop's backward: one accumulator per leaf of what the loop reads from
        outside or carries, bound on every path; the flags of those an iteration may
        never reach (and where each was nonzero before the loop)."""
        flags: dict[tuple[str, tuple], str] = {}
        nonzero: dict[tuple[str, tuple], frozenset] = {}  # where it was before the loop
        for var in outer + [e for e, _ in carried]:
            for path in list(adj.get(var, {})):  # what the loop reads: on every path
                if var in outer and (var, path) in self.state.when:
                    nonzero[(var, path)] = self.state.when[(var, path)]
                self.state.complete(var, path, adj, pre)
            for path in leaf_paths(self.state.facts.kinds.get(var, LEAF)):
                if var in outer and (adj.get(var, {}).get(path) is None or (
                        var, path) in nonzero) and self.state.may_be_unbound(var, path):
                    flags[(var, path)] = self.state.names.fresh(
                        "_".join([self.state.fn.aliases.get(var, var)] + [str(k) for k in path]
                                 + ["reached"]))
        for var in outer + [e for e, _ in carried]:
            # one accumulator per leaf (a container's leaves each get their own)
            for path in leaf_paths(self.state.facts.kinds.get(var, LEAF)):
                name = self.state.canonical_name(var, path)
                current = adj.get(var, {}).get(path)
                if current is None and isinstance(self.state.facts.kinds.get(var), Seq) \
                        and (is_popped(self.state.fn, var) or unchanged_after(
                            self.state.fn, var, s)):
                    # a stack (a tape) that ends the loop unread, a list nothing grows
                    # after the loop (whose items it reads): its items' zeros
                    pre.append(Line(f"{name} = zeros_list({var})"))
                    adj.setdefault(var, {})[path] = name
                    self.state.owned.add(name)
                    continue
                if current is None and isinstance(self.state.facts.kinds.get(var), Seq):
                    raise TransformError(
                        f"the list `{var}` grown in the loop is not used afterwards",
                        s.loc, "drop the list, or use it (np.stack) in the result",
                    )
                if current is None:
                    pre.append(Line(f"{name} = np.zeros_like({path_text(var, path)})"))
                    self.state.fresh_buffers.add(name)
                elif isinstance(self.state.facts.kinds.get(var), Seq) and is_simple(current):
                    # a list's cotangent is one list, popped and appended in place: the
                    # loop goes on with it under its name (a copy would be an alias)
                    name = self.state.canonical[(var, path)] = current
                elif current != name:
                    pre.append(Line(f"{name} = {current}"))
                    self.state.fresh_buffers.discard(name)
                adj.setdefault(var, {})[path] = name
                self.state.owned.add(name)
        return flags, nonzero

    def break_(self, s: Break, adj: dict[str, dict[tuple, str]]) -> list[Any]:
        """Leaving early, the loop's results were the values here: the cotangent that
        flowed into the loop's end flows to them."""
        out: list[Any] = []
        for entry, name in s.copies:
            handed, exit_ = self.leaving[-1].get(entry, (None, None))
            if handed is None or name == exit_ or name not in self.state.facts.active:
                continue
            self.state.accumulate(name, (), handed, adj, out)
        return out


def _runs_once(facts: Facts, s: For) -> bool:
    """Does the loop run every iteration of a range known not to be empty (no
    `while`, no `break`, constant bounds)?"""
    if s.test is not None or loop_breaks(s.body) or s.iter is None:
        return False
    prod = facts.producer.get(s.iter.name)
    if prod is not None and prod.prim == "reversed" and isinstance(prod.args[0], Var):
        prod = facts.producer.get(prod.args[0].name)
    if prod is None or prod.prim != "range" or not all(isinstance(a, Const) for a in prod.args):
        return False
    try:
        return len(range(*(a.value for a in prod.args))) > 0
    except TypeError:
        return False
