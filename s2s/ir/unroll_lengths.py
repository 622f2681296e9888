"""Arithmetic and tests on a container's length, decided per call (an IR pass's part).

A tuple or list argument's length is fixed per call signature (``ir/unroll.py``), so
``n = len(items)`` is a constant there, and so are ``n - 1`` and ``n > 2``.  The
``if``s on such a test are decided for the call: the code of the path the call takes
is all that is transformed (JAX, which traces, sees that path alone too).  The loops a
lowered ``functools.reduce`` writes (``frontend/reduces.py``: ``if n > 2: ... for k in
range(2, n - 1)``) then unroll, and the branches for the lengths this call does not
have, whose reads would be out of range, are never made.
"""

from __future__ import annotations

import operator
from typing import Any

from .kinds import LEAF
from .nodes import Const, Index, Let, Slice

_FOLDED = {
    "greater": operator.gt, "greater_equal": operator.ge, "less": operator.lt,
    "less_equal": operator.le, "equal": operator.eq, "not_equal": operator.ne,
    "add": operator.add, "subtract": operator.sub,
}


def folded_length(u: Any, s: Let, read: Any) -> Let | None:
    """``s`` (its names already replaced by this call's constants) as the constant it
    computes, where it compares or adds ints one of which is a length of this call
    (``u``: the unroller; ``u.lens`` names those lengths, ``u.length_consts`` the
    constants that stand for them); else None."""
    if s.prim not in _FOLDED or len(s.args) != 2 or not all(
            isinstance(a, Const) and type(a.value) is int for a in s.args):
        return None
    if not any(n in u.lens for n in read) and not any(
            id(a) in u.length_consts for a in s.args):
        return None
    value = _FOLDED[s.prim](s.args[0].value, s.args[1].value)
    const = length_const(u, value)
    u.constants[s.target] = const
    if type(value) is bool:
        u.decided.add(s.target)  # (the `if` on it takes its path for this call)
    else:
        u.lens[s.target] = value  # (`range(2, n - 1)`: its steps known now)
    u.removable.add(s.target)
    return Let(s.target, "identity", (const,), {}, s.loc)


def length_const(u: Any, value: Any) -> Const:
    """The constant of a length of this call (or of a value computed from one)."""
    const = Const(value, repr(value))
    u.length_consts[id(const)] = const  # (kept alive: its id stays its own)
    return const


def defaulted_lengths(fn: Any, arg_kinds: tuple) -> dict[str, tuple[int, bool]]:
    """The lengths of the parameters this call leaves at a tuple or list default
    (``f.__defaults__`` is read per call: code is made again when it changes)."""
    return {p: (len(fn.defaults[p]), False) for p, k in zip(fn.params, arg_kinds)
            if k == LEAF and type(fn.defaults.get(p)) in (tuple, list)}


def cut_default(u: Any, s: Let, name: str) -> Let | None:
    """``layers[:3]`` of a parameter left at a tuple or list default (``u.sized``), and
    ``len`` of that cut: its length for this call.  The frontend spells ``zip(layers,
    (1.0, 0.5, 2.0))``'s count so (frontend/loops.py ``_shortest``), and a loop reading
    a constant's items is unrolled for it; ``len(layers)`` itself stays as it was."""
    n, cut = u.sized[name]
    index = s.params.get("index")
    item = index.items[0] if isinstance(index, Index) and len(index.items) == 1 and \
        not index.is_tuple else None
    if s.prim == "getitem" and isinstance(item, Slice) and all(
            b is None or isinstance(b, Const) and type(b.value) is int
            for b in (item.lower, item.upper, item.step)) and (
            item.step is None or item.step.value != 0):
        bounds = [None if b is None else b.value for b in (item.lower, item.upper, item.step)]
        u.sized[s.target] = (len(range(n)[slice(*bounds)]), True)
        u.removable.add(s.target)
        return s
    if s.prim == "len" and cut:
        u.lens[s.target] = n
        u.removable.add(s.target)
        u.constants[s.target] = length_const(u, n)
        return Let(s.target, "identity", (u.constants[s.target],), {}, s.loc)
    return None
