"""Reverse mode's shared state: the cotangents one pass has bound, and where.

The collaborators of one pass (reverse_sweep's ``Backward`` and the branches, loops,
tapes, buffers and calls it hands statements to) each hold this object and reach
what they share through it.
"""

from __future__ import annotations

import ast
from typing import Any, Protocol

from ..emit.code import Block, Line
from ..errors import TransformError
from ..ir.kinds import LEAF, Seq, Tree, path_text
from ..ir.names import NameTable
from ..ir.nodes import Function, Let, Stmt, Var
from .analysis import Facts
from .inline import Inliner
from .module import Module
from .paths import decided, simplified, within
from .replay import Replay, is_simple, paren


class Sweep(Protocol):
    """The backward sweep as its collaborators call it back (reverse_sweep.Backward):
    a block's backward, and one statement's by its rule."""

    def block(self, stmts: list[Stmt], adj: dict) -> list[Any]: ...

    def let(self, s: Let, adj: dict) -> list[Any]: ...


class ReverseState:
    """What the collaborators of one reverse pass share: the function, its facts,
    the names and the forward's replay; which cotangent names are the pass's own;
    and where each cotangent is bound (structural zeros).  Its methods add to a
    cotangent (``adj``: var -> leaf path -> the name or text that holds it) and bind
    one on every path."""

    def __init__(self, fn: Function, module: Module, names: NameTable, facts: Facts,
                 replay: Replay) -> None:
        self.fn = fn
        self.module = module
        self.names = names
        self.facts = facts  # activity, kinds, scalar facts (analysis.py)
        self.replay = replay  # the forward sweep's emission, with its tapes
        self.inliner = Inliner(self.names.fresh)
        self.canonical: dict[tuple[str, tuple], str] = {}
        self.owned: set[str] = set()  # cotangent names this pass may reassign
        # cotangent names whose current value is an array this pass allocated and
        # nothing else refers to: index reads may accumulate into them in place
        self.fresh_buffers: set[str] = set()
        self.loop_depth = 0  # loops around the statement being differentiated
        # Structural zeros (JAX's symbolic zeros).  A cotangent that no path from the
        # output reaches on some paths through the `if`s is bound on the others only:
        # ``when[(var, path)]`` is where it is bound (a disjunction of conjunctions of
        # ``(test, branch)`` literals, over the whole function); absent, it is bound
        # wherever the code being emitted runs.  ``context`` is the literals of the
        # `if`s around that code.  The backward of a statement whose cotangent is bound
        # on some paths only runs on those (under the same tests), so a partial that is
        # inf or nan there (sqrt's at 0) is never multiplied by a zero that is not one.
        self.when: dict[tuple[str, tuple], frozenset] = {}
        self.context: frozenset = frozenset()
        # a cotangent one branch of an `if` left unbound, as the join left it: the
        # branches' code (where zeros can still go, as they did before structural
        # zeros were tracked), the name, its condition and the code's context then
        self.unbound_at: dict[tuple[str, tuple], tuple] = {}
        # Cotangents of values from before a loop that the loop may never reach (it
        # breaks first, none of its iterations takes the branch that reads them, a
        # `while` runs no iteration): they start as zeros and a flag says whether an
        # iteration added to them (``r_reached``); their name is bound everywhere, but
        # nonzero only where ``when`` says.  accumulator name -> [flag, loop depth,
        # context, added deeper (in a branch or a nested loop)]
        self.filled: dict[tuple[str, tuple], str] = {}  # zeros put where it was unbound
        self.reach_flags: dict[str, list] = {}
        self.flag_names: set[str] = set()  # (a flag nothing reads is dropped: _Reverse.build)
        self.bound_anyway: set[tuple[str, tuple]] = set()

    def canonical_name(self, var: str, path: tuple) -> str:
        key = (var, path)
        if key not in self.canonical:
            # versions of an array written in place share its name: h_bar, h_bar_2
            stem = "_".join([self.fn.aliases.get(var, var)] + [str(k) for k in path])
            self.canonical[key] = self.names.fresh(f"{stem}_bar")
        return self.canonical[key]

    def zeros_text(self, var: str, path: tuple) -> str:
        """The zero cotangent of one leaf (a list grown in a loop: its items' zeros)."""
        if path == () and isinstance(self.facts.kinds.get(var), Seq):
            return f"zeros_list({var})"
        return f"np.zeros_like({path_text(var, path)})"

    def add_lists(self, into: str, other: str) -> list[Any]:
        """Add the cotangent list ``other`` to ``into``, item by item (two uses of one
        list grown in a loop: ``np.stack(hs)`` and ``hs[0]``; the same length)."""
        j = self.names.fresh("j")
        return [Block(f"for {j} in range(len({into})):", [
            Line(f"{into}[{j}] = {into}[{j}] + {other}[{j}]")], [])]

    def accumulate(
        self, var: str, path: tuple, expr: ast.expr | str, adj: dict, out: list[Any]
    ) -> None:
        """Add a contribution to the cotangent of ``var`` at leaf ``path``."""
        text = expr if isinstance(expr, str) else ast.unparse(expr)
        slots = adj.setdefault(var, {})
        current = slots.get(path)
        key = (var, path)
        if current is not None and self._a_list(var, path):
            self._add_list(var, path, current, text, adj, out)
            return
        if current is not None and key in self.bound_anyway:
            # bound everywhere (zeros where nothing reached it): added to where it runs
            name = current if current in self.owned and current == self.canonical_name(
                var, path) else self.canonical_name(var, path)
            out.append(Line(f"{name} = {current} + {paren(text)}"))
            self.reached(name, out)
            self.owned.add(name)
            slots[path] = name
            self.added_here(key)
            return
        here = within(self.when[(var, path)], self.context) if (
            current is not None and (var, path) in self.when) else None
        at = self.unbound_at.get((var, path))
        if here and at is not None and at[2] == current and self.when[key] <= at[3] and (
                at[4] <= self.context) and var in self.fn.params:
            # an argument's cotangent is returned, never multiplied into a partial: zeros
            # where the `if` left it unbound, and the sum as usual
            self.complete(var, path, adj, out)
            current, here = slots[path], None
        if here:  # bound on some of these paths only: added there, bound anew elsewhere
            name = self.canonical_name(var, path)
            extend(out, decided(here, self.context, lambda holds: [Line(
                f"{name} = {current} + {paren(text)}" if holds else f"{name} = {text}")],
                self.facts.test_order))
            del self.when[(var, path)]
            slots[path] = name
            self.owned.add(name)
            self.fresh_buffers.discard(name)
            return
        if current is None:
            if is_simple(text):
                slots[path] = text
                return
            name = self.canonical_name(var, path)
            out.append(Line(f"{name} = {text}"))
            self.owned.add(name)
            self.fresh_buffers.discard(name)
            slots[path] = name
            return
        name = current if current in self.owned and current == self.canonical_name(
            var, path
        ) else self.canonical_name(var, path)
        out.append(Line(f"{name} = {current} + {paren(text)}"))
        self.reached(current, out)
        self.owned.add(name)
        self.fresh_buffers.add(name)  # `+` allocated a new array
        slots[path] = name

    def added_here(self, key: tuple[str, tuple]) -> None:
        """A cotangent bound everywhere but nonzero only where ``when`` says (a loop
        that may not reach it) was added to in this context: nonzero here too."""
        if key not in self.bound_anyway:
            return
        cond = simplified(self.when[key] | {self.context})
        if within(cond, self.context) is None:
            del self.when[key]
            self.bound_anyway.discard(key)
        else:
            self.when[key] = cond

    def _a_list(self, var: str, path: tuple) -> bool:
        kind = self.facts.kinds.get(var, LEAF)
        for key in path:
            if not isinstance(kind, Tree):
                return False
            kind = kind.child(key)
        return isinstance(kind, Seq)

    def _add_list(self, var: str, path: tuple, current: str, text: str, adj: dict,
                  out: list[Any]) -> None:
        """Two cotangent lists of one list grown in a loop (a tape's tuple holding
        it, and its items read): added item by item into a copy (a list's ``+``
        would join them)."""
        kind = self.facts.kinds.get(var, LEAF)
        for key in path:
            kind = kind.child(key)
        if kind.item != LEAF or (var, path) in self.bound_anyway or (var, path) in self.when:
            raise TransformError(
                f"the list `{self.fn.aliases.get(var, var)}` grown in a loop reaches the "
                "result two ways (inside a container, and by itself), and its items are "
                "containers or only some paths reach it", None,
                "append arrays to the list, and keep it out of other containers")
        name = self.names.fresh(f"{self.fn.aliases.get(var, var)}_bar")
        other = text if is_simple(text) else self.names.fresh(f"{name}_more")
        if other != text:
            out.append(Line(f"{other} = {text}"))
        out.append(Line(f"{name} = list({current})"))
        out += self.add_lists(name, other)
        self.reached(current, out)
        self.owned.add(name)
        adj[var][path] = name

    def accumulate_tree(self, var: str, path: tuple, g: dict[tuple, str],
                        adj: dict, out: list[Any]) -> None:
        """Add cotangent slots ``g`` (relative paths) under ``path`` of ``var``."""
        for sub, text in g.items():
            self.accumulate(var, path + sub, text, adj, out)

    def reached(self, accumulator: str, out: list[Any]) -> None:
        """An iteration added to a loop's accumulator that it may never reach: say so."""
        flag = self.reach_flags.get(accumulator)
        if flag is None:
            return
        out.append(FlagLine(f"{flag[0]} = True"))
        flag[4] = True
        if self.context != flag[2] or self.loop_depth != flag[1]:
            flag[3] = True

    def complete(self, var: str, path: tuple, adj: dict, out: list[Any]) -> None:
        """Bind a cotangent bound on some paths only on every path of the code being
        emitted: zeros on the others (what is read next needs a value everywhere)."""
        cond = self.when.pop((var, path), None)
        text = adj.get(var, {}).get(path)
        if (var, path) in self.bound_anyway:  # its name holds zeros on the other paths
            self.bound_anyway.discard((var, path))
            return
        if cond is None or text is None:
            return
        here = within(cond, self.context)
        if here is None:
            return
        name = self.canonical_name(var, path)
        zeros = self.zeros_text(var, path)
        at = self.unbound_at.pop((var, path), None)
        if at is not None and at[2] == text and cond <= at[3] and at[4] <= self.context:
            # nothing changed it since the `if` that left it unbound: the zeros go
            # into that branch, and the other branch binds the value under the name
            missing, present = at[0], at[1]
            missing.append(Line(f"{name} = {zeros}"))
            self.filled[(var, path)] = name  # (bound everywhere now: see _enter_branch)
            if text != name:
                present.append(Line(f"{name} = {text}"))
            adj[var][path] = name
            self.owned.add(name)
            self.fresh_buffers.discard(name)
            return
        extend(out, decided(here, self.context, lambda holds: (
            [Line(f"{name} = {text}")] if holds and text != name
            else [] if holds else [Line(f"{name} = {zeros}")]), self.facts.test_order))
        adj[var][path] = name
        self.owned.add(name)
        self.fresh_buffers.discard(name)

    def may_be_unbound(self, var: str, path: tuple) -> bool:
        """May this cotangent be left unbound on a path (an array's may; a list's, a
        tape's, is zeros there: see reverse_branches' _join_slot)?"""
        kind = self.facts.kinds.get(var, LEAF)
        for k in path:
            kind = kind.child(k) if isinstance(kind, Tree) else kind
        return kind == LEAF

    def was_filled(self, key: tuple[str, tuple], adj: dict) -> bool:
        """Did complete() bind this cotangent everywhere (zeros where the `if` that
        left it unbound did not reach it) under the name it has here?"""
        name = self.filled.get(key)
        return name is not None and adj.get(key[0], {}).get(key[1]) == name


class FlagLine(Line):
    """``r_reached = True``: an iteration added to an accumulator (see reach_flags)."""


def without_flags(items: list[Any], flags: set[str]) -> list[Any]:
    """``items`` without those flags' lines (in place: code may still be added to
    the lists, see complete())."""
    items[:] = [i for i in items
                if not (isinstance(i, FlagLine) and i.text.split(" = ")[0] in flags)]
    for item in items:
        if isinstance(item, Block):
            without_flags(item.body, flags)
            without_flags(item.orelse, flags)
    return items


def extend(out: list[Any], items: list[Any]) -> None:
    out += items


def elem_name(facts: Facts, result: str, path: tuple) -> str:
    if not path:
        return result
    prod = facts.producer.get(result)
    if prod is not None and prod.prim in ("make_tuple", "make_list"):
        a = prod.args[path[0]]
        if isinstance(a, Var):
            return a.name
    return f"{result}_{path[0]}"
