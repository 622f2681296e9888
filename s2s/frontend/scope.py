"""What the lowering knows about the paths through ``if`` statements."""

from __future__ import annotations

from typing import Any

from ..ir.nodes import Atom, Const, If
from .functions import FnValue


class OnePath:
    """A name an `if` bound on one path only: ``ssa``, the paths it needs (each a
    test and its truth), and the branches, innermost first, it was bound in."""

    def __init__(self, name: str, ssa: str, generation: int, requires: frozenset,
                 chain: tuple = ()) -> None:
        self.name, self.ssa, self.generation = name, ssa, generation
        self.requires, self.chain = requires, chain

    def within(self, path: Any, stmt: If, k: int) -> "OnePath":
        """The same name, seen from outside branch ``k`` of ``stmt`` (on ``path``)."""
        return OnePath(self.name, self.ssa, self.generation, self.requires | {path},
                        self.chain + ((stmt, k),))


def join_values(test: Atom, body: dict[str, FnValue],
                orelse: dict[str, FnValue]) -> dict[str, FnValue]:
    """After an ``if``: a name each path bound to a function denotes the choice
    ``body's if test else orelse's``; one bound on one path only, no function."""
    joined: dict[str, FnValue] = {}
    for name in set(body) | set(orelse):
        a, b = body.get(name), orelse.get(name)
        if a is None or b is None:
            continue
        if a is b:
            joined[name] = a
        elif isinstance(test, Const):
            joined[name] = a if test.value else b
        else:
            joined[name] = FnValue(None, "choice", choice=(test, a, b))
    return joined
