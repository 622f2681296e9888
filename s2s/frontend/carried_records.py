"""A container a loop carries, carried as its leaves (issue 23).

``for _ in range(3): m = Model(np.sin(m.w2))`` rebinds an object the function built
(a record: the dict of its fields), a dict or a tuple in each iteration.  Its
structure is the same in every iteration (its keys are known when the function is
normalized), so the loop carries its fields, one name each, as a hand-written loop
would (``w, w2 = m.w, m.w2`` before it); the body builds the container again from
them where it starts (``m = {"w": m_w, "w2": m_w2}``, no copy), reads the fields of
the one it made where it ends, and after the loop the container is made again from
the last fields.  The transforms then see a loop carrying arrays: reverse mode walks
it backwards as any loop, vmap batches each field.

A container whose structure the loop changes (a key added in the body), or whose
structure is not known here (a join of an ``if`` in the body, a list, which the
function may append to), stays carried whole (reverse mode refuses it, located).
"""

from __future__ import annotations

from typing import Any

from ..errors import TransformError
from ..ir.names import rename
from ..ir.nodes import Break, Const, For, If, Index, Let, Stmt, Var
from .built_objects import returned_dict


def structure(n: Any, name: str) -> tuple | None:
    """``("dict", keys, params)`` or ``("tuple", length, params)`` of the container
    ``name`` holds, where the function built it; None otherwise."""
    for _ in range(8):
        let = n.lets.get(name)
        if not isinstance(let, Let) or let.target != name:
            break
        if let.prim == "identity" and isinstance(let.args[0], Var):
            name = let.args[0].name
            continue
        nested = _field_record(n, let)  # (`n.l1`: a field of a record holding one)
        if nested is not None:
            return nested
        item = _item_of(n, let)
        if item is not None:  # (an item of a dict or tuple built here)
            name = item
            continue
        made = returned_dict(let.params.get("callee")) if let.prim == "call" else None
        if made is not None and "built" in made.params:  # (`d = d.scaled(0.9)`: the
            keys = tuple(made.params["keys"])  # record the method returns, one class's)
            return ("dict", keys, {"keys": keys, "built": made.params["built"]})
        if let.prim == "make_tuple" and name not in n.lists:
            return ("tuple", len(let.args), dict(let.params))
        keys = n.dicts.known(name)
        if keys is not None and let.prim == "make_dict" and "from_items" not in let.params:
            built = {"built": let.params["built"]} if "built" in let.params else {}
            return ("dict", tuple(keys), {"keys": tuple(keys), **built})
        break
    return None


def _item_of(n: Any, let: Let) -> str | None:
    """The name ``let`` reads out of a container the function built (``getitem`` of
    a constant key or position), else None."""
    index = let.params.get("index") if let.prim == "getitem" else None
    items = getattr(index, "items", None)
    if not items or len(items) != 1 or not isinstance(items[0], Const) or not isinstance(
            items[0].value, str) or not isinstance(let.args[0], Var):  # (a field's name)
        return None
    base = n.lets.get(let.args[0].name)
    if not isinstance(base, Let) or base.target != let.args[0].name:
        return None
    key = items[0].value
    if base.prim == "make_dict" and key in tuple(base.params.get("keys", ())):
        found = base.args[list(base.params["keys"]).index(key)]
    elif base.prim == "make_tuple" and type(key) is int and -len(base.args) <= key < len(
            base.args):
        found = base.args[key]
    else:
        return None
    return found.name if isinstance(found, Var) else None


def _field_record(n: Any, let: Let) -> tuple | None:
    """The structure of ``m.l1`` read out of a record ``m`` whose field ``l1`` holds
    an object its constructor built (``Built.fields``)."""
    index = let.params.get("index") if let.prim == "getitem" else None
    items = getattr(index, "items", None)
    if not items or len(items) != 1 or not isinstance(items[0], Const) or not isinstance(
            items[0].value, str) or not isinstance(let.args[0], Var):  # (a field's name)
        return None
    outer = structure(n, let.args[0].name)
    built = outer[2].get("built") if outer is not None and outer[0] == "dict" else None
    inner = getattr(built, "fields", None) or {}
    made = inner.get(items[0].value)
    if made is None or not hasattr(made, "cls") or not getattr(made, "keys", None):
        return None
    keys = tuple(made.keys)
    return ("dict", keys, {"keys": keys, "built": made})


def _leaves(kind: str, shape: Any) -> list:
    return list(shape) if kind == "dict" else list(range(shape))


def _index(key: Any) -> dict:
    return {"index": Index((Const(key, repr(key)),), False)}


def _make(kind: str, params: dict) -> tuple[str, dict]:
    return ("make_dict", params) if kind == "dict" else ("make_tuple", params)


def split_carried(n: Any, carried: list[tuple[str, str]], body: list[Stmt],
                  node: Any) -> tuple[list[tuple[str, str]], list[tuple[str, str, tuple]]]:
    """Carry each container of ``carried`` as its leaves: emits the leaves' reads
    before the loop (into ``n.out``), rewrites ``body`` (in place) and returns the
    new carried pairs and what ``rebuild_after`` makes after the loop."""
    out: list[tuple[str, str]] = []
    after: list[tuple[str, str, tuple]] = []
    work = list(carried)
    while work:  # (a field that is itself a record: split again)
        entry, exit_ = work.pop(0)
        before, end = structure(n, entry), structure(n, exit_)
        if before is not None and end is not None and entry != exit_ and (
                _class(before) is not _class(end)):
            raise _class_changes(n, node, entry, _class(before), _class(end))
        if before is None or end is None or before[:2] != end[:2] or entry == exit_:
            out.append((entry, exit_))
            continue
        kind, shape, params = before
        keys = _leaves(kind, shape)
        ins = [n.emit(n.names.fresh(f"{entry}_{k}"), "getitem", (Var(entry),), _index(k),
                      node).name for k in keys]
        outs = [n.names.fresh(f"{exit_}_{k}") for k in keys]
        at = _bound_at(body, exit_)  # (the end's leaves read where it is made: a break
        # after it leaves with them, so reverse mode hands the loop's end to them once)
        _split_breaks(n, body, entry, ins, keys, node,
                      (exit_, outs) if at is not None else None)  # (before the renaming)
        inside = n.names.fresh(entry)
        _rename_reads(body, entry, inside)
        prim, made = _make(kind, end[2] if kind == "dict" else params)
        made = {**made, **({"built": params["built"]} if "built" in params else {})}
        head = Let(inside, prim, tuple(Var(v) for v in ins), made, n.loc(node))
        n.lets[inside] = head
        tail = [Let(o, "getitem", (Var(exit_),), _index(k), n.loc(node))
                for o, k in zip(outs, keys)]
        if at is None:
            body.extend(tail)
        else:
            body[at + 1:at + 1] = tail
        body.insert(0, head)
        for let in tail:
            n.lets[let.target] = let
        work += list(zip(ins, outs))
        after.append((entry, prim, (tuple(ins), made)))
    check_assumed(n, out)
    return out, after


def _class_changes(n: Any, node: Any, entry: str, before: Any, end: Any) -> Exception:
    """``m = B(m.w)`` in a loop over an ``A`` made before it: the body's ``m.f()``
    was lowered as ``A.f``, which Python calls only in the first iteration."""
    name = next((u for u, ssa in n.env.items() if ssa == entry), entry)
    spell = lambda c: f"`{c.__name__}` object" if c is not None else "dict"  # noqa: E731
    return n.unsupported(node, f"`{name}` holds a {spell(before)} where the loop starts "
                         f"and a {spell(end)} after an iteration: s2s resolves its "
                         "methods and fields by one class for every iteration",
                         "keep one class in the loop (convert before or after it)")


def _class(shape: tuple) -> Any:
    """The class of a record's ``structure`` (None: a dict or tuple of no class)."""
    return getattr(shape[2].get("built"), "cls", None)


def check_assumed(n: Any, carried: list[tuple[str, str]]) -> None:
    """Each tuple a loop rebinds whose items a comprehension in its body read for its
    length before the loop (``static.StaticReader.local_items``) is carried as its
    leaves, so it holds as many items in every iteration; else a located refusal."""
    whole = set()
    for entry, _ in carried:  # (those left whole; an entry may be a copy, own_entries)
        for _ in range(8):
            whole.add(entry)
            let = n.lets.get(entry)
            if not (isinstance(let, Let) and let.prim == "identity" and isinstance(
                    let.args[0], Var)):
                break
            entry = let.args[0].name
    for ssa, length, node in n.assumed_lengths:
        if ssa in whole:
            raise TransformError(
                f"this walks `{node.value}`, a tuple of {length} items before the loop, "
                "which the loop rebinds to a value whose length s2s cannot tell is the "
                "same in every iteration", n.loc(node),
                f"rebind `{node.value}` to a tuple of {length} items in every iteration "
                "(a literal, or `tuple(...)` of a comprehension over it), or index it",
                n.display)


def rebuild_after(n: Any, after: list[tuple[str, str, tuple]], node: Any) -> None:
    """After the loop, each split container made again from its leaves' last values:
    the names that held it now hold the new one."""
    rebuilt: dict[str, str] = {}
    for entry, prim, (ins, made) in reversed(after):  # (a field's record first)
        name = rebuilt[entry] = n.names.fresh(entry)
        n.emit(name, prim, tuple(Var(rebuilt.get(v, v)) for v in ins), made, node)
        if prim == "make_dict":
            n.dicts.keys[name] = tuple(made["keys"])
        for user, ssa in list(n.env.items()):
            if ssa == entry:
                n.env[user] = name


def _rename_reads(stmts: list[Stmt], old: str, new: str) -> None:
    """Reads of ``old`` in the body (it is bound before the loop, never in it)."""
    rename(stmts, old, new)


def _bound_at(body: list[Stmt], name: str) -> int | None:
    """The position of the statement of ``body`` (not of a nested block) that binds
    ``name``: a ``Let``, or an ``if`` joining it; None elsewhere."""
    for k, s in enumerate(body):
        if isinstance(s, Let) and s.target == name or isinstance(s, If) and name in s.joins:
            return k
    return None


def _split_breaks(n: Any, body: list[Stmt], entry: str, ins: list[str], keys: list,
                  node: Any, end: tuple | None) -> None:
    """A ``break`` of this loop leaves with the container's value there: its leaves,
    read just before the break (the end's own leaves where it leaves with the end,
    ``end``: (its name, its leaves' names), read where it is made)."""
    def visit(stmts: list[Stmt]) -> None:
        i = 0
        while i < len(stmts):
            s = stmts[i]
            if isinstance(s, If):
                visit(s.body)
                visit(s.orelse)
            elif isinstance(s, Break):
                value = dict(s.copies).get(entry)
                if value is not None and end is not None and value == end[0]:
                    s.copies = [c for c in s.copies if c[0] != entry] + list(zip(ins, end[1]))
                elif value is not None:
                    names = [n.names.fresh(f"{value}_{k}") for k in keys]
                    reads = [Let(m, "getitem", (Var(value),), _index(k), n.loc(node))
                             for m, k in zip(names, keys)]
                    stmts[i:i] = reads
                    i += len(reads)
                    s.copies = [c for c in s.copies if c[0] != entry] + list(zip(ins, names))
            elif isinstance(s, For):
                pass  # (a nested loop's breaks leave that loop)
            i += 1
    visit(body)


def split_joins(n: Any, stmts: list[Stmt]) -> None:
    """Each ``if`` whose branches bind one name to containers of one structure
    (``m = Model(x) if c else Model(-x)``) joins their leaves instead, and makes the
    container again after it: under vmap each field is selected per example, as any
    array an ``if`` on a batched value joins."""
    i = 0
    while i < len(stmts):
        s = stmts[i]
        if isinstance(s, If):
            split_joins(n, s.body)
            split_joins(n, s.orelse)
            after = _split_if(n, s)
            stmts[i + 1:i + 1] = after
            i += len(after)
        elif isinstance(s, For):
            split_joins(n, s.body)
        i += 1


def _binding(stmts: list[Stmt], name: str) -> int | None:
    """Where a branch binds ``name`` by a statement of its own (not in a nested
    block); None where it does not, or where the branch leaves by ``break``."""
    found = None
    for k, s in enumerate(stmts):
        if isinstance(s, Break):
            return None
        if isinstance(s, Let) and s.target == name:
            found = k
    return found


def _shape_of(n: Any, let: Let) -> tuple | None:
    if let.prim == "identity" and isinstance(let.args[0], Var):
        return structure(n, let.args[0].name)
    nested = _field_record(n, let)
    if nested is not None:
        return nested
    item = _item_of(n, let)
    if item is not None:
        return structure(n, item)
    if let.prim == "make_tuple" and let.target not in n.lists:
        return ("tuple", len(let.args), dict(let.params))
    if let.prim == "make_dict" and "keys" in let.params and "from_items" not in let.params:
        return ("dict", tuple(let.params["keys"]), dict(let.params))
    return None


def _split_if(n: Any, s: If) -> list[Stmt]:
    after: list[Stmt] = []
    work = list(s.joins)
    while work:  # (a field that is itself a record: its leaves too)
        j = work.pop(0)
        at = [_binding(s.body, j), _binding(s.orelse, j)]
        if None in at:
            continue
        branches = (s.body, s.orelse)
        lets = [branches[b][at[b]] for b in (0, 1)]
        shapes = [_shape_of(n, let) for let in lets]
        if None in shapes or shapes[0][:2] != shapes[1][:2] or (  # type: ignore[index]
                shapes[0][2].get("built") != shapes[1][2].get("built")):  # type: ignore
            continue
        kind, shape, params = shapes[0]  # type: ignore[misc]
        keys = _leaves(kind, shape)
        leaves = [n.names.fresh(f"{j}_{k}") for k in keys]
        for b, branch in enumerate(branches):
            own = n.names.fresh(j)
            rest = branch[at[b] + 1:]
            rename(rest, j, own)
            lets[b].target = own
            n.lets[own] = lets[b]
            branch.extend(Let(leaf, "getitem", (Var(own),), _index(k), s.loc)
                          for leaf, k in zip(leaves, keys))
        s.joins = [x for x in s.joins if x != j] + leaves
        work += leaves
        prim = "make_dict" if kind == "dict" else "make_tuple"
        made = {k: v for k, v in params.items() if k in ("keys", "built")}
        joined = Let(j, prim, tuple(Var(v) for v in leaves), made, s.loc)
        n.lets[j] = joined
        after.insert(0, joined)  # (a field's record made before the one holding it)
    return after
