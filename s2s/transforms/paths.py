"""Structural zeros: conditions over the paths through a function's `if`s, shared by
reverse mode (where a cotangent is bound) and forward mode (where a tangent is).

A literal is ``(test, branch)``: the path through an `if` on ``test`` (its name in
emitted code).  A conjunction is a frozenset of literals, a condition a frozenset of
conjunctions (a disjunction).
"""

from __future__ import annotations

import re
from typing import Any

from ..emit.code import Block, Line


def within(cond: frozenset, context: frozenset) -> frozenset | None:
    """``cond`` where ``context`` holds: None if it holds on every such path, else
    its conjunctions that can (empty: on none)."""
    kept = []
    for conj in cond:
        if any((test, not way) in context for test, way in conj):
            continue  # contradicts the context
        if conj <= context:
            return None
        kept.append(conj)
    return frozenset(kept)


def simplified(cond: frozenset) -> frozenset:
    """A condition in fewer, shorter conjunctions: ``a & t | a & ~t`` is ``a``; a
    conjunction implying another is dropped."""
    conjs = set(cond)
    while True:
        merged = next(((a, b, a - {lit}) for a in conjs for lit in a
                       for b in [(a - {lit}) | {(lit[0], not lit[1])}] if b in conjs), None)
        if merged is None:
            break
        a, b, common = merged
        conjs -= {a, b}
        conjs.add(common)
    # ``a | ~a & b`` is ``a | b``
    while True:
        shorter = next(((b, b - {(t, not w)}) for a in conjs for t, w in a for b in conjs
                        if (t, not w) in b and a - {(t, w)} <= b - {(t, not w)}), None)
        if shorter is None:
            break
        conjs.discard(shorter[0])
        conjs.add(shorter[1])
    return frozenset(c for c in conjs if not any(o < c for o in conjs))


def decided(cond: frozenset | None, context: frozenset, leaf: Any,
             order: dict[str, int] | None = None) -> list[Any]:
    """Code that runs ``leaf(True)`` on the paths of ``context`` where ``cond`` holds
    and ``leaf(False)`` on the others: `if`s on the tests ``cond`` names (the forward's
    tests, read again by name; outer ones first: an `elif`'s test is bound only where
    the `if` before it failed)."""
    if cond is None:
        return leaf(True)
    tests = in_order({test for conj in cond for test, _ in conj} - {t for t, _ in context},
                      order or {})

    def tree(k: int, taken: frozenset) -> list[Any]:
        if k == len(tests):
            return leaf(any(conj <= taken for conj in cond))
        on, off = tree(k + 1, taken | {(tests[k], True)}), tree(k + 1, taken | {(tests[k], False)})
        if on == off:
            return on
        if not on:
            return [Block(f"if not {tests[k]}:", off, [])]
        return [Block(f"if {tests[k]}:", on, off)]

    return tree(0, context)


_IF_TEST = re.compile(r"^if (not )?(\w+):$")


def tidy_replays(items: list[Any]) -> list[Any]:
    """The backward sweep's `if`s as a hand-written one has them: an `if` that stayed
    empty is dropped, one with only an else branch is ``if not t:``, and one that
    follows an `if` on the same test joins it (its code runs after the other's on
    each path: ``if t: A else: B`` then ``if not t: C`` is ``if t: A else: B; C``)."""
    out: list[Any] = []
    for item in items:
        if not isinstance(item, Block):
            out.append(item)
            continue
        body, orelse = tidy_replays(item.body), tidy_replays(item.orelse)
        m = _IF_TEST.match(item.header)
        if item.is_loop or m is None:
            out.append(Block(item.header, body, orelse))
            continue
        test = m.group(2)
        on, off = (orelse, body) if m.group(1) else (body, orelse)
        prev = out[-1] if out and isinstance(out[-1], Block) else None
        p = _IF_TEST.match(prev.header) if prev is not None else None
        if p is not None and p.group(2) == test and test not in _defines_of(
                prev.body + prev.orelse):
            prev_on, prev_off = (prev.orelse, prev.body) if p.group(1) else (
                prev.body, prev.orelse)
            # (the two branches' code meets: what follows on each path may join too)
            on, off = tidy_replays(prev_on + on), tidy_replays(prev_off + off)
            out.pop()
        if on:
            out.append(Block(f"if {test}:", on, off))
        elif off:
            out.append(Block(f"if not {test}:", off, []))
    return out


def _defines_of(items: list[Any]) -> set[str]:
    found: set[str] = set()
    for item in items:
        if isinstance(item, (Line, Block)):
            found |= item.defines
        if isinstance(item, Block):
            found |= _defines_of(item.body) | _defines_of(item.orelse)
    return found


def in_order(tests: set[str], order: dict[str, int]) -> list[str]:
    """Tests as the forward computes them (names it does not bind, flags bound before
    any, last)."""
    return sorted(tests, key=lambda t: (order.get(t, len(order)), t))
