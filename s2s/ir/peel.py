"""Peeling a loop's first iteration out of it, where a value it carries has one rank
before the loop and another after an iteration (Horner's rule: ``acc = 0.0``, then
``acc = acc * x + c`` of an array ``x``).  vmap's batched code gives each value one
rank; peeled, the first iteration's values have names of their own, and the loop
that runs the others carries one rank throughout::

    acc = 0.0                          acc = 0.0
    for k in range(n):                 if n > 0:
        acc = acc * x + c[k]    ->         k_2 = 0
                                           acc_3 = acc * x + c[k_2]
                                           acc_4 = acc_3
                                           for k in range(1, n):
                                               acc_5 = acc_4 * x + c[k]
                                               acc_4 = acc_5
                                           acc_6 = acc_4
                                       else:
                                           acc_6 = acc

A loop that runs no iteration leaves ``acc`` as it was (Python's float), on the other
path of the ``if`` (vmap makes each path's code on the first call that takes it).
Only a loop of the function's own block, over a ``range``, with no ``break`` and no
array written in place, is peeled (see :func:`peelable`)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from .names import NameTable, bound_names
from .nodes import Break, Const, For, Function, If, Index, Let, Return, Slice, Stmt, Var, walk
from .walk import effective_carried, loop_breaks


def peelable(fn: Function, loop: For) -> bool:
    """Whether :func:`peel_first` can peel ``loop``: a ``for`` of the function's own
    block (it runs once per call) over a ``range`` bound in that block, with no
    ``break`` out of it, no random draw (drawn once per call), and no array written
    in place in it (its versions share one buffer)."""
    if loop.test is not None or loop.counter is not None or loop.iter is None:
        return False
    if not any(s is loop for s in fn.body) or loop_breaks(loop.body):
        return False
    if _range_of(fn, loop) is None:
        return False
    versions = set(fn.aliases) | set(fn.aliases.values())
    names = set(bound_names(loop.body)) | {e for e, _ in effective_carried(loop)}
    return not (names & versions) and not any(
        isinstance(s, Let) and s.prim == "draw" for s in walk(loop.body))


def peel_first(fn: Function, loop: For) -> tuple[Function, For]:
    """``fn`` with ``loop``'s first iteration run before it, under an ``if`` on its
    count (see the module's docstring), and the loop that runs the others."""
    assert peelable(fn, loop)
    names = NameTable(fn.names.taken)
    made = _range_of(fn, loop)
    assert made is not None
    at = next(i for i, s in enumerate(fn.body) if s is loop)
    carried = effective_carried(loop)
    head, first, rest_range = _bounds(made, loop, names)
    # the first iteration: its index the range's start (a name: `C[k_2]` of a module
    # constant `C` is read when it runs, `C[0]` when the code is made, even where
    # `C` is empty), its names fresh
    index = Var(names.fresh(loop.target))
    m: dict[str, Any] = {loop.target: index}
    m.update({n: Var(_fresh(names, n)) for n in bound_names(loop.body) if n != loop.target})
    then = [Let(index.name, "identity", (first,), {}, loop.loc)]
    then += [_renamed(s, m) for s in loop.body]
    # the others: a loop entered with the first iteration's values, under names of
    # its own, inside the `if` (where no iteration runs, neither does it)
    entries = {e: _fresh(names, e) for e, _ in carried}
    then += [Let(entries[e], "identity", (Var(_name(x, m)),), {}, loop.loc)
             for e, x in carried]
    r = {e: Var(j) for e, j in entries.items()}
    rest = For(loop.target, Var(rest_range.target), [_renamed(s, r) for s in loop.body],
               loop.loc, [(entries[e], _name(x, r)) for e, x in loop.carried])
    joins = {e: _fresh(names, e) for e, _ in carried}
    then += [rest_range, rest] + [Let(joins[e], "identity", (Var(entries[e]),), {},
                                      loop.loc) for e, _ in carried]
    orelse = [Let(joins[e], "identity", (Var(e),), {}, loop.loc) for e, _ in carried]
    branch = If(Var(head[-1].target), then, orelse, loop.loc, [joins[e] for e, _ in carried])
    after = [_renamed(s, {e: Var(j) for e, j in joins.items()}) for s in fn.body[at + 1:]]
    body = fn.body[:at] + head + [branch] + after
    return replace(fn, body=body, names=names), rest


def _range_of(fn: Function, loop: For) -> Let | None:
    """The ``range`` statement of the function's block that ``loop`` runs over."""
    assert loop.iter is not None
    for s in fn.body:
        if isinstance(s, Let) and s.target == loop.iter.name:
            if s.prim == "range" and not s.params and 1 <= len(s.args) <= 3:
                return s
            return None
    return None


def _bounds(made: Let, loop: For, names: NameTable) -> tuple[list[Let], Any, Let]:
    """The statements testing that the range is not empty (the test last), the
    first index, and the range of the other iterations."""
    loc = loop.loc
    args = made.args
    if len(args) == 1:  # range(n): n > 0, 0, range(1, n)
        n = args[0]
        test = Let(names.fresh(f"{_stem(n)}_greater_0"), "greater", (n, Const(0, "0")), {},
                   loc)
        return [test], Const(0, "0"), Let(names.fresh("steps"), "range",
                                          (Const(1, "1"), n), {}, loc)
    start, step = args[0], args[2] if len(args) == 3 else Const(1, "1")
    count = Let(names.fresh(f"len_{made.target}"), "len", (Var(made.target),), {}, loc)
    test = Let(names.fresh(f"{count.target}_greater_0"), "greater",
               (Var(count.target), Const(0, "0")), {}, loc)
    head = [count, test]
    if isinstance(start, Const) and isinstance(step, Const):
        second: Any = Const(start.value + step.value, repr(start.value + step.value))
    else:
        nxt = Let(names.fresh("start"), "add", (start, step), {}, loc)
        head.insert(0, nxt)
        second = Var(nxt.target)
    rest = Let(names.fresh("steps"), "range", (second,) + args[1:], {}, loc)
    return head, start, rest


def _fresh(names: NameTable, name: str) -> str:
    """A fresh name for another version of ``name`` (``acc_2``: ``acc_5``)."""
    return names.fresh(re.sub(r"_\d+$", "", name) or name)


def _stem(a: Any) -> str:
    return a.name if isinstance(a, Var) else "n"


def _atom(x: Any, m: dict[str, Any]) -> Any:
    """An operand (an atom, an index, a tuple of them) with names replaced."""
    if isinstance(x, Var):
        return m.get(x.name, x)
    if isinstance(x, Index):
        ints = tuple(_name(n, m) for n in x.ints if isinstance(m.get(n, Var(n)), Var))
        return replace(x, items=tuple(_atom(i, m) for i in x.items), ints=ints)
    if isinstance(x, Slice):
        return Slice(*(None if a is None else _atom(a, m) for a in (x.lower, x.upper, x.step)))
    if isinstance(x, tuple):
        return tuple(_atom(i, m) for i in x)
    if isinstance(x, list):
        return [_atom(i, m) for i in x]
    return x


def _name(n: str, m: dict[str, Any]) -> str:
    """A name in a binding position: renamed where ``m`` gives it a name."""
    new = m.get(n)
    return new.name if isinstance(new, Var) else n


def _renamed(s: Stmt, m: dict[str, Any]) -> Stmt:
    """A fresh copy of ``s`` (nested blocks too) with names replaced by ``m``."""
    if isinstance(s, Let):
        params = {k: (v if k == "callee" else _atom(v, m)) for k, v in s.params.items()}
        return Let(_name(s.target, m), s.prim, _atom(s.args, m), params, s.loc)
    if isinstance(s, If):
        return If(_atom(s.test, m), [_renamed(t, m) for t in s.body],
                  [_renamed(t, m) for t in s.orelse], s.loc, [_name(j, m) for j in s.joins])
    if isinstance(s, For):
        return For(_name(s.target, m), _atom(s.iter, m), [_renamed(t, m) for t in s.body],
                   s.loc, [(_name(e, m), _name(x, m)) for e, x in s.carried],
                   _atom(s.test, m), None if s.counter is None else _name(s.counter, m))
    if isinstance(s, Break):
        return Break(s.loc, {k: _name(v, m) for k, v in s.env.items()},
                     [(_name(e, m), _name(x, m)) for e, x in s.copies])
    assert isinstance(s, Return)
    return Return(_atom(s.value, m), s.loc)


def loop_key(loc: Any) -> tuple | None:
    """A loop's position as a refusal of its batched code reports it (the user's
    file, line, column), or None."""
    return None if loc is None else (str(loc.file), loc.line, loc.col)


def peeled_at(fn: Function, keys: frozenset, memo: dict[int, Function] | None = None
              ) -> Function:
    """``fn`` with the first iteration of each loop at the positions ``keys`` peeled
    (those :func:`peelable`), in it and in the functions it calls: the IR a transform
    emits from where vmap, batching its code, met a carried value changing rank that
    the emitted code's own loop cannot peel (a gradient's loop, pushing its tape)."""
    if not keys:
        return fn
    memo = {} if memo is None else memo
    if id(fn) in memo:
        return memo[id(fn)]
    memo[id(fn)] = fn  # (a recursive call, while its callee is made: as it is)
    body, changed = _callees_peeled(fn.body, keys, memo)
    new = replace(fn, body=body) if changed else fn
    for s in list(new.body):
        if isinstance(s, For) and loop_key(s.loc) in keys and peelable(new, s):
            new = peel_first(new, s)[0]
    memo[id(fn)] = new
    return new


def peelable_like(fn: Function, loc: Any, memo: set[int] | None = None) -> set[tuple]:
    """The positions of the loops :func:`peeled_at` can peel, in ``fn`` and the
    functions it calls, at ``loc`` or on a line reading as ``loc``'s (a refusal of
    emitted code names the user's line by its text: two callees may share it)."""
    memo = set() if memo is None else memo
    if id(fn) in memo or loc is None:
        return set()
    memo.add(id(fn))
    found = {loop_key(s.loc) for s in fn.body if isinstance(s, For) and s.loc is not None
             and (loop_key(s.loc) == loop_key(loc) or s.loc.text.strip() == str(
                 loc.text).strip()) and peelable(fn, s)}
    for s in walk(fn.body):
        if isinstance(s, Let) and isinstance(s.params.get("callee"), Function):
            found |= peelable_like(s.params["callee"], loc, memo)
    return found


def _callees_peeled(stmts: list[Stmt], keys: frozenset, memo: dict[int, Function]
                    ) -> tuple[list[Stmt], bool]:
    """``stmts`` with each call's callee peeled (``peeled_at``): new statements where
    one changed, the others as they are."""
    out: list[Stmt] = []
    changed = False
    for s in stmts:
        if isinstance(s, Let) and isinstance(s.params.get("callee"), Function):
            callee = peeled_at(s.params["callee"], keys, memo)
            if callee is not s.params["callee"]:
                s = Let(s.target, s.prim, s.args, {**s.params, "callee": callee}, s.loc)
                changed = True
        elif isinstance(s, If):
            body, a = _callees_peeled(s.body, keys, memo)
            orelse, b = _callees_peeled(s.orelse, keys, memo)
            if a or b:
                s = If(s.test, body, orelse, s.loc, s.joins)
                changed = True
        elif isinstance(s, For):
            body, a = _callees_peeled(s.body, keys, memo)
            if a:
                s = For(s.target, s.iter, body, s.loc, s.carried, s.test, s.counter)
                changed = True
        out.append(s)
    return out, changed
