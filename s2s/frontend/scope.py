"""What the lowering knows about the paths through ``if`` statements."""

from __future__ import annotations

from typing import Any

from ..ir.nodes import If


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
