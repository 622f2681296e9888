"""``sorted(items, key=..., reverse=...)`` over items known when the function is
transformed (a literal, a dict's keys or items) whose keys are known then too: the list
of the items in Python's order, decided when the code is generated (pyvalues.py calls
it).  Keys of array values would make the order, and so the list's structure, depend on
run-time values: refused, located."""

from __future__ import annotations

import builtins
from typing import Any

import libcst as cst

from ..ir.nodes import Atom, Const, Let, Var
from .comprehensions import substitute


def sorted_by_key(pv: Any, text: str, positional: list, keywords: list, node: Any,
                  target: str | None) -> Atom:
    """``sorted(d.items(), key=lambda kv: kv[0], reverse=True)`` over items known
    when the function is transformed whose keys are known then too (a dict's keys,
    constants): the list of the items in Python's order (a stable sort, ties in
    their order also with ``reverse=True``); keys known only when the code runs
    (array values) are refused, located."""
    names = [k.keyword.value for k in keywords]
    items = pv.n.comps.items_of(positional[0]) if len(positional) == 1 and len(
        set(names)) == len(names) and set(names) <= {"key", "reverse"} else None
    if items is None:
        raise pv.error(node, f"`{text}` with `{', '.join(names)}=` is supported over "
                       "items known when the function is transformed (a literal, a "
                       "dict's keys or items), with `key=` and `reverse=`",
                       "sort the values with np.sort or np.argsort")
    given = {k.keyword.value: k.value for k in keywords}
    reverse = pv.n.exprs.expr(given["reverse"]) if "reverse" in given else Const(
        False, "False")
    if not isinstance(reverse, Const) or type(reverse.value) not in (bool, int):
        raise pv.error(given["reverse"], "`reverse=` of sorted must be known when the "
                       "function is transformed", "write reverse=True or False")
    keys = items
    if "key" in given:
        keys = inlined_keys(pv.n, given["key"], items, pv.n.comps.static.atom_node)
        fv = pv.n.funcs.value_of(given["key"]) if keys is None else None
        if keys is None and fv is None:
            raise pv.error(given["key"], "this `key=` is not a function s2s knows",
                           "pass a function defined in a file, or a lambda")
        if keys is None:
            keys = [pv.n.funcs.call(fv, node, None, ([item], {})) for item in items]
    keys = [_held_constant(pv.n, k) for k in keys]
    if not all(isinstance(k, Const) for k in keys):
        raise pv.error(node, f"`{text}` here orders by values known only when the "
                       "code runs (an array's values): the order, and so the list's "
                       "structure, would depend on them", "sort by keys known "
                       "when transforming (strings, shapes), or sort an array with "
                       "np.argsort and index it")
    try:
        order = sorted(range(len(items)), key=lambda k: keys[k].value,
                       reverse=bool(reverse.value))
    except TypeError as exc:
        raise pv.error(node, f"`{text}(...)` raises TypeError: {exc}",
                       "give it keys Python can compare") from None
    return pv.sequence(builtins.list, [items[k] for k in order], node, target)


def _held_constant(n: Any, atom: Atom) -> Atom:
    """``atom``, or the constant it names: a tuple's or list's item at a constant
    position (``kv[0]`` of a dict's ``(key, value)`` pair), an identity of one."""
    for _ in range(8):
        let = n.lets.get(atom.name) if isinstance(atom, Var) else None
        if not isinstance(let, Let) or let.target != atom.name:
            return atom
        if let.prim == "identity" and len(let.args) == 1:
            atom = let.args[0]
            continue
        index = let.params.get("index") if let.prim == "getitem" else None
        held = n.lets.get(let.args[0].name) if index is not None and isinstance(
            let.args[0], Var) else None
        if not (isinstance(held, Let) and held.prim in ("make_tuple", "make_list") and len(
                index.items) == 1 and isinstance(index.items[0], Const) and type(
                index.items[0].value) is int and -len(held.args) <= index.items[0].value < len(
                held.args)):
            return atom
        atom = held.args[index.items[0].value]
    return atom


def inlined_keys(n: Any, key: Any, items: list[Atom], spell: Any = None
                  ) -> list[Atom] | None:
    """``key=lambda k: d[k]`` over items that are constants (a dict's keys): each key
    the lambda's body with ``k`` the item written in, lowered here (where Python calls
    the lambda, reading the names it closes over), so ``d["a"]`` is read by a constant
    key; None for any other key function or item.  With ``spell`` (``atom_node``), any
    item is written in (``lambda kv: kv[0]`` over a dict's items: each pair's key)."""
    if not isinstance(key, cst.Lambda) or spell is None and not all(
            isinstance(a, Const) and isinstance(a.value, (str, int)) for a in items):
        return None
    ps = key.params
    if ps.posonly_params or ps.kwonly_params or len(ps.params) != 1 or ps.params[0].default \
            is not None or isinstance(ps.star_arg, cst.Param) or ps.star_kwarg is not None:
        return None
    name = ps.params[0].name.value
    out = []
    for item in items:
        literal = cst.parse_expression(repr(item.value)) if spell is None else spell(item, key)
        out.append(n.exprs.expr(substitute(key.body, {name: literal}, n.desugar.alias)))
    return out
