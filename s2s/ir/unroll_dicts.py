"""Dicts whose keys the call's structure says, made literals (an IR pass's part).

``tuple(p)``, ``sorted(p)``, ``list(p.keys())``, ``tuple(p.values())`` (a
``dict_keys`` statement), ``{**p, "w": w}``, ``p | q`` (``dict_merge``,
``bitwise_or``), ``out[k] = v`` keyed by a loop over a dict's keys (``dict_set``),
``e = p.copy(); e["w"] = v``: for a dict argument the frontend cannot know the keys;
the pass that unrolls container loops per call (``unroll.py``) knows them, and
makes each of these the literal of this call's keys with these functions (``u``:
the pass's unroller, which knows each name's structure).
"""

from __future__ import annotations

from typing import Any

from ..errors import TransformError
from .kinds import Leaf, Tree
from .nodes import Atom, Const, Index, Let, Var


def keys_literal(u: Any, s: Let) -> list[Let]:
    """``tuple(p)``, ``list(p)``, ``sorted(p)`` (``dict_keys``; ``list``) of a dict
    for this call's structure: the literal of its keys (``("c", "a")``, in the
    dict's order, or sorted); ``tuple(t)`` of a tuple or list: its items."""
    kind, seq = u.kind_of(s.args[0]), s.args[0]
    copy = s.params.get("copy", "list")
    literal = f"make_{copy}"
    if isinstance(kind, Tree) and kind.type is dict and not kind.positional:
        keys = key_order(kind, s)
        keys = keys[::-1] if s.params.get("reverse") else keys
        view = s.params.get("view", "keys")
        if view == "keys":
            return [Let(s.target, literal, tuple(Const(k, repr(k)) for k in keys), {},
                        s.loc)]
        out, parts = [], []  # `tuple(p.values())`, `sorted(p.items())`
        for k in keys:
            key = Const(k, repr(k))
            out.append(Let(u.names.fresh(f"{seq.name}_{k}" if str(k).isidentifier()
                                            else seq.name), "getitem", (seq,),
                           {"index": Index((key,), False)}, s.loc))
            if view == "items":
                out.append(Let(u.names.fresh("pair"), "make_tuple",
                               (key, Var(out[-1].target)), {}, s.loc))
            parts.append(Var(out[-1].target))
        return out + [Let(s.target, literal, tuple(parts), {}, s.loc)]
    if isinstance(seq, Const) and isinstance(seq.value, dict):
        return _constant_view(u, s, seq, literal)
    if s.params.get("order") is not None or s.params.get("reverse"):
        raise TransformError(
            "sorted() (or max(), min()) of a list or an array would compare its "
            "values in Python", s.loc, "np.sort, np.max, np.min of an array; "
            "sorted(d), max(d) compare a dict's keys")
    if isinstance(kind, Leaf):
        raise TransformError(
            f"{copy}() of an array: s2s reads an array as an array, not as a "
            "sequence of its rows", s.loc,
            "index the rows you need (x[0], x[1]), or write list(x)")
    if not isinstance(kind, Tree):  # (a list grown in a loop: a copy, as `list`)
        return [Let(s.target, "list", (seq,), {}, s.loc)]
    items = []
    for key in kind.keys:  # tuple(t) of a tuple or list (a NamedTuple): its items
        items.append(Let(u.names.fresh(f"{s.target}_item"), "getitem", (seq,), {
            "index": Index((Const(key, repr(key)),), False)}, s.loc))
    return items + [Let(s.target, literal, tuple(Var(t.target) for t in items), {},
                        s.loc)]

def _constant_view(u: Any, s: Let, seq: Const, literal: str) -> list[Let]:
    """``sorted(W.items())``, ``list(W.values())`` of a module's dict constant ``W``
    (where a loop does not walk it: in a ``zip``): the literal of its keys, values
    (spelled ``W['a']``, read where the code runs, as other module constants) or
    ``(key, value)`` pairs, in its order or its keys' sorted order."""
    keys = key_order(Tree(dict, tuple(seq.value), ()), s)
    keys = keys[::-1] if s.params.get("reverse") else keys
    view = s.params.get("view", "keys")
    out, parts = [], []
    for k in keys:
        value = Const(seq.value[k], f"{seq.text}[{k!r}]")
        if view == "keys":
            parts.append(Const(k, repr(k)))
        elif view == "values":
            parts.append(value)
        else:
            out.append(Let(u.names.fresh("pair"), "make_tuple", (Const(k, repr(k)), value),
                           {}, s.loc))
            parts.append(Var(out[-1].target))
    return out + [Let(s.target, literal, tuple(parts), {}, s.loc)]


def merged(u: Any, s: Let) -> list[Let]:
    """``{**p, "w": w}``, ``p | q`` (``dict_merge``, ``bitwise_or``) of dicts for
    this call's structure: the literal of their keys, in Python's order (a key in
    several keeps its first position and its last value)."""
    items: dict[Any, Atom] = {}
    reads: list[Let] = []
    parts = s.args
    if s.prim in ("setitem", "dict_set"):  # `e = p.copy(); e["w"] = v`, `out[k] = v`
        index = s.params["index"] if s.prim == "setitem" else None
        written = s.args[1] if index is None else index.items[0] if len(
            index.items) == 1 and not index.is_tuple else None
        if not (isinstance(written, Const) and isinstance(written.value, str)):
            raise TransformError(
                "a dict written with a key known only when the function runs: its "
                "keys (its structure) would depend on run-time values", s.loc,
                "write a constant key (`d[\"w\"] = v`)")
        parts = s.args[:1]
    for part in parts:
        kind = u.kind_of(part)
        if not (isinstance(kind, Tree) and kind.type is dict):
            raise TransformError(
                "`|` of a dict and a value that is not a dict in this call" if
                s.prim == "bitwise_or" else "`**` spreads a value that is not a dict "
                "in this call (or one whose keys s2s does not know here: a dict a "
                "call returned)", s.loc, "merge two dicts: `{**p, \"w\": w}` or "
                "`p | q`")
        made = u.made.get(part.name)
        for key in kind.keys:
            if made is not None and made.prim == "make_dict" and "keys" in made.params:
                items[key] = made.args[tuple(made.params["keys"]).index(key)]
                continue
            stem_ = f"{part.name}_{key}" if str(key).isidentifier() else part.name
            read = Let(u.names.fresh(stem_), "getitem", (part,), {
                "index": Index((Const(key, repr(key)),), False)}, s.loc)
            reads.append(read)
            items[key] = Var(read.target)
    if s.prim in ("setitem", "dict_set"):
        items[written.value] = s.args[-1]
    return reads + [Let(s.target, "make_dict", tuple(items.values()),
                        {"keys": tuple(items)}, s.loc)]


def key_order(tree: Tree, s: Let) -> tuple:
    """The keys a loop over a dict walks: in the dict's order, or sorted."""
    if s.params.get("order") != "sorted":
        return tree.keys
    try:
        return tuple(sorted(tree.keys))
    except TypeError:
        raise TransformError("sorted() over this dict's keys: they cannot be compared",
                             s.loc, "use keys of one type (strings)") from None
