"""What forward mode and vmap share as statement transforms: one dispatcher over the
IR's statements, and per-transform tables for the structural primitives (a list's
``append`` and ``pop``, containers, identity) that are not rewritten by a rule."""

from __future__ import annotations

from typing import Any

from ..ir.nodes import Break, For, If, Let, Stmt
from .analysis import Facts
from .replay import Replay


class StmtTransform:
    """A transform that walks a function's statements in order, emitting code for
    each into ``out``: ``let``, ``if_``, ``for_`` and ``break_`` are its hooks."""

    facts: Facts
    replay: Replay

    def block(self, stmts: list[Stmt], out: list[Any]) -> None:
        """Emit each statement of a block through its hook."""
        for s in stmts:
            if isinstance(s, Let):
                self.let(s, out)
            elif isinstance(s, If):
                self.if_(s, out)
            elif isinstance(s, For):
                self.for_(s, out)
            elif isinstance(s, Break):
                self.break_(s, out)

    def let(self, s: Let, out: list[Any]) -> None:
        raise NotImplementedError

    def if_(self, s: If, out: list[Any]) -> None:
        raise NotImplementedError

    def for_(self, s: For, out: list[Any]) -> None:
        raise NotImplementedError

    def break_(self, s: Break, out: list[Any]) -> None:
        """A ``break`` as the user wrote it (with the copies it hands the loop)."""
        out += self.replay.statements([s])

    def structural(self, table: dict[str, str], s: Let, out: list[Any]) -> bool:
        """Did the handler ``table`` names for ``s``'s primitive (a method name) emit
        ``s``?  A handler returns False when ``s`` is not its case (a ``getitem`` of
        an array, say): the transform goes on as for any other statement."""
        name = table.get(s.prim)
        return name is not None and getattr(self, name)(s, out) is not False
