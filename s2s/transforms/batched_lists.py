"""vmap's list and container statements, and writes: a list's pushes and pops, the
literals that build tuples, lists and dicts and the reads of their items (each keeps
track of which of its leaves are batched), ``np.stack`` and the other functions of a
list of arrays (each item batched or repeated, the axis moved past the batch axis), and
``y[i] = v`` (into a batched ``y`` as ``y[:, i] = v``; under a loop the examples leave
apart, the examples that have left keep their elements)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..emit.code import Line
from ..ir.kinds import LEAF, Seq, Tree, leaf_paths
from ..ir.nodes import Const, Let, Slice, Var, walk
from ..ir.spelling import atom_text, index_text
from ..primitives.batching import (
    NoBatchRule,
    align,
    batched_items,
    broadcast_along,
    in_separated_order,
    joined_rows,
    separated_lead,
    shifted,
    static,
)
from .batched_loops import SEQ_ITEM, stacked_items
from .batched_masks import masked_add, masked_read, masked_write


class ListBatching:
    """The vmap transform's handler of lists, containers and writes (a mixin of
    vmap._Vmap)."""

    def append(self, s: Let, out: list[Any]) -> None:
        """``ys.append(v)``: a known-length list gets a slot, a grown one its items'."""
        if s.args[0].name in self.items:
            self.items[s.target] = self.items[s.args[0].name] + [s.args[1]]
        base, item = s.args
        kind = self.kind(s.target)
        paths = set(self.b.get(base.name, set()))
        item_paths = self.b.get(item.name, set()) if isinstance(item, Var) else set()
        if isinstance(kind, Tree):  # a list of known length: a slot per item
            n = len(kind.keys) - 1
            paths |= {(n,) + p for p in item_paths}
        else:  # a list grown in a loop: its items' batched leaves, under "*"
            paths = self._as_grown(base, kind, paths, out)
            new = {p for p in item_paths if (SEQ_ITEM,) + p not in paths}
            if new and isinstance(kind, Seq):
                # the items it holds already lack those leaves' batch axis (zero
                # cotangents of a popped list, a list that starts with an unbatched
                # item): theirs repeated for every example, so all items agree
                n = self.use_batch_size()
                out.append(Line(f"{base.name} = {stacked_items(base.name, kind, new, n)}"))
            paths |= {(SEQ_ITEM,) + p for p in item_paths}
            s = self._repeated_item(s, paths, item_paths, out)
        if paths:
            self.b[s.target] = paths
        if self.write_masks:  # (under batched control flow: see TapeOrder)
            text = self.replay.statements([s])[0].text
            out.append(Line(f"{text}  # every example pushes; junk for those off "
                            "this path", keep=True))
            return
        out += self.replay.statements([s])

    def _repeated_item(self, s: Let, paths: set, item_paths: set, out: list[Any]) -> Let:
        """``ys.append(v)`` of an unbatched array ``v`` into a list whose items are
        batched (a zero tangent beside the argument's): ``v`` repeated for every
        example first, so all items agree."""
        item = s.args[1]
        if (SEQ_ITEM,) not in paths or () in item_paths or not isinstance(item, Var) or (
                self.kind(item.name) != LEAF):
            return s
        name = self.names.fresh(f"{item.name}_each")
        out.append(Line(f"{name} = np.stack([{item.name}] * {self.use_batch_size()})"))
        return Let(s.target, s.prim, (s.args[0], Var(name)), s.params, s.loc)

    def _as_grown(self, base: Var, kind: Any, paths: set, out: list[Any]) -> set:
        """The batched paths of ``base``, a list of known length (``ys = [a]``) that an
        ``if`` joins with a grown one, as a grown list's (under ``*``); an unbatched
        item beside batched ones repeated for every example first."""
        base_kind = self.kind(base.name)
        if not (isinstance(kind, Seq) and isinstance(base_kind, Tree)
                and base_kind.type is list and base_kind.keys):
            return paths
        per_item = [{p[1:] for p in paths if p[:1] == (k,)} for k in base_kind.keys]
        every = set().union(*per_item)
        if every and any(p != every for p in per_item):
            if leaf_paths(kind.item) != [()]:
                raise NoBatchRule("a list that holds batched and unbatched containers")
            n = self.use_batch_size()
            items = [f"{base.name}[{k}]" if p else f"np.stack([{base.name}[{k}]] * {n})"
                     for k, p in zip(base_kind.keys, per_item)]
            out.append(Line(f"{base.name} = [{', '.join(items)}]"))
        return {(SEQ_ITEM,) + p for p in every} | {p for p in paths if p[:1] == (SEQ_ITEM,)}

    def same_list(self, s: Let, out: list[Any]) -> None:
        if self.b.get(s.args[0].name):
            self.b[s.target] = set(self.b[s.args[0].name])
        out += self.replay.statements([s])

    def seq_item(self, s: Let, out: list[Any]) -> bool:
        """An item of a list grown in a loop: its batched leaves are the items'."""
        if not isinstance(s.args[0], Var) or not isinstance(self.kind(s.args[0].name), Seq):
            return masked_read(self, s, out)  # (an array's item: getitem's rule)
        if any(isinstance(a, Var) and self.batched(a) for a in s.params["index"].atoms()):
            raise self.fail(s, NoBatchRule(
                "reading a list grown in a loop at a per-example index",
                "np.stack the list and index the array (np.take_along_axis)"))
        paths = self.b.get(s.args[0].name, set())
        if isinstance(self.kind(s.target), Seq):  # a slice (`hs[1:]`): a list of them
            self.b[s.target] = set(paths)
        else:
            self.b[s.target] = {p[1:] for p in paths if p[:1] == (SEQ_ITEM,)}
        out += self.replay.statements([s])
        return True

    def seq_length(self, s: Let, out: list[Any]) -> bool:
        """``len(hs)`` of a list grown in a loop, or of a tuple, list or dict whose
        structure is known (``len(row)`` of a grown list's tuple item): its length, the
        same for every example (not its items' batch size)."""
        if not isinstance(s.args[0], Var) or not isinstance(
                self.kind(s.args[0].name), (Seq, Tree)):
            return False
        self.b.pop(s.target, None)
        out += self.replay.statements([s])
        return True

    def identity_test(self, s: Let, out: list[Any]) -> None:
        self.b.pop(s.target, None)
        out += self.replay.statements([s])

    def identity(self, s: Let, out: list[Any]) -> None:
        self.b[s.target] = set(self.b.get(s.args[0].name, set()))
        out += self.replay.statements([s])

    def list_copy(self, s: Let, out: list[Any]) -> bool:
        """A copy of a list or tuple (not an array's rows): its items keep their axes."""
        if not (isinstance(s.args[0], Var) and self.kind(s.args[0].name) != LEAF):
            return False
        self.b[s.target] = set(self.b.get(s.args[0].name, set()))
        if s.args[0].name in self.items:
            self.items[s.target] = list(self.items[s.args[0].name])
        out += self.replay.statements([s])
        return True

    def container(self, s: Let, out: list[Any]) -> None:
        kind = self.facts.stmt_kind(s)  # (an if's join another path grows: known here)
        assert isinstance(kind, Tree)
        if s.prim == "make_list" and isinstance(self.kind(s.target), Seq) and s.args:
            self._grown_from(s, out)
            return
        self.b[s.target] = {
            (key,) + p for key, a in zip(kind.keys, s.args)
            if isinstance(a, Var) for p in self.b.get(a.name, set())
        }
        out += self.replay.statements([s])

    def _grown_from(self, s: Let, out: list[Any]) -> None:
        """``hs = [x]`` that a loop grows from here on (its items read as a grown
        list's, ``hs[-1]``): batched as one, under ``*``; an unbatched item beside a
        batched one is repeated for every example."""
        item_paths = [self.b.get(a.name, set()) if isinstance(a, Var) else set()
                      for a in s.args]
        every = set().union(*item_paths)
        if every:
            self.b[s.target] = {(SEQ_ITEM,) + p for p in every}
        if all(p == every for p in item_paths):
            out += self.replay.statements([s])
            return
        if leaf_paths(self.kind(s.target).item) != [()]:
            raise self.fail(s, NoBatchRule(
                "a list that starts with batched and unbatched containers"))
        n = self.use_batch_size()
        items = [atom_text(a) if p else f"np.stack([{atom_text(a)}] * {n})"
                 for a, p in zip(s.args, item_paths)]
        out.append(Line(f"{s.target} = [{', '.join(items)}]"))

    def tree_item(self, s: Let, out: list[Any]) -> bool:
        if not isinstance(s.args[0], Var) or not isinstance(self.kind(s.args[0].name), Tree):
            return False
        key = self.facts.container_key(s, self.kind(s.args[0].name))
        self.b[s.target] = {p[1:] for p in self.b.get(s.args[0].name, set())
                            if p[:1] == (key,)}
        out += self.replay.statements([s])
        return True

    def joined(self, s: Let) -> str:
        """Functions of a list of arrays: each item batched (or repeated), the axis
        moved past the batch axis."""
        seq = s.args[0]
        kind = self.kind(seq.name) if isinstance(seq, Var) else LEAF
        if isinstance(kind, Tree) and isinstance(seq, Var) and seq.name in self.items:
            atoms = self.items[seq.name]
            if s.prim in ("array", "asarray", "stack") and any(
                    _built_list(self, a) for a in atoms):  # (`np.array([[a, b], [c, d]])`)
                items, rank = nested_items(self, atoms)
            else:
                rank = max(self.rank(a) for a in atoms)
                items = batched_items(self, atoms, rank)
            seq_text = "[" + ", ".join(items) + "]"
        elif isinstance(kind, Tree) and kind.type in (list, tuple) and isinstance(
                seq, Var) and all(c == LEAF for c in kind.children):
            rank = max((self.rank(seq, (k,)) for k in kind.keys), default=0)
            seq_text = "[" + ", ".join(self._tree_item(seq.name, k, rank)
                                       for k in kind.keys) + "]"
        elif isinstance(kind, Seq) or kind == LEAF:
            if isinstance(kind, Seq) and not self.b.get(seq.name):
                raise NoBatchRule("internal: unbatched list")
            seq_text = atom_text(seq)
            rank = self.rank(seq) - 1 if kind == LEAF else self._seq_rank(seq.name)
            if kind == LEAF and s.prim == "array":  # np.array(x) of an array
                return f"np.array({seq_text})"
            return joined_rows(self, s, rank)  # an array's rows, or a list's items
        else:
            raise NoBatchRule(f"`{s.prim}` of a list the function did not build")
        if s.prim in ("array", "asarray", "stack"):
            axis = static(s, "axis", 0)
            axis = axis + 1 if axis >= 0 else axis
            return f"np.stack({seq_text}, axis={axis})"
        if s.prim == "concatenate":
            axis = static(s, "axis", 0)
            if axis is None:
                raise NoBatchRule("np.concatenate with axis=None")
            return f"np.concatenate({seq_text}, axis={shifted(axis, rank)})"
        if s.prim == "hstack":
            return f"np.concatenate({seq_text}, axis={1 if rank <= 1 else 2})"
        return f"np.concatenate({seq_text}, axis=1)" if rank >= 2 else \
            f"np.stack({seq_text}, axis=1)"

    def _tree_item(self, name: str, key: int, rank: int) -> str:
        """Item ``key`` of a tuple or list argument, as ``batched_items`` spells an
        item of a list the function built: batched ones aligned, others repeated."""
        text, seq = f"{name}[{key}]", Var(name)
        missing = rank - self.rank(seq, (key,))
        if self.batched(seq, (key,)):
            return f"{text}[:{', None' * missing}]" if missing > 0 else text
        return broadcast_along(self, text, missing)

    def _seq_rank(self, name: str) -> int:
        key = (name, (0,))
        root = self.fn.aliases.get(name, name)
        for k in (key, (root, (0,))):
            if k in self.ranks:
                return self.ranks[k]
        for st in walk(self.fn.body):  # (appended only in a loop the probe ran no
            if isinstance(st, Let) and st.prim == "append" and isinstance(  # iteration
                    st.args[0], Var) and self.fn.aliases.get(  # of: what it appends)
                    st.args[0].name, st.args[0].name) == root:
                try:
                    return self.rank(st.args[1])
                except NoBatchRule:
                    continue
        raise NoBatchRule(f"the rank of the items of `{name}` is unknown (empty list)")

    def setitem(self, s: Let, out: list[Any]) -> None:
        """``y[i] = v``: into a batched ``y`` as ``y[:, i] = v``; an unbatched ``y``
        receiving a batched value is first given a batch axis."""
        if isinstance(self.kind(s.target), Seq):
            self._list_item(s, out)
            return
        base, value = s.args
        index = s.params["index"]
        per_example = [a for a in index.atoms() if isinstance(a, Var) and self.batched(a)]
        if per_example and not self._scalar_indexes(s):
            if masked_write(self, s, out):  # at a per-example mask: np.where
                return
            raise self.fail(s, NoBatchRule("writing at a batched index"))
        if not self.batched(base) and not self.batched(value) and not (
                self.write_masks):
            out += self.replay.statements([s])
            return
        name = atom_text(base)
        if not self.batched(base):
            n = self.use_batch_size()
            out.append(Line(f"{name} = np.stack([{name}] * {n})"))
        inner = index_text(index).rstrip(",")
        first = index.items[0] if index.items else None
        if per_example:  # one element per example: y[np.arange(n), k] (k batched)
            n = self.use_batch_size()
            target = f"{name}[np.arange({n}), {inner}]"
        elif isinstance(first, Const) and first.value is Ellipsis:
            if self.write_masks:
                raise self.fail(s, NoBatchRule(
                    "a write at `...` in a loop whose exit depends on batched values",
                    "write the leading axes as `:`"))
            target = f"{name}[{inner}]"
        else:
            target = f"{name}[:, {inner}]" if inner else f"{name}[:]"
        v = atom_text(value)
        lead = None if per_example or target.startswith(f"{name}[{inner}]") else \
            separated_lead(self, index)
        try:
            rank = self._selected_rank(s) if self.batched(value) or self.write_masks \
                or lead is not None else 0
            if lead is not None and self.write_masks:
                raise NoBatchRule("writing through index arrays separated by slices "
                                  "under an `if` on a batched value, or in a loop whose "
                                  "exit depends on batched values", "index in two steps")
            if lead is not None:  # the region's batch axis follows the arrays' axes
                v = in_separated_order(self, value, rank, lead)
            elif self.batched(value):  # its per-example axes line up with the region's
                v = align(self, value, rank)
            if self.write_masks:  # examples that have left the loop keep theirs
                mask = " & ".join(("~" if done else "") + align(self, Var(m), rank)
                                  for m, done in self.write_masks)
                v = f"np.where({mask}, {v}, {target})"
        except NoBatchRule as err:
            raise self.fail(s, err) from None
        out.append(Line(f"{target} = {v}", keep=True))
        self.b[s.target] = {()}
        self.b[base.name] = {()}

    def masked_add(self, s: Let, out: list[Any]) -> bool:
        return masked_add(self, s, out)  # (at a per-example mask: batched_masks.py)

    def _list_item(self, s: Let, out: list[Any]) -> None:
        """``ys[k] = v`` into a list grown in a loop: its items and ``v`` batched
        alike (the side that lacks a batch axis repeated for every example)."""
        base, value = s.args
        if any(isinstance(a, Var) and self.batched(a) for a in s.params["index"].atoms()):
            raise self.fail(s, NoBatchRule("writing into a list at a batched index"))
        if self.write_masks:
            raise self.fail(s, NoBatchRule(
                "writing an item of a list under an `if` on a batched value, or in a loop "
                "whose exit depends on batched values"))
        kind = self.kind(s.target)
        paths = set(self.b.get(base.name, set()))
        value_paths = self.b.get(value.name, set()) if isinstance(value, Var) else set()
        n = None
        new = {p for p in value_paths if (SEQ_ITEM,) + p not in paths}
        if new:  # the items it holds lack those leaves' batch axis
            n = self.use_batch_size()
            out.append(Line(f"{base.name} = {stacked_items(base.name, kind, new, n)}"))
        paths |= {(SEQ_ITEM,) + p for p in value_paths}
        missing = {p[1:] for p in paths if p[:1] == (SEQ_ITEM,)} - set(value_paths)
        written = s
        if missing:  # the value lacks them: repeated for every example
            if leaf_paths(kind.item) != [()]:
                raise self.fail(s, NoBatchRule(
                    "writing an unbatched container into a list of batched ones"))
            n = n or self.use_batch_size()
            v = atom_text(value)
            text = f"{base.name}[{index_text(s.params['index']).rstrip(',')}]"
            out.append(Line(f"{text} = np.stack([{v}] * {n})", keep=True))
            written = None
        if written is not None:
            out += self.replay.statements([s])
        if paths:
            self.b[s.target] = paths

    def _scalar_indexes(self, s: Let) -> bool:
        """Whether ``y[index] = v`` indexes with ints and slices only, its batched
        items one int per example (written as ``y[np.arange(n), k]``)."""
        for item in s.params["index"].items:
            if isinstance(item, Slice):
                if any(isinstance(a, Var) and self.batched(a)
                       for a in (item.lower, item.upper, item.step)):
                    return False
            elif isinstance(item, Const):
                if not isinstance(item.value, (int, np.integer)) or isinstance(
                        item.value, bool):
                    return False
            elif self.batched(item) and self.rank(item) != 0:
                return False
            elif not self.batched(item) and not (
                    item.name in self.facts.int_vars or self.rank(item) == 0):
                return False
        return True

    def _selected_rank(self, s: Let) -> int:
        """Per-example rank of ``y[index]``: ints remove an axis, ``None`` adds one,
        index arrays (adjacent, the same for every example) replace the axes they
        select with their broadcast shape's."""
        rank = self.rank(s.args[0])
        items = s.params["index"].items
        advanced = []
        for k, item in enumerate(items):
            if isinstance(item, Const) and item.value is None:
                rank += 1
            elif isinstance(item, Const) and isinstance(item.value, int):
                rank -= 1
            elif isinstance(item, Var) and (item.name in self.facts.int_vars or (
                    self.rank(item) == 0)):
                rank -= 1  # an int (a scalar index the probe saw)
            elif isinstance(item, Var) or isinstance(item, Const) and isinstance(
                    item.value, (list, tuple, np.ndarray)):
                advanced.append(k)
        if not advanced:
            return rank
        taken, made = 0, 0
        for k in advanced:
            item = items[k]
            if isinstance(item, Var):
                # (a 1-D array selects along one axis, integer or boolean alike)
                if self.rank(item) != 1 or self.batched(item):
                    raise NoBatchRule("writing at an array index into a batched array")
                taken, made = taken + 1, max(made, 1)
            elif np.asarray(item.value).dtype == bool:
                taken, made = taken + np.ndim(item.value), max(made, 1)
            else:
                taken, made = taken + 1, max(made, np.ndim(item.value))
        return rank - taken + made

    # (implemented by vmap._Vmap)
    b: dict[str, set]
    items: dict[str, list[Any]]
    fn: Any
    facts: Any
    ranks: dict[tuple[str, tuple], int]
    replay: Any
    kind: Any
    batched: Any
    rank: Any
    fail: Any
    use_batch_size: Any
    write_masks: list[tuple[str, bool]]


def _built_list(vm: Any, atom: Any) -> bool:
    """Is ``atom`` a list or tuple the function built (its items known)?"""
    return isinstance(atom, Var) and atom.name in vm.items and isinstance(
        vm.kind(atom.name), Tree) and vm.kind(atom.name).type in (list, tuple)


def nested_items(vm: Any, atoms: list[Any]) -> tuple[list[str], int]:
    """The items of a list that ``np.array`` reads, as ``batched_items`` spells them,
    with each item that is itself a list the function built (``[[a, b], [c, d]]``: a
    matrix of scalars) stacked first, past the batch axis (``np.stack([a, c_n],
    axis=1)``, an unbatched list as ``np.array``, repeated); and their per-example
    rank."""
    parts = [_nested(vm, a) for a in atoms]
    rank = max((r for _, r, _ in parts), default=0)
    return [(text if missing <= 0 else f"{text}[:{', None' * missing}]") if batched else
            broadcast_along(vm, text, missing)
            for text, r, batched in parts for missing in (rank - r,)], rank


def _nested(vm: Any, atom: Any) -> tuple[str, int, bool]:
    """``(text, per-example rank, batched)`` of one item of a nested list."""
    if isinstance(atom, Const) and isinstance(atom.value, (list, tuple)):  # ([0.5, 2.0])
        return f"np.array({atom_text(atom)})", int(np.ndim(atom.value)), False
    if not _built_list(vm, atom):
        return (align(vm, atom, vm.rank(atom)) if vm.batched(atom) else atom_text(atom),
                vm.rank(atom), vm.batched(atom))
    inner = vm.items[atom.name]
    if not any(_nested(vm, a)[2] for a in inner):
        text = f"np.array({atom_text(atom)})"
        return text, 1 + max((_nested(vm, a)[1] for a in inner), default=0), False
    items, rank = nested_items(vm, inner)
    return f"np.stack([{', '.join(items)}], axis=1)", rank + 1, True
