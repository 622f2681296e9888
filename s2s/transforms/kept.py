"""vmap's kept statements (``assert``, ``if ...: raise``, ``print``; see
frontend/kept.py): a check runs once per example, on that example's values, so an
``assert`` fires when it fires for any example (``assert x > 0`` on a per-example
scalar means "for every example", and ``x.ndim`` is the example's rank); a call (a
print) runs once, with the batched values."""

from __future__ import annotations

from typing import Any

from ..emit.code import Block
from ..ir.kinds import LEAF
from ..ir.nodes import Let
from ..ir.spelling import atom_text
from ..primitives.batching import NoBatchRule
from .replay import kept_item


class KeptBatching:
    """The vmap transform's handler of ``kept`` statements (a mixin of vmap._Vmap)."""

    def kept(self, s: Let, out: list[Any]) -> None:
        """A kept statement: as written where nothing it reads is batched, else a
        check per example (on the examples on its path, under a batched `if`)."""
        batched = [a for a in s.args if self.batched(a)]
        if not batched:
            out += self.replay.statements([s])
            return
        if s.params["kind"] != "check":
            if self.write_masks:
                raise self.fail(s, NoBatchRule(
                    "a print or call on batched values inside an `if` or loop that "
                    "the examples take differently (it would show every example's "
                    "values, on the path or not)", "print after the `if` or loop"))
            out += self.replay.statements([s])
            return
        for a in batched:
            if self.kind(a.name) != LEAF:
                raise self.fail(s, NoBatchRule(
                    f"an assert or raise reading `{a.name}`, a container of batched "
                    "values", "check its arrays one by one"))
        i = self.names.fresh("example")
        args = [f"{atom_text(a)}[{i}]" if a in batched else atom_text(a) for a in s.args]
        check = kept_item(s, args)
        if self.write_masks:  # only the examples on this path
            on = " and ".join(f"{'not ' if done else ''}{m}[{i}]"
                              for m, done in self.write_masks)
            check = Block(f"if {on}:", [check], [])
        out.append(Block(f"for {i} in range({self.use_batch_size()}):", [check], []))

    # (implemented by vmap._Vmap)
    batched: Any
    kind: Any
    fail: Any
    names: Any
    replay: Any
    use_batch_size: Any
    write_masks: list[tuple[str, bool]]

