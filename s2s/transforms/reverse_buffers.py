"""Reverse mode's writes in place and lists: ``y[i] = v`` (and ``np.add.at``) undone
after its backward, ``ys.append(v)`` and ``v = ys.pop()`` turned around on the
list's cotangent (one Python list, popped and appended in place).
"""

from __future__ import annotations

from typing import Any

from ..emit.code import Block, Comment, Line
from ..errors import TransformError
from ..ir.kinds import LEAF, Seq, Tree, leaf_paths, literal, path_text, unpack_text, unpackable
from ..ir.nodes import Const, For, Function, If, Let, Slice, Stmt, Var
from ..ir.spelling import atom_text
from ..ir.walk import all_bodies, all_lets, all_reads
from .paths import decided
from .reverse_state import ReverseState, Sweep, elem_name


class Buffers:
    """The backward of one reverse pass's writes in place and list operations."""

    def __init__(self, state: ReverseState, sweep: Sweep) -> None:
        self.state = state
        self.sweep = sweep  # (a write's own backward: its rule)
        # ``v = ys.pop()`` is ``v = ys[-1]`` then ``ys2 = pop(ys)``: id(pop) -> v
        self.popped: dict[int, str] = pop_pairs(state.fn.body)
        # ``q = list(ys)``, then a statement reading ``ys`` in the same block (``ys[k]``,
        # an `if` or a loop that reads it): id(that statement) -> [(ys, q)]
        self.copies_read: dict[int, list[tuple[str, str]]] = copies_before_reads(
            state.fn.body)
        # reads ``ys[k]`` of a copied list met before the copy's cotangent is bound
        # (``q.pop()`` between them): q -> [(the read, its cotangent, the tests of the
        # paths it is bound on)], added at the copy, on those paths
        self.deferred: dict[str, list[tuple[Let, dict, frozenset]]] = {}

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
            if base.name in adj and adj[base.name].get(()) != seq:
                # (the list before the append used another way too: one cotangent)
                out += self.state.add_lists(adj[base.name][()], seq)
                return out
            adj[base.name] = {(): seq}  # the same list, one element shorter
        return out

    def unread_growth(self, s: Let, adj: dict) -> list[Any]:
        """``ys.append(v)`` whose list nothing after reads, the last change of a list
        whose items are read before it (``a = hs[0]; hs.append(...)``): the list's
        cotangent starts as zeros here, so that undoing the append pops one item and
        the read finds the list as it was."""
        fn, facts = self.state.fn, self.state.facts
        root = fn.aliases.get(s.target, s.target)
        if s.target not in facts.active or not isinstance(facts.kinds.get(s.target), Seq) \
                or not unchanged_after(fn, s.target, s) or not any(
                t.prim == "getitem" and isinstance(t.args[0], Var) and t.target in facts.active
                and fn.aliases.get(t.args[0].name, t.args[0].name) == root
                for t in all_lets(fn.body)):
            return []
        seq = self.state.canonical_name(s.target, ())
        self.state.owned.add(seq)
        adj[s.target] = {(): seq}
        return [Line(f"{seq} = zeros_list({s.target})")]

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

    def item(self, s: Let, g: dict[tuple, str], adj: dict) -> list[Any]:
        """``v = ys[-1]`` of a list grown in a loop: v's cotangent is added to the list
        cotangent's last item (popped, and appended back with it: list operations
        every transform reads again).  That list has as many items as ``ys`` had
        here (the appends after this read were undone first, each popping its
        item); where nothing after the read gave the list a cotangent, it starts as
        zeros, which is the list as it was only if no append or pop follows the
        read."""
        out: list[Any] = []
        base = s.args[0].name
        if _holds_lists(self.state.facts.kinds[base].item):
            # (the item's cotangent is a list: `+` would join the two, a wrong gradient)
            raise TransformError(
                f"reading an item of `{self.state.fn.aliases.get(base, base)}`, a list "
                "grown in a loop whose items are lists of their own length: reverse mode "
                "does not add their cotangent lists item by item yet", s.loc,
                "append arrays instead (`rows.append(np.stack(row))`), or a tuple of "
                "arrays")
        seq = adj.get(base, {}).get(())
        copies = [q for b, q in self.copies_read.get(id(s), ()) if b == base]
        if seq is None and copies and isinstance(self.state.facts.kinds.get(copies[-1]), Seq):
            # ``q = list(ys)`` before the read, changed since (``q.pop()``): its
            # cotangent is bound at the copy, where this read adds into it (share_copy)
            self.deferred.setdefault(copies[-1], []).append((s, dict(g), self.state.context))
            return []
        if seq is None:
            seq = self._zeros_at_read(s, out)
            adj[base] = {(): seq}
        if last_item_read(s, self.state.facts.kinds[base]):
            last = self.state.names.fresh(f"{s.target}_bar_last")
            out += [Line(f"{last} = {seq}.pop()"), Line(f"{seq}.append({last} + {g[()]})")]
            return out
        # another item (`hs[0]`, `hs[i - 1]`): the cotangent list has the length the
        # list had at the read, so the same index names the same item
        k = atom_text(s.params["index"])
        item = self.state.facts.kinds[base].item
        if not isinstance(s.params["index"].items[0], Slice):
            # (an item that is a tuple: each leaf, those with a cotangent added to)
            value = literal(item, lambda p: path_text(f"{seq}[{k}]", p) + (
                f" + {g[p]}" if p in g else ""))
            out.append(Line(f"{seq}[{k}] = {value}"))
            return out
        # a slice (`hs[1:]`, a list): each of its items' cotangents to its position
        positions = self.state.names.fresh(f"{s.target}_positions")
        j, p = self.state.names.fresh("j"), self.state.names.fresh("p")
        out.append(Line(f"{positions} = range(len({seq}))[{k}]"))
        out.append(Block(f"for {j} in range(len({positions})):", [
            Line(f"{p} = {positions}[{j}]"),
            Line(f"{seq}[{p}] = {seq}[{p}] + {g[()]}[{j}]"),
        ], []))
        return out

    def _zeros_at_read(self, s: Let, out: list[Any]) -> str:
        """The cotangent list of the list ``s`` reads, started as its items' zeros: the
        list as it was at the read only if no append or pop follows it."""
        base = s.args[0].name
        if not read_is_last(self.state.fn, s):
            name = self.state.fn.aliases.get(base, base)
            raise TransformError(
                f"reading an item of the list `{name}` grown in a loop, where the "
                "list grows after the read (outside a loop that reads it) and "
                "nothing after reads it: reverse mode would need the list as it "
                "was here", s.loc,
                f"read the items after `{name}` stops growing, or np.stack({name}) "
                "and index the array",
            )
        seq = self.state.canonical_name(base, ())
        out.append(Line(f"{seq} = zeros_list({base})"))
        self.state.owned.add(seq)
        return seq

    def share_copy(self, s: Stmt, adj: dict) -> list[Any]:
        """Before the backward of ``s``, which reads ``ys`` after ``q = list(ys)``
        (its block's): where ``ys`` has no cotangent yet and ``q``'s is bound, ``ys``'s
        is that list.  It has the items ``ys`` has here (``q``'s cotangent, undone back
        to the copy), both cotangents end up in ``ys``'s (copied()), and a read adds
        into one list in place: nothing of ``ys`` is read back (``zeros_list(ys)``
        would save the list on the tape, a list of another length at each iteration,
        and bind a second cotangent list that the loop hands on).  At the copy: the
        reads of ``ys`` it deferred (item()), added to that list."""
        out: list[Any] = []
        if isinstance(s, Let) and s.target in self.deferred:
            seq, base = adj.get(s.target, {}).get(()), s.args[0].name
            reads = self.deferred.pop(s.target)
            if base not in adj:  # (no cotangent of the copy: ys's zeros, as without it)
                adj[base] = {(): seq or self._zeros_at_read(reads[0][0], out)}
            for read, g, context in reads:
                if read.loc is not None:
                    out.append(Comment(read.loc.text.strip()))
                lines = self.item(read, g, adj)  # (a read under an `if`: there only)
                out += decided(frozenset({context}), self.state.context,
                               lambda holds, lines=lines: lines if holds else [],
                               self.state.facts.test_order)
        for base, copy in self.copies_read.get(id(s), ()):
            seq = adj.get(copy, {}).get(())
            if seq is not None and base not in adj and base in self.state.facts.active and all(
                    isinstance(self.state.facts.kinds.get(v), Seq) for v in (base, copy)):
                adj[base] = {(): seq}
        return out

    def copied(self, s: Let, adj: dict) -> list[Any] | None:
        """``q = list(ys)`` of a list grown in a loop: the copy's cotangent, item by
        item, is ``ys``'s.  ``q`` is defined here, so its cotangent list is read by
        nothing before (in the forward) and becomes ``ys``'s (added to it where
        ``ys`` is used after the copy too): the backward reads neither ``ys`` nor its
        length, and a loop that copies the list it grows saves no list on its tape.
        None where the rule runs (``list`` of an array's rows)."""
        (arg,) = s.args
        seq = adj[s.target].get(())
        if seq is None or not isinstance(arg, Var) or not isinstance(
                self.state.facts.kinds.get(arg.name), Seq):
            return None
        if arg.name not in self.state.facts.active:
            return []
        current = adj.get(arg.name, {}).get(())
        if current is None:
            adj[arg.name] = {(): seq}
            return []
        if current == seq:  # (a read of ``ys`` after the copy added into it: item())
            return []
        return self.state.add_lists(current, seq)

    def setitem(self, s: Let, adj: dict[str, dict[tuple, str]]) -> list[Any]:
        """Differentiate ``y[i] = v`` (or ``np.add.at(y, i, v)``), then put back what
        it overwrote: the code before it, differentiated next, reads the array as it
        was.  (Elements ``np.add.at`` adds to more than once get their one saved value
        back from each place.)"""
        out: list[Any] = []
        if isinstance(self.state.facts.kinds.get(s.target), Seq):
            # (a list's items are read into names, and later code may pop it: its old
            # item is not put back)
            return self._list_item_written(s, adj)
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


    def _list_item_written(self, s: Let, adj: dict) -> list[Any]:
        """``ys[k] = v`` into a list grown in a loop: ``v``'s cotangent is the list
        cotangent's item ``k``, which is zero before the write (the item it
        replaced reached nothing after)."""
        out: list[Any] = []
        seq = adj.pop(s.target, {}).get(())
        if seq is None or s.target not in self.state.facts.active:
            return out
        base, value = s.args
        k = atom_text(s.params["index"])
        item = self.state.facts.kinds[s.target].item
        if isinstance(value, Var) and value.name in self.state.facts.active:
            part = self.state.names.fresh(f"{value.name}_bar")
            out.append(Line(f"{part} = {seq}[{k}]"))
            for p in leaf_paths(item):
                self.state.accumulate(value.name, p, path_text(part, p), adj, out)
        zeros = literal(item, lambda p: f"np.zeros_like({path_text(f'{seq}[{k}]', p)})")
        out.append(Line(f"{seq}[{k}] = {zeros}"))
        if isinstance(base, Var) and base.name in self.state.facts.active:
            adj[base.name] = {(): seq}  # the same list, its item k replaced
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


def _in_branches(s: If) -> list[Stmt]:
    """The statements of ``s``'s branches and of the ``if``s in them, in no loop."""
    out: list[Stmt] = []
    for st in s.body + s.orelse:
        out += _in_branches(st) if isinstance(st, If) else [] if isinstance(
            st, For) else [st]
    return out


def copies_before_reads(stmts: list[Stmt]) -> dict[int, list[tuple[str, str]]]:
    """id of each statement that reads ``ys`` after ``q = list(ys)`` in its block (an
    item ``ys[k]``; an `if` or a loop reading ``ys`` anywhere inside) -> [(ys, q)]
    (share_copy checks the kinds, and that the copy's cotangent is bound there)."""
    found: dict[int, list[tuple[str, str]]] = {}
    for body in all_bodies(stmts):
        copies: dict[str, str] = {}
        for s in body:
            if isinstance(s, Let) and s.prim == "getitem" and isinstance(
                    s.args[0], Var) and s.args[0].name in copies:
                found[id(s)] = [(s.args[0].name, copies[s.args[0].name])]
            elif isinstance(s, (If, For)) and copies:
                read = all_reads([s])
                found[id(s)] = [(b, q) for b, q in copies.items() if b in read]
                if isinstance(s, If):  # (an item read in its branches, in no loop:
                    for inner in _in_branches(s):  # deferred to the copy there too)
                        if isinstance(inner, Let) and inner.prim == "getitem" and (
                                isinstance(inner.args[0], Var)
                                and inner.args[0].name in copies):
                            found.setdefault(id(inner), []).append(
                                (inner.args[0].name, copies[inner.args[0].name]))
            if isinstance(s, Let) and s.prim == "list" and isinstance(s.args[0], Var):
                copies[s.args[0].name] = s.target
    return found


def read_is_last(fn: Function, read: Let) -> bool:
    """Does no ``append`` or ``pop`` of the list ``read`` reads follow it: none later
    in program order, none in a loop around it (its next iteration)?"""
    return unchanged_after(fn, read.args[0].name, read)


def unchanged_after(fn: Function, var: str, read: Any) -> bool:
    """Does no ``append`` or ``pop`` of the list ``var`` follow the statement
    ``read``: none later in program order, none in a loop around it (but one that
    makes the list anew, ``row = []``: a later iteration grows another list)?"""
    root = fn.aliases.get(var, var)

    def changes(s: Any) -> bool:
        return isinstance(s, Let) and s.prim in ("append", "pop") and \
            fn.aliases.get(s.args[0].name, s.args[0].name) == root

    def made_in(loop: For) -> bool:  # (at each iteration, and not carried to the next)
        return any(isinstance(t, Let) and t.target == root and t.prim in (
            "make_list", "list") for t in loop.body) and all(
            fn.aliases.get(x, x) != root for _, x in loop.carried)

    found: list[bool] = []  # at the read: a change in a loop around it; then each later

    def walk(stmts: list[Stmt], loops: list[For]) -> None:
        for s in stmts:
            if s is read:  # (a loop that makes the list anew: each iteration's its own)
                found.append(any(changes(t) for loop in loops if not made_in(loop)
                                 for t in all_lets(loop.body)))
                continue  # (a loop's own changes come before its end)
            if found and changes(s):
                found.append(True)
            for body in _bodies(s):
                walk(body, loops + [s] if isinstance(s, For) else loops)

    walk(fn.body, [])
    return bool(found) and not any(found)


def _holds_lists(kind: Any) -> bool:
    """Does a value of this structure hold a list grown in a loop?"""
    if isinstance(kind, Seq):
        return True
    return isinstance(kind, Tree) and any(_holds_lists(c) for c in kind.children)


def _bodies(s: Any) -> list[list[Stmt]]:
    if isinstance(s, For):
        return [s.body]
    if isinstance(s, If):
        return [s.body, s.orelse]
    return []


def last_item_read(s: Let, kind: Any) -> bool:
    """Is ``s`` a read ``ys[-1]`` of an array item of a list grown in a loop?"""
    index = s.params.get("index")
    items = index.items if index is not None else ()
    return leaf_paths(kind.item) == [()] and len(items) == 1 and not index.is_tuple \
        and isinstance(items[0], Const) and items[0].value == -1 and \
        type(items[0].value) is int


def item_read(s: Let, kind: Any) -> bool:
    """Is ``s`` a read ``ys[k]`` (an integer ``k``: a constant or a value) of an
    array item of a list grown in a loop?"""
    index = s.params.get("index")
    if index is None or index.is_tuple or len(index.items) != 1:
        return False
    k = index.items[0]
    if leaf_paths(kind.item) != [()] and not (unpackable(kind.item) and not isinstance(
            k, Slice)):  # (an item that is a tuple of arrays: leaf by leaf)
        return False
    return isinstance(k, (Var, Slice)) or isinstance(k, Const) and type(k.value) is int
