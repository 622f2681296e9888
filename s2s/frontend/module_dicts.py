"""A loop over a module's dict, unrolled over its keys::

    CFG = {"a": 1.0, "b": 2.0}                s = s + CFG["a"] * np.sum(x)
    for k, w in CFG.items():          ->      s = s + CFG["b"] * np.sum(x)
        s = s + w * np.sum(x)

The keys are read when the code is generated (the keys are part of what the code is
made for: a key added or removed in place generates it again, as a changed length of a
module's list does); each value is read where the code runs (``CFG["a"]``), so values
changed in place are seen by the next call without generating again.  The same for
``CFG.keys()``, ``CFG.values()``, ``CFG`` itself, under ``sorted(...)``,
``reversed(...)`` and ``enumerate(...)``, and zipped with other walks known when the
code is generated (``zip(LAYERS.items(), (1.0, 0.5))``).  A target unpacking a value
(``for name, (w, b) in LAYERS.items():``) unpacks it in each copy as Python does
(``w, b = LAYERS["first"]``, Python's ValueError where its length differs).  A loop
that leaves early (``break``, ``continue``, ``return``), has an ``else``, or binds its
own target again is left as it was.
"""

from __future__ import annotations

import builtins
from typing import Any

import libcst as cst

from .comprehensions import substitute
from .dicts import _jumps, assigned_names  # (the constant-key loops' tests)
from .static import ReadVar, StaticVar

_WRAPPERS = (builtins.sorted, builtins.reversed, builtins.enumerate)


def unroll_module_dict(n: Any, node: cst.For) -> bool:
    """Lower ``node`` as above where it walks a module's dict (True), else leave it
    (False, nothing emitted)."""
    if node.orelse is not None or node.asynchronous is not None:
        return False
    name = _walked_dict(n, node.iter)
    if name is None:
        return False
    if _jumps(node.body):
        raise n.unsupported(
            node, f"a loop over the module dict `{name}` that leaves early (`break`, "
            "`continue`, `return`) is not supported: s2s unrolls such a loop over the "
            "dict's keys", "test inside the body (`if k != \"b\": ...`), so "
            "the loop runs over every key")
    targets = _names(node.target)
    if targets is None or set(targets) & assigned_names(node.body):
        return False
    static = n.comps.static
    names = _walked_dicts(n, node.iter)
    before = {d: n.resolver.free.get(d) for d in names}
    items = static.static_items(node.iter)
    if items is None:
        if _zip_of(n, node.iter) is not None:
            raise n.unsupported(
                node.iter, f"a loop zipping the module dict `{name}` with a sequence "
                "known only when the function runs is not supported: s2s unrolls a "
                "loop over a module dict's keys", "zip it with a tuple or list "
                "literal, or loop over the dict and index the other sequence")
        return False
    for d in names:
        now = n.resolver.free.get(d)
        if type(now) is StaticVar and type(before[d]) is not StaticVar:
            # (the code depends on the dict's keys and its values' kinds, not on its
            # values, which the code reads where it runs: a ReadVar, not a StaticVar)
            read = ReadVar(now.name, now.cell, now.scope)
            read.also = now.also
            n.resolver.free[d] = read
    unpacks: list[list[tuple[Any, Any]]] = [[] for _ in items]
    tables = [_bind(node.target, spelling, u) for (spelling, _), u in zip(items, unpacks)]
    if any(t is None for t in tables):
        return False
    alias = n.desugar.alias
    copies = [[_unpack(target, spelling, node.target, alias) for target, spelling in u]
              + [substitute(s, table, alias) for s in node.body.body]
              for table, u in zip(tables, unpacks)]
    if tables:  # (after the loop its targets hold the last item's, as in Python)
        last = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(t))],
                                                    tables[-1][t])]) for t in targets
                if t in tables[-1]]  # (an unpacked value's names: its copy bound them)
        for stmt in last:
            alias(stmt, node.target)
            alias(stmt.body[0], node.target)
        copies.append(last)
    lower_copies(n, copies)
    return True


def lower_copies(n: Any, copies: list[list[Any]]) -> None:
    """Each unrolled copy of a loop's body lowered in turn, the lines appended to the
    enclosing block's (the block's list kept while the copies lower into their own)."""
    outer, lowered = n.out, []
    for body in copies:
        lowered += n.stmts.block(body)
    n.out = outer
    outer += lowered


def _walked_dict(n: Any, iterable: Any) -> str | None:
    """The module name of the dict ``iterable`` walks (``CFG.items()``,
    ``sorted(CFG)``, ``enumerate(CFG.values())``, the first such of a ``zip``'s
    walks...), or None."""
    found = _walked_dicts(n, iterable)
    return found[0] if found else None


def _walked_dicts(n: Any, iterable: Any) -> list[str]:
    """The module names of the dicts ``iterable`` walks: one, or those a ``zip`` of
    walks (``zip(LAYERS.items(), (1.0, 0.5))``, also under ``enumerate(...)``)
    walks."""
    zipped = _zip_of(n, iterable)
    if zipped is not None:
        if any(a.keyword is not None or a.star for a in zipped.args):
            return []
        return [d for a in zipped.args if (d := _one_dict(n, a.value)) is not None]
    one = _one_dict(n, iterable)
    return [one] if one is not None else []


def _zip_of(n: Any, iterable: Any) -> cst.Call | None:
    """The ``zip(...)`` call ``iterable`` is, alone or under ``enumerate``, or None."""
    static = n.comps.static
    if isinstance(iterable, cst.Call) and static.builtin(iterable.func) is \
            builtins.enumerate and iterable.args and iterable.args[0].keyword is None:
        iterable = iterable.args[0].value
    if isinstance(iterable, cst.Call) and static.builtin(iterable.func) is builtins.zip:
        return iterable
    return None


def _one_dict(n: Any, iterable: Any) -> str | None:
    static = n.comps.static
    while isinstance(iterable, cst.Call) and static.builtin(iterable.func) in _WRAPPERS:
        args = iterable.args
        if not args or args[0].keyword is not None or args[0].star or (
                len(args) > 1 and static.builtin(iterable.func) is not builtins.enumerate):
            return None
        iterable = args[0].value
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and \
            iterable.func.attr.value in ("items", "keys", "values") and not iterable.args:
        iterable = iterable.func.value
    if not isinstance(iterable, cst.Name) or iterable.value in n.local_names:
        return None
    try:
        value = n.resolver.lookup_global(iterable)
    except Exception:  # (not a module name s2s reads: left to the loop's lowering)
        return None
    if type(value) is not dict or any(callable(v) for v in value.values()) or not all(
            type(k) in (str, int, bool) for k in value):
        return None  # (a dict of functions: fncontainers.py unrolls its loops; keys
    return iterable.value  # other than literals s2s spells: lowered as before)


def _names(target: Any) -> list[str] | None:
    """The names a loop target binds (``k``, ``k, v``, ``i, (k, v)``), or None."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        found: list[str] = []
        for e in target.elements:
            if isinstance(e, cst.StarredElement):
                return None
            inner = _names(e.value)
            if inner is None:
                return None
            found += inner
        return found
    return None


def _bind(target: Any, spelling: Any, unpacks: list | None = None) -> dict[str, Any] | None:
    """Each name of ``target`` with the part of ``spelling`` it takes, or None.  With
    ``unpacks``, a tuple target whose part is a value, not a tuple of spellings
    (``(w, b)`` of ``LAYERS["first"]``), is appended there as ``(target, spelling)``
    (its copy unpacks it: :func:`_unpack`), not None."""
    if isinstance(target, cst.Name):
        return {target.value: spelling}
    if not isinstance(spelling, cst.Tuple) and unpacks is not None and isinstance(
            target, (cst.Tuple, cst.List)):
        unpacks.append((target, spelling))
        return {}
    if not isinstance(spelling, cst.Tuple) or len(spelling.elements) != len(target.elements):
        return None
    table: dict[str, Any] = {}
    for t, s in zip(target.elements, spelling.elements):
        inner = _bind(t.value, s.value, unpacks)
        if inner is None:
            return None
        table.update(inner)
    return table


def _unpack(target: Any, spelling: Any, at: Any, alias: Any) -> Any:
    """``w, b = LAYERS["first"]``: a copy's unpacking of an item's value, located at
    the loop's target ``at``."""
    stmt = cst.SimpleStatementLine([cst.Assign(
        [cst.AssignTarget(target.with_changes(lpar=[], rpar=[]))], spelling)])
    for new in (stmt, stmt.body[0]):
        alias(new, at)
    return stmt
