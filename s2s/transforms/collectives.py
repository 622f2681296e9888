"""vmap's collectives (``s2s.lax.psum(x, "batch")`` and the rest; see
primitives/collectives.py): over this vmap's own axis name, a reduction over the batch
axis, whose value is the same for every example (so unbatched: it broadcasts where it
meets batched values, and at the output); over another name, left for the vmap that
binds it, per example as written (the batch axis stays in front).

    psum(x, "batch")        np.sum(x, axis=0)          (x unbatched: x * n_batch)
    pmean(x, "batch")       np.mean(x, axis=0)         (x unbatched: x)
    pmax / pmin             np.max / np.min(x, axis=0)
    all_gather(x, "batch")  x itself, unbatched        (x unbatched: broadcast to n)
    axis_index("batch")     np.arange(n_batch), batched
    axis_size("batch")      n_batch

Over a tuple of names (nested vmaps), JAX's combined axis: its index is row-major in
the names' order; each vmap does its own axis and leaves the others' to theirs.
"""

from __future__ import annotations

from typing import Any

from ..emit.code import Line
from ..ir.kinds import leaf_paths
from ..ir.nodes import Const, Let
from ..ir.spelling import atom_text
from ..primitives.batching import NoBatchRule, static

COLLECTIVES = dict.fromkeys(("psum", "pmean", "pmax", "pmin", "all_gather",
                             "axis_index", "axis_size"), "collective")

_REDUCE = {"psum": "np.sum", "pmean": "np.mean", "pmax": "np.max", "pmin": "np.min"}


class CollectiveBatching:
    """The vmap transform's handler of collectives (a mixin of vmap._Vmap)."""

    def collective(self, s: Let, out: list[Any]) -> None:
        name = s.args[-1] if s.prim in ("axis_index", "axis_size") else s.args[1]
        names = name.value if isinstance(name, Const) else None
        names = (names,) if isinstance(names, str) else names
        if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
            raise self.fail(s, NoBatchRule(
                f"`{s.prim}`'s axis name is computed when the code runs",
                "write the axis name as a string literal (or a tuple of them)"))
        x = s.args[0] if s.prim not in ("axis_index", "axis_size") else None
        batched = x is not None and self.batched(x)
        if len(names) != 1 and self.spec.axis_name in names and s.prim in (
                "all_gather", "axis_index"):
            out += self._combined(s, x, batched, names)
            return
        if len(names) != 1 and self.spec.axis_name in names:  # this axis, then the rest
            rest = tuple(n for n in names if n != self.spec.axis_name)
            text = self._own(s, x, batched)
            if rest:
                rest_text = repr(rest[0] if len(rest) == 1 else rest)
                op = "*" if s.prim == "axis_size" else None
                text = (f"{text} {op} axis_size({rest_text})" if op
                        else f"{s.prim}({text}, {rest_text})")
            out.append(Line(f"{s.target} = {text}"))
            self._batched_as(s, False)
            return
        if names != (self.spec.axis_name,):  # another vmap's (or none)
            axis = static(s, "axis", 0)
            if s.prim == "all_gather" and batched:
                text = f"all_gather({atom_text(x)}, {name.value!r}, axis={axis + 1})"
                out.append(Line(f"{s.target} = {text}"))
            else:
                out += self.replay.statements([s])
            self._batched_as(s, batched)
            return
        out.append(Line(f"{s.target} = {self._own(s, x, batched)}"))
        self._batched_as(s, s.prim == "axis_index")

    def _combined(self, s: Let, x: Any, batched: bool, names: tuple) -> list[Line]:
        """``axis_index``/``all_gather`` over several vmaps' axes, this one among them:
        JAX's combined axis, the names' indexes in row-major order (the first name
        outermost).  This vmap does its own axis; the names before and after it are
        left to the vmaps that bind them (``s2s.lax`` calls on what this one made)."""
        at = names.index(self.spec.axis_name)
        before, after = names[:at], names[at + 1:]

        def text(rest: tuple) -> str:
            return repr(rest[0] if len(rest) == 1 else rest)

        fresh, lines = self.names.fresh, []
        if s.prim == "axis_index":  # before * (n * after) + own * after + after's index
            n = self.use_batch_size()
            index = f"np.arange({n})"
            if after:
                index = f"{index} * axis_size({text(after)}) + axis_index({text(after)})"
            if before:
                inner = f"{n} * axis_size({text(after)})" if after else n
                index = f"axis_index({text(before)}) * {inner} + {index}"
            lines.append(Line(f"{s.target} = {index}"))
            self._batched_as(s, True)
            return lines
        axis = static(s, "axis", 0)
        own = fresh(f"{s.target}_own")  # (this axis first: (n, *x.shape))
        lines.append(Line(f"{own} = {self._own_gather(x, batched, 0)}"))
        if after:  # (n, n_after, *x.shape) -> (n * n_after, *x.shape)
            both = fresh(f"{s.target}_after")
            lines += [Line(f"{both} = all_gather({own}, {text(after)}, axis=1)"),
                      Line(f"{own} = np.reshape({both}, (-1, *np.shape({both})[2:]))")]
        if before:  # (n_before, n * n_after, *x.shape) -> one axis
            both = fresh(f"{s.target}_before")
            lines += [Line(f"{both} = all_gather({own}, {text(before)})"),
                      Line(f"{own} = np.reshape({both}, (-1, *np.shape({both})[2:]))")]
        result = own if axis == 0 else f"np.moveaxis({own}, 0, {axis})"
        lines.append(Line(f"{s.target} = {result}"))
        self._batched_as(s, False)
        return lines

    def _own_gather(self, x: Any, batched: bool, axis: int) -> str:
        text = atom_text(x)
        if not batched:
            n = self.use_batch_size()
            text = f"np.broadcast_to({text}, ({n}, *np.shape({text})))"
        return text if axis == 0 else f"np.moveaxis({text}, 0, {axis})"

    def _own(self, s: Let, x: Any, batched: bool) -> str:
        """The collective over this vmap's axis, as NumPy on the batch."""
        if s.prim in ("axis_index", "axis_size"):
            n = self.use_batch_size()
            return f"np.arange({n})" if s.prim == "axis_index" else n
        text = atom_text(x)
        if s.prim == "all_gather":
            return self._own_gather(x, batched, static(s, "axis", 0))
        if batched:
            return f"{_REDUCE[s.prim]}({text}, axis=0)"
        return f"{text} * {self.use_batch_size()}" if s.prim == "psum" else text

    def _batched_as(self, s: Let, batched: bool) -> None:
        if batched:
            self.b[s.target] = set(leaf_paths(self.kind(s.target)))
        else:
            self.b.pop(s.target, None)
