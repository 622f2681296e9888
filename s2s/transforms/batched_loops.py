"""vmap's loops: one whose iterations do not depend on batched values stays a loop;
one the examples leave at different iterations (a ``while`` on a batched test, a
``break`` under one, a batched count) runs until every example has left, an example
that has left keeping its values."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..emit.code import Block, Line
from ..errors import TransformError
from ..ir.kinds import LEAF, Seq, Tree, leaf_paths, literal, path_text, unpack_text, unpackable
from ..ir.nodes import Break, Const, For, If, Let, Stmt, Var, uses, walk
from ..ir.peel import peelable
from ..ir.spelling import atom_text
from ..ir.walk import effective_carried, loop_breaks
from ..primitives import lookup_object
from ..primitives.batching import NoBatchRule, align
from .ranks import VALUES

SEQ_ITEM = "*"  # batched paths of a list grown in a loop: "*" then the item's path


class PeelFirst(Exception):
    """``loop`` carries a value whose rank its first iteration changes: the batched
    code is made again with that iteration peeled out of it (ir/peel.py)."""

    def __init__(self, loop: For) -> None:
        super().__init__("peel the first iteration")
        self.loop = loop


class BatchedLoops:
    """The loops of one vmap pass (``vm``)."""

    def __init__(self, vm: Any) -> None:  # (the vmap transform, vmap._Vmap)
        self.vm = vm

    def for_(self, s: For, out: list[Any]) -> None:
        at_entry, items = {k: set(v) for k, v in self.vm.b.items()}, []
        try:
            self._for(s, items)
        except TransformError:
            if not _unrun(self.vm, s):
                raise
            self.vm.b, items = at_entry, [_unrun_guard(self.vm, s)]
        out += items

    def _for(self, s: For, out: list[Any]) -> None:
        count = None  # a batched count: `for _ in range(n)`, n one int per example
        if s.iter is not None and self.vm.batched(s.iter):
            count = self._batched_count(s)
        carried_pairs = effective_carried(s)
        # a `break` becomes a per-example flag, joined like any value: where its test is
        # batched, the examples leave the loop at different iterations (masked lanes)
        flag, body_ir = None, s.body
        if loop_breaks(s.body):
            flag = self.vm.names.fresh("breaking")
            body_ir = self._lower_breaks(s.body, flag, False)[0]
            self.vm.ranks[(flag, ())] = 0
            self.vm.flags.add(flag)
        if s.test is not None or flag is not None:
            for entry, exit_ in carried_pairs:  # (an exit the first example never made)
                if (entry, ()) in self.vm.ranks:
                    self.vm.ranks.setdefault((exit_, ()), self.vm.ranks[(entry, ())])
        at_entry = {k: set(v) for k, v in self.vm.b.items()}
        state = {k: set(v) for k, v in at_entry.items()}
        masked = False
        while True:  # a carried value is batched if any iteration makes it so
            self.vm.b = {k: set(v) for k, v in state.items()}
            self.vm.block(body_ir, [])
            masked = masked or count is not None or (
                s.test is not None and self.vm.batched(s.test)) or (
                flag is not None and self.vm.batched(Var(flag)))
            if masked:
                self._check_masked_body(s, body_ir)
            grown = False
            for entry, exit_ in carried_pairs:
                new = self.vm.b.get(exit_, set()) - state.get(entry, set())
                if masked:  # examples stop at different iterations: all differ
                    self._check_masked_carry(s, entry)
                if masked and not isinstance(self.vm.kind(entry), Seq):  # (a list's
                    # items are batched as appended: each iteration appends for all)
                    new = set(leaf_paths(self.vm.kind(entry))) - state.get(entry, set())
                if new:
                    state[entry] = state.get(entry, set()) | new
                    grown = True
            if not grown:
                break
        self.vm.b = state
        after: dict[str, int] = {}  # (unbatched values' ranks after the loop)
        guards = self._carried_ranks(s, carried_pairs, state, masked, after)
        for entry, _ in carried_pairs:
            if state.get(entry, set()) == at_entry.get(entry, set()):
                continue
            kind = self.vm.kind(entry)
            prod = self.vm.facts.producer.get(entry)
            if isinstance(kind, Seq) and prod is not None and prod.prim in ("append", "pop"):
                # (a list appended to or popped before the loop: as it was made)
                root = self.vm.fn.aliases.get(entry, entry)
                prod = self.vm.facts.producer.get(root, prod)
            if isinstance(kind, Seq) and prod is not None and (
                    prod.prim in ("zeros_list", "list")
                    or prod.prim == "make_list" and prod.args):
                # zero cotangents (reverse mode over a popped list), a list built
                # here that starts with items: the leaves the loop's items have
                # batched and those items lack are the same for every example,
                # stacked (items batched already keep their axis)
                new = {p[1:] for p in state.get(entry, set()) if p[:1] == (SEQ_ITEM,)}
                had = _start_items_batched(prod, at_entry.get(entry, set()))
                if had is not None and had <= new:
                    if new - had:
                        text = stacked_items(entry, kind, new - had,
                                             self.vm.use_batch_size())
                        out.append(Line(f"{entry} = {text}"))
                    continue
            if isinstance(kind, Seq):
                if not (prod is not None and prod.prim == "make_list" and not prod.args) \
                        and not _empty_field(self.vm.facts.producer, entry):
                    raise self.vm.fail(s, NoBatchRule(
                        f"the list `{entry}` gets batched items in the loop after "
                        "unbatched ones"))
                continue
            if isinstance(kind, Tree):
                raise self.vm.fail(s, NoBatchRule(
                    f"the container `{entry}` becomes batched in the loop"))
            if not _none_at_entry(self.vm, entry):  # (None stacked: an object array)
                out.append(Line(f"{entry} = {_stacked(self.vm, s, entry, at_entry)}"))
        if masked:
            self.masked_loop(s, body_ir, flag, carried_pairs, out, count)
            return
        body: list[Any] = []
        self.vm.block(s.body, body)
        body += [Line(f"{e} = {x}") for e, x in s.carried]
        self.vm.ranks.update({(e, ()): r for e, r in after.items()})
        if s.test is None:
            header = f"for {s.target} in {self.vm._iter_text(s.iter)}:"
            out.append(Block(header, body, []))
        else:
            out.append(Block(f"while {atom_text(s.test)}:", body, []))
        out += guards

    def _batched_count(self, s: For) -> str:
        """``n`` of a loop ``for i in range(n)`` (or ``reversed(range(n))``) whose
        count ``n`` is batched (one int per example); other loops over batched
        ranges are refused."""
        prod = self.vm.facts.producer.get(s.iter.name)
        if prod is not None and prod.prim == "reversed" and isinstance(
                prod.args[0], Var):
            prod = self.vm.facts.producer.get(prod.args[0].name)
        n = prod.args[0] if prod is not None and prod.prim == "range" and len(
            prod.args) == 1 and not prod.params else None
        if not isinstance(n, Var) or not self.vm.batched(n) or self.vm.rank(n) != 0 or (
                loop_breaks(s.body)):
            raise self.vm.fail(s, NoBatchRule(
                "a loop over a batched range other than `range(n)` (n one int per "
                "example, no `break`)",
                "loop to the largest count and keep each example's values past its "
                "own count with np.where, or compute the count outside the vmapped "
                "function"))
        return n.name

    def masked_loop(self, s: For, body_ir: list[Stmt], flag: str | None,
                    carried: list[tuple[str, str]], out: list[Any],
                    count: str | None = None) -> None:
        """A loop the examples leave at different iterations.  Every example runs
        each iteration; one that has left keeps its values (``np.where``), and the
        loop ends when every example has left.  A ``while`` on a batched test keeps
        that test as the mask of examples still running::

            while np.any(test):
                <body>
                y = np.where(test, y_2, y)
                test = test & ~breaking & test_2

        and a ``for`` with a ``break`` under a batched test a mask of those done::

            for i in range(n):
                <body>
                s = np.where(done, s, s_2)
                done = done | breaking
                if np.all(done):
                    break

        and a loop over a batched count ``range(n)`` runs the largest count, an
        example running ``n`` of the iterations: the first ones, or the last ones
        where the body pops a list a loop the examples left apart pushed, so that the
        entries pushed after an example had left (the list's top) are popped while it
        waits::

            n_max = np.max(n)
            for step in range(n_max):
                running = step >= n_max - n
                <body>
                y = np.where(running, y_2, y)
        """
        test = s.test.name if s.test is not None else None
        if test is not None and self.vm.rank(s.test) != 0:
            raise self.vm.fail(s, NoBatchRule(
                "a `while` whose condition is an array per example",
                "reduce the condition to one truth value per example (np.all, np.any)"))
        # arrays written in place: the writes keep the done examples' elements
        roots = set(self.vm.fn.aliases.values())
        buffers = {e for e, x in carried if self.vm.fn.aliases.get(e, e) in roots
                   and self.vm.fn.aliases.get(e, e) == self.vm.fn.aliases.get(x, x)}
        body: list[Any] = []
        before = self._values_at_start(body_ir, carried, buffers, body)
        self.vm.lane_loops.add(id(s))
        self.vm.lane_align[id(s)] = "first"  # (its steps an example runs: see _count_mask)
        done = test is None and count is None  # a mask of the examples done
        target = s.target
        if count is not None:
            target, mask, steps = self._count_mask(s, body_ir, count, out, body)
        elif test is None:
            n = self.vm.use_batch_size()
            mask = self.vm.names.fresh("done")
            out.append(Line(f"{mask} = np.full({n}, False)"))
            self.vm.ranks[(mask, ())] = 0
        else:
            mask = test
        self.vm.b[mask] = {()}
        self.vm.write_masks.append((mask, done))
        try:
            self.vm.block(body_ir, body)
        finally:
            self.vm.write_masks.pop()
        for st in walk(body_ir):  # the lists it pushed: which steps are real for whom
            if isinstance(st, Let) and st.prim == "append" and isinstance(
                    st.args[0], Var):
                root = self.vm.fn.aliases.get(st.args[0].name, st.args[0].name)
                self.vm.list_align[root] = self.vm.lane_align[id(s)]
        test_exit = self._keep_left(s, carried, buffers, before, (mask, done), body)
        if count is not None:
            out.append(Block(f"for {target} in {steps}:", body, []))
            return
        leaving = None
        if flag is not None:
            leaving = f"~{flag}" if self.vm.batched(Var(flag)) else f"(not {flag})"
        if test is not None:
            assert test_exit is not None  # (a while loop carries its test)
            parts = [test] + ([leaving] if leaving else []) + [str(test_exit)]
            body.append(Line(f"{test} = {' & '.join(parts)}"))
            out.append(Block(f"while {_any(test)}:", body, []))
            return
        body.append(Line(f"{mask} = {mask} | {flag}"))
        body.append(Block(f"if {_all(mask)}:", [Line("break", keep=True)], []))
        out.append(Block(f"for {s.target} in {self.vm._iter_text(s.iter)}:", body, []))

    def _values_at_start(self, body_ir: list[Stmt], carried: list[tuple[str, str]],
                         buffers: set[str], body: list[Any]) -> dict[str, str]:
        """Values a nested loop (or a join) rebinds: their value at the start, named."""
        before = {}
        rebound = {st.target for st in walk(body_ir) if isinstance(st, Let)} | {
            n for st in walk(body_ir) if isinstance(st, For) for n, _ in st.carried} | {
            n for st in walk(body_ir) if isinstance(st, If) for n in st.joins}
        for e, x in carried:
            if (e == x or e in rebound) and e not in buffers:
                before[e] = self.vm.names.fresh(f"{e}_before")
                body.append(Line(f"{before[e]} = {e}"))
                if (e, ()) in self.vm.ranks:
                    self.vm.ranks[(before[e], ())] = self.vm.ranks[(e, ())]
                self.vm.b[before[e]] = set(self.vm.b.get(e, set()))
        return before

    def _keep_left(self, s: For, carried: list[tuple[str, str]], buffers: set[str],
                   before: dict[str, str], masking: tuple[str, bool], body: list[Any]) -> Any:
        """An example that has left keeps its values (``np.where`` on the mask, one
        of the examples running or, ``done``, of those done); the while-test's exit."""
        mask, done = masking
        test_exit = None
        for e, x in carried:
            if e == (s.test.name if s.test is not None else None):
                test_exit = x
                continue
            if e in buffers:
                continue
            old, new = (before[e], e) if e == x else (before.get(e, e), x)
            try:
                rank = self.vm.rank(Var(e))
                if done:
                    old, new = new, old  # np.where(done, the value kept, the new one)
                kept = [align(self.vm, Var(v), rank) for v in (mask, new, old)]
                line = f"{e} = np.where({', '.join(kept)})"
                if _none_at_entry(self.vm, e):  # (still None: no example has bound it)
                    fresh = old if done else new
                    line = f"{e} = {fresh} if {e} is None else np.where({', '.join(kept)})"
            except NoBatchRule as err:
                raise self.vm.fail(s, err) from None
            body.append(Line(line))
        return test_exit

    def _count_mask(self, s: For, body_ir: list[Stmt], count: str, out: list[Any],
                    body: list[Any]) -> tuple[str, str, str]:
        """The loop variable, the mask of the examples running and the steps, for a
        loop over ``range(count)`` with ``count`` batched (see ``masked_loop``).

        An example runs its first ``count`` steps (``i < count``; over
        ``reversed(range(...))`` its last ones, with the same indexes), except in a
        loop that pops lists a masked loop pushed with its examples in their first
        steps: the entries of the examples that had left are on top, so each runs
        its last ``count`` steps (the backward of a ``while``, ``for _ in
        range(n_iter)``)."""
        top = self.vm.names.fresh(f"{count}_max")
        out.append(Line(f"{top} = np.max({count})"))
        mask = self.vm.names.fresh("running")
        self.vm.ranks[(mask, ())] = 0
        read = any(s.target in uses(st) for st in walk(body_ir))
        prod = self.vm.facts.producer.get(s.iter.name)
        backwards = prod is not None and prod.prim == "reversed"
        popped = {self.vm.list_align.get(self.vm.fn.aliases.get(st.args[0].name,
                                                          st.args[0].name))
                  for st in walk(body_ir) if isinstance(st, Let) and st.prim == "pop"}
        # the steps each example runs: its indexes i < count where it reads them,
        # else the other end than the entries it pops were pushed from
        align = "last" if backwards else "first"
        if popped and not read:
            align = "first" if popped == {"last"} else "last"
        elif popped and popped != {"first" if align == "last" else "last"}:
            raise self.vm.fail(s, NoBatchRule(
                "a loop over a batched count that pops a list and reads its index"))
        self.vm.lane_align[id(s)] = align
        if read:
            body.append(Line(f"{mask} = {s.target} < {count}"))
            steps = f"range({top})"
            return s.target, mask, f"reversed({steps})" if backwards else steps
        step = self.vm.names.fresh("step")
        if align == "first":
            body.append(Line(f"{mask} = {step} < {count}"))
        else:  # the entries pushed after an example had left are on top
            body.append(Line(f"{mask} = {step} >= {top} - {count}  # its last {count} "
                             "steps"))
        return step, mask, f"range({top})"

    def _carried_ranks(self, s: For, carried: list[tuple[str, str]],
                       state: dict[str, set], masked: bool,
                       after: dict[str, int]) -> list[Any]:
        """Check the ranks of the values ``s`` carries.  A batched one whose rank an
        iteration changes: its first iteration run apart (``PeelFirst``), else
        refused.  An unbatched one (the loop runs as written) whose rank after the
        loop depends on whether it ran (``acc = 0.0`` before it): the lines that
        raise ``OtherPath`` on a call where it ran where the probe's did not, or the
        reverse (the caller makes that call's code), where the loop runs once per
        call and the caller asked for such code; ``after`` gets the rank such a value
        has after the loop, on the probe's path."""
        guards: list[Any] = []
        for entry, exit_ in carried:
            probed = (self.vm.ranks.get((entry, ())), self.vm.ranks.get((exit_, ())))
            ranks = probed
            if ranks[1] is None and ranks[0] is not None:  # (an exit the probe never made)
                ranks = (ranks[0], _inferred_rank(self.vm, exit_))
            if self.vm.kind(entry) != LEAF or None in ranks or ranks[0] == ranks[1]:
                continue
            if not state.get(entry):
                ran = _probe_ran(self.vm, s)
                if ran is None:
                    continue
                # after the loop, `entry` has the exit's rank where the probe's loop
                # ran (the probe recorded the rank it had before)
                after[entry] = ranks[1] if ran else ranks[0]
                if not masked and self.vm.spec.path_guards and any(
                        t is s for t in self.vm.fn.body):
                    guards.append(Block(f"if np.ndim({entry}) != {after[entry]}:", [Line(
                        f"raise OtherPath({entry!r}, {ran})", keep=True)], []))
                continue
            if not masked and _peelable(self.vm, s):
                raise PeelFirst(s)  # (vmap runs the first iteration apart)
            raise _rank_changes(self.vm, s, entry, ranks, masked)
        return guards

    def _check_masked_carry(self, s: For, entry: str) -> None:
        kind = self.vm.kind(entry)
        if kind != LEAF and not isinstance(kind, Seq):
            raise self.vm.fail(s, NoBatchRule(
                f"`{entry}` is a container (list, tuple or dict) carried by a loop "
                "whose exit depends on batched values",
                "carry its arrays as separate names, or loop to a fixed count"))

    def _check_masked_body(self, s: For, body: list[Stmt]) -> None:
        """A loop whose examples stop at different iterations runs the body for the
        stopped ones too: values are kept per example and writes `y[i] = v` keep the
        stopped ones' elements, but `np.add.at` cannot; lists are pushed for every
        example (checked to pop per example what it pushed: ``TapeOrder``)."""
        for st in walk(body):
            if isinstance(st, Let) and st.prim == "add_at":
                name = atom_text(st.args[0])
                raise self.vm.fail(st, NoBatchRule(
                    f"a write into `{self.vm.fn.aliases.get(name, name)}` in a loop whose "
                    "exit depends on batched values (the examples that have left the "
                    "loop would be written too)",
                    "compute the new array as a value (np.where(mask, new, old), "
                    "np.concatenate), or loop to a fixed count and mask with np.where"))
        # the values a `break` leaves are the body's ends on its path (the normalizer
        # moves what follows a breaking `if` into its other branch)
        for brk in loop_breaks(s.body):
            env = _path_aliases(s.body, brk) or {}
            copies = dict(brk.copies)
            for e, x in s.carried:
                if s.test is not None and e == s.test.name:
                    continue
                if _resolve(env, x) != _resolve(env, copies.get(e, e)):
                    raise self.vm.fail(brk, NoBatchRule(
                        f"a `break` leaving `{e}` unlike the end of the loop body "
                        "under a batched test",
                        "set a flag and test it instead of breaking"))

    def _lower_breaks(self, stmts: list[Stmt], flag: str, bound: bool
                      ) -> tuple[list[Stmt], bool]:
        """The body with each ``break`` (of this loop, not nested ones) replaced by
        ``flag = True``: an ``if`` holding one joins ``flag``, its other paths bind
        ``flag = False`` (where nothing earlier on the path has bound it)."""
        out: list[Stmt] = []
        for st in stmts:
            if isinstance(st, Break):
                out.append(Let(flag, "identity", (Const(True, "True"),), {}, st.loc))
                bound = True
            elif isinstance(st, If) and (loop_breaks(st.body) or loop_breaks(st.orelse)):
                branches = []
                for branch in (st.body, st.orelse):
                    if loop_breaks(branch):
                        branches.append(self._lower_breaks(branch, flag, bound)[0])
                    else:
                        branches.append(list(branch) + ([] if bound else [Let(
                            flag, "identity", (Const(False, "False"),), {}, st.loc)]))
                joins = st.joins + ([] if flag in st.joins else [flag])
                lowered = If(st.test, branches[0], branches[1], st.loc, joins)
                own = self.vm.branches.origin.get(id(st), (st, st))[1]
                self.vm.branches.origin[id(lowered)] = (lowered, own)
                out.append(lowered)
                bound = True
            else:
                out.append(st)
        return out, bound


def _any(mask: str) -> str:
    """``np.any(mask)``, spelled with primitives s2s reads back (emitted code is
    transformed again: ``vmap(vmap(f))``)."""
    if lookup_object(np.any):
        return f"np.any({mask})"
    return f"np.count_nonzero({mask}) > 0"


def _all(mask: str) -> str:
    if lookup_object(np.all):
        return f"np.all({mask})"
    return f"np.count_nonzero(~{mask}) == 0"


def _path_aliases(stmts: list[Stmt], brk: Break) -> dict[str, str] | None:
    """The copies ``a = b`` on the path through ``stmts`` that reaches ``brk`` (None
    where ``brk`` is not in them): what each name holds there."""
    env: dict[str, str] = {}
    found = False
    for st in stmts:
        if st is brk:
            found = True
        elif isinstance(st, If) and not found:
            for branch in (st.body, st.orelse):
                sub = _path_aliases(branch, brk)
                if sub is not None:
                    env.update(sub)
                    found = True
                    break
        elif isinstance(st, Let) and st.prim == "identity" and isinstance(
                st.args[0], Var):
            env[st.target] = st.args[0].name
    return env if found else None


def _resolve(env: dict[str, str], name: str) -> str:
    for _ in range(len(env) + 1):
        if name not in env:
            break
        name = env[name]
    return name


def _start_items_batched(prod: Let, paths: set) -> set | None:
    """The batched leaves every item of a list has as it enters a loop (``paths``:
    its batched paths there, by index for ``[a, b]``, by ``"*"`` otherwise); None
    where its items differ."""
    if prod.prim != "make_list" or not prod.args:
        return {p[1:] for p in paths if p[:1] == (SEQ_ITEM,)} if not any(
            p[:1] != (SEQ_ITEM,) for p in paths) else None
    per_item = [{p[1:] for p in paths if p[:1] in ((k,), (SEQ_ITEM,))}
                for k in range(len(prod.args))]
    return per_item[0] if all(s == per_item[0] for s in per_item) else None


def stacked_items(name: str, kind: Seq, paths: set, n: str) -> str:
    """``[... for item in name]`` with the item's leaves at ``paths`` stacked n times."""
    item = kind.item
    leaves = leaf_paths(item)
    if unpackable(item):  # `for (v0, v1) in tape_bar`: one name per leaf
        names = {p: "v" + "".join(str(k) for k in p) for p in leaves}
        target = unpack_text(item, names)
    else:  # a dict among the leaves: read them by key
        names, target = {p: path_text("v", p) for p in leaves}, "v"
    value = literal(item, lambda p: f"np.stack([{names[p]}] * {n})" if p in paths else names[p])
    return f"[{value} for {target} in {name}]"


def _stacked(vm: Any, s: For, entry: str, at_entry: dict) -> str:
    """``entry``, a value the loop ``s`` makes batched, repeated for every example.

    A Python number (``acc = 0.0``, ``acc = 0``) is weakly typed, in NumPy as in JAX:
    each example's ``acc + x[i] * w`` keeps ``x``'s float32.  Stacked, it would be a
    float64 (int64) array that promotes the sum; it is made in the dtype NumPy gives
    the number with the batched arrays its next value is computed from instead
    (``acc * np.ones(n, x.dtype)``).  So is its tangent (``np.zeros_like`` of the
    number: a float64 zero, where JAX's is a symbolic zero of the weak type).  A
    number that only a batched test makes batched (a counter of a ``while``) is the
    number stacked, as each example's is."""
    n = vm.use_batch_size()
    number = _weak_start(vm, entry)
    like = _batched_sources(vm, s, entry, at_entry) if number is not None else []
    if not like:
        return f"np.stack([{entry}] * {n})"
    ones = " * ".join(f"np.ones({n}, {u}.dtype)" for u in like)
    if _made_by(vm, entry, "zeros_like"):  # (a zero of the number's type: `np.inf * 0`
        zero = {bool: "False", int: "0", float: "0.0"}.get(type(number.value), "0j")  # is NaN)
        return f"{zero} * {ones.replace('np.ones', 'np.zeros', 1)}"
    return f"{entry} * {ones}"


def _batched_sources(vm: Any, s: For, entry: str, at_entry: dict) -> list[str]:
    """The arrays batched before the loop ``s`` that the next value of its carried
    ``entry`` is computed from (through the loop's statements and carried values)."""
    made: dict[str, list[Let]] = {}  # (an `if`'s paths bind one name twice)
    for t in walk(s.body):
        if isinstance(t, Let):
            made.setdefault(t.target, []).append(t)
    exits = dict(effective_carried(s))
    todo, seen, found = [exits.get(entry, entry)], set(), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in made:
            todo += [u for t in made[name] for u in uses(t)]
        elif name in exits and name != entry:
            todo.append(exits[name])  # (another carried value: what it is made from)
        elif at_entry.get(name) and vm.kind(name) == LEAF:
            found.add(name)
        elif isinstance(vm.kind(name), Seq) and at_entry.get(name):
            found.add(_first_item_leaf(name, at_entry[name]))  # (a list the loop walks)
        if isinstance(vm.kind(name), Seq):  # (a list the loop appends to: its items)
            todo += [t.args[1].name for ts in made.values() for t in ts if t.prim == (
                "append") and t.args[0] == Var(name) and isinstance(t.args[1], Var)]
    return sorted(found)


def _first_item_leaf(name: str, paths: set) -> str:
    """A batched leaf of the list ``name``'s first item (NumPy's dtype for the weak
    number: a 0.0 standing for the list empty, whose loop then runs no step)."""
    path = min(paths, key=len)
    item = "".join(f"[{0 if k == SEQ_ITEM else repr(k)}]" for k in path)
    return f"np.asarray({name}{item} if len({name}) else 0.0)"


def _made_by(vm: Any, name: str, prim: str) -> bool:
    """Is ``prim`` among the statements ``_weak_start`` follows from ``name``?"""
    let, seen = vm.facts.producer.get(name), set()
    while let is not None and let.prim != prim and let.args and isinstance(
            let.args[0], Var) and let.target not in seen:
        seen.add(let.target)
        let = vm.facts.producer.get(let.args[0].name)
    return let is not None and let.prim == prim


def _weak_start(vm: Any, name: str) -> Const | None:
    """The Python number written in the code (``acc = 0.0``) that ``name`` is, or whose
    ``np.zeros_like`` it is; None for anything else."""
    seen = set()
    while name not in seen:
        seen.add(name)
        let = vm.facts.producer.get(name)
        if let is None or let.prim not in ("identity", "zeros_like") or len(
                let.args) != 1 or let.params:
            return None
        arg = let.args[0]
        if isinstance(arg, Const):
            return arg if type(arg.value) in (bool, int, float, complex) and arg.text else None
        if not isinstance(arg, Var):
            return None
        name = arg.name
    return None


def _rank_changes(vm: Any, s: For, entry: str, ranks: tuple, masked: bool) -> Any:
    """The refusal of a loop ``s`` whose batched carried value ``entry`` changes rank
    (``ranks``: before it, after an iteration).  Where the loop is of code s2s
    emitted (a gradient's, pushing its tape), ``peel_at_source``: the transform that
    emitted it may peel its source's loop (api/transformed.py)."""
    why = "its batched code has one rank"
    if not vm.spec.path_guards and peelable(vm.fn, s):
        why += (" (its first iteration runs apart only where each call may get code of "
                "its own: not where another transform reads the vmap's code, nor in a "
                "function called in a loop)")
    err = vm.fail(s, NoBatchRule(
        f"`{entry}` changes rank in the loop (rank {ranks[0]} before it, {ranks[1]} "
        f"after an iteration): {why}",
        "start it with the shape it has after an iteration "
        "(np.zeros_like(...), np.full(shape, value))"))
    err.peel_at_source = not masked and bool(vm.spec.path_guards) and (
        id(s) not in vm.spec.peeled)
    return err


def _unrun(vm: Any, s: For) -> bool:
    """Is ``s`` a loop the probe's example ran no iteration of, over a count the
    same for every example, run once per call, where the caller asked for code
    made per path (``runtime.OtherPath``)?"""
    return bool(vm.spec.path_guards or vm.spec.unprobed_guards) and not vm.write_masks and (
        s.test is None and s.iter is not None and not vm.batched(s.iter)) and (
        any(t is s for t in vm.fn.body)) and _probe_ran(vm, s) is False


def _unrun_guard(vm: Any, s: For) -> Block:
    """The code of ``s`` (``_unrun``) whose body's ranks the probe never saw (a
    generator that yields nothing on this call): for the calls that run no
    iteration, raising ``OtherPath`` on one that runs an iteration (the caller makes
    that call's code, probed on it)."""
    guard = Line(f"raise OtherPath({'iterations of ' + s.target!r}, True)", keep=True)
    return Block(f"for {s.target} in {vm._iter_text(s.iter)}:", [guard], [])


def _probe_ran(vm: Any, s: For) -> bool | None:
    """Whether the probe's example ran an iteration of ``s``, a loop over a
    ``range`` (None: not known)."""
    prod = vm.facts.producer.get(s.iter.name) if s.iter is not None else None
    if prod is not None and prod.prim == "reversed" and isinstance(prod.args[0], Var):
        prod = vm.facts.producer.get(prod.args[0].name)  # (a backward sweep's)
    if prod is None or prod.prim != "range" or prod.params:
        return None
    values = vm.ranks.get(VALUES) or {}
    bounds = [a.value if isinstance(a, Const) else values.get(a.name) for a in prod.args]
    if not all(type(b) is int for b in bounds):
        return None
    return len(range(*bounds)) > 0


def _peelable(vm: Any, s: For) -> bool:
    """Whether ``s``'s first iteration can run apart (ir/peel.py): a loop the
    function runs once per call, not peeled already, where the batched code may
    be made per path of the ``if`` on its count (a loop running no iteration
    leaves the value's rank as it was).  A loop of code s2s emitted (jacfwd's
    JVP) is peeled where that code comes from instead (``peel_at_source``): its
    first iteration's zero tangents are then zeros the code leaves out."""
    emitted = s.loc is not None and str(s.loc.file).startswith("<s2s:")
    return bool(vm.spec.path_guards) and id(s) not in vm.spec.peeled and (
        not emitted and peelable(vm.fn, s))


def _inferred_rank(vm: Any, name: str) -> int | None:
    try:
        return vm.rank(Var(name))
    except NoBatchRule:
        return None


def _none_at_entry(vm: Any, entry: str) -> bool:
    """Does a loop's carried ``entry`` hold ``None`` when the loop starts (``x_new =
    None`` before a ``while`` whose body binds it)?"""
    prod = vm.facts.producer.get(entry)
    return isinstance(prod, Let) and prod.prim == "identity" and isinstance(
        prod.args[0], Const) and prod.args[0].value is None


def _empty_field(producer: dict, name: str, depth: int = 0) -> bool:
    """Is ``name`` an empty list read from an object's field (``c["out"]`` of ``c =
    {"out": []}``, or of a constructor's record whose ``self.out = []``), so that a
    loop appending batched items to it batches them all (as a local ``out = []``)?"""
    prod = producer.get(name)
    if not isinstance(prod, Let) or depth > 8:
        return False
    if prod.prim == "make_list":
        return not prod.args
    if prod.prim == "identity" and isinstance(prod.args[0], Var):
        return _empty_field(producer, prod.args[0].name, depth + 1)
    items = getattr(prod.params.get("index"), "items", ()) if prod.prim == "getitem" else ()
    if len(items) != 1 or not isinstance(items[0], Const) or not isinstance(
            prod.args[0], Var):
        return False
    key, src = items[0].value, producer.get(prod.args[0].name)
    if isinstance(src, Let) and src.prim == "call" and src.params.get("callee") is not None:
        body = src.params["callee"].body
        ret = body[-1] if body else None  # (a constructor's record: its returned dict)
        src = next((s for s in walk(body) if isinstance(s, Let) and isinstance(
            getattr(ret, "value", None), Var) and s.target == ret.value.name), None)
        producer = {s.target: s for s in walk(body) if isinstance(s, Let)}
    keys = list(src.params.get("keys", ())) if isinstance(src, Let) and (
        src.prim == "make_dict") else []
    if key not in keys:
        return False
    item = src.args[keys.index(key)]
    if isinstance(item, Const):
        return type(item.value) is list and not item.value
    return isinstance(item, Var) and _empty_field(producer, item.name, depth + 1)
