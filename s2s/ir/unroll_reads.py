"""A tuple or list of this call's structure read by a key known only when the code runs
(an IR pass's part, ``ir/unroll.py``).

``xs[i]`` (a loop's counter s2s does not unroll, ``xs[i - 1]`` in a loop kept, a
counter of a ``while``) is read as ``np.stack([xs[0], xs[1], ...])[i]``: items of one
shape (NumPy refuses others at the stack, located as ``StackShapeError``), its
derivative the stack's and the row's, as JAX's of ``jnp.stack(xs)[i]``.  Of a list of
tuples (``pairs[i][0]``, ``w, b = pairs[i]``), one stack per position, and the read is
the tuple of their rows.

The stack is made once where the list does not change between reads: before the
outermost loop around the read that binds neither the list's name nor its items (a
loop of ``n`` reads of ``n`` items copied ``n * n`` values, one stack per read), and
reused by later reads of the same name in the same block.  A name bound again (a list
rebuilt, an item written, a loop carrying it) is stacked again.
"""

from __future__ import annotations

from typing import Any

from .kinds import LEAF, Tree
from .names import bound_names
from .nodes import Const, For, Index, Let, Var


def run_time_key(u: Any, s: Let) -> bool:
    """Is ``s`` ``xs[i]`` of a tuple or list of arrays (or of tuples of arrays, one
    length each) of this call's structure (``u``: the unroller), by a key known only
    when the code runs?"""
    if s.prim != "getitem" or not isinstance(s.args[0], Var):
        return False
    kind, index = u.trees.get(s.args[0].name), s.params["index"]
    chain = u.chains.get(s.args[0].name)
    if kind is None and chain and s.args[0].name not in u.carried:
        # a list built by appending, its items known this call (`[v * 2 for v in ys]`)
        kind = u.trees[s.args[0].name] = Tree(list, tuple(range(len(chain))), tuple(
            u.trees.get(a.name, LEAF) if isinstance(a, Var) else LEAF for a in chain))
    if not (isinstance(kind, Tree) and kind.type in (tuple, list) and kind.keys):
        return False
    positions = _positions(kind)
    return positions is not None and len(index.items) == 1 and isinstance(
        index.items[0], Var) and not index.is_tuple and (
            not index.unpack or index.unpack == len(positions or ())) and (
        not index.attribute and index.items[0].name not in u.constants and not any(
            isinstance(a, Const) for a in u.literals.get(s.args[0].name, ())))  # (keys)


def _positions(kind: Tree) -> tuple | None:
    """``()`` where every item is an array; the positions of the items' tuples where
    every item is a flat tuple (or list) of arrays with those positions; else None."""
    if not any(isinstance(c, Tree) for c in kind.children):
        return ()
    first = kind.children[0]
    if all(isinstance(c, Tree) and c.type in (tuple, list) and c.keys == first.keys and
           c.keys and not any(isinstance(g, Tree) for g in c.children)
           for c in kind.children):
        return tuple(first.keys)
    return None


class StackedReads:
    """The stacks made for run-time reads so far (per block), and the loops around the
    statement being read, where a stack may be placed before one of them."""

    def __init__(self, u: Any) -> None:
        self.u = u
        self.stacks: dict[str, tuple[str, ...]] = {}  # list name -> its stacks' names
        self.columns: dict[str, tuple[str, ...]] = {}  # list name -> its stacks' lists
        self.loops: list[tuple[set[str], list[Let]]] = []  # (names bound, placed before)

    def enter(self, s: For) -> None:
        bound = set(bound_names(s.body)) | {e for e, _ in s.carried} | {s.target}
        for name in bound:
            self.stacks.pop(name, None)
        self.loops.append((bound, []))

    def leave(self) -> list[Let]:
        """The stacks to place before the loop just left."""
        return self.loops.pop()[1]

    def rebound(self, name: str) -> None:
        self.stacks.pop(name, None)

    def read(self, s: Let) -> tuple[list[Let], Let]:
        """The statements to place before ``s`` (none where the stacks are made
        already, or are placed before a loop around it), and the read itself."""
        u, base = self.u, s.args[0]
        stacks = self.stacks.get(base.name)
        here: list[Let] = []
        if stacks is None:
            made, stacks, columns = self._stacks(s)
            made = [u.let(t) for t in made]
            outside = None
            for bound, placed in reversed(self.loops):
                if base.name in bound:
                    break
                outside = placed
            (here if outside is None else outside).extend(made)
            self.stacks[base.name], self.columns[base.name] = stacks, columns
        if len(stacks) == 1 and not _positions(u.trees[base.name]):
            # (the row, then the item as Python reads the list: a Python number where
            # the item is one, weak as Python's: runtime.list_item)
            row = u.let(Let(u.names.fresh(f"{s.target}_row"), "getitem", (Var(stacks[0]),),
                            s.params, s.loc))
            return here + [row], Let(s.target, "list_item", (
                Var(row.target), base, s.params["index"].items[0]), {}, s.loc)
        rows, items = [], []
        plain = {**s.params, "index": Index(s.params["index"].items, False)}
        key = s.params["index"].items[0]
        for stacked, column in zip(stacks, self.columns[base.name]):
            row = Let(u.names.fresh(f"{s.target}_row"), "getitem", (Var(stacked),), plain,
                      s.loc)
            rows.append(row)  # (each position's item as Python reads it, as above)
            items.append(Let(u.names.fresh(f"{s.target}_item"), "list_item", (
                Var(row.target), Var(column), key), {}, s.loc))
        here += [u.let(t) for t in rows + items]
        return here, Let(s.target, "make_tuple", tuple(Var(t.target) for t in items), {},
                         s.loc)

    def _stacks(self, s: Let) -> tuple[list[Let], tuple[str, ...], tuple[str, ...]]:
        u, base = self.u, s.args[0]
        kind = u.trees[base.name]
        out: list[Let] = []
        items = []
        for k in kind.keys:
            item = u.names.fresh(f"{base.name}_item")
            out.append(Let(item, "getitem", (base,), {"index": _at(k)}, s.loc))
            items.append(item)
        positions = _positions(kind)
        columns: list[list[str]] = [items] if not positions else []
        for p in positions or ():
            column = []
            for item in items:
                part = u.names.fresh(f"{item}_{p}")
                out.append(Let(part, "getitem", (Var(item),), {"index": _at(p)}, s.loc))
                column.append(part)
            columns.append(column)
        stacks, lists = [], []
        for column in columns:
            listed = u.names.fresh(f"{base.name}_items")
            stacked = u.names.fresh(f"{base.name}_stacked")
            out.append(Let(listed, "make_list", tuple(Var(n) for n in column), {}, s.loc))
            out.append(Let(stacked, "stack", (Var(listed),), {}, s.loc))
            stacks.append(stacked)
            lists.append(listed)
        return out, tuple(stacks), tuple(lists)


def _at(key: Any) -> Index:
    return Index((Const(key, repr(key)),), False)
