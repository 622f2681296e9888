"""Functions bound inside a loop's body (``for k in range(n): g = lambda y: y * w[k]``).

A loop binds such a name once per iteration; s2s lowers the body once, so the name
denotes the body's function from its binding on, in every iteration (its captured
values are read at each call, as Python reads a closure's variables).  Two cases have
no single function to denote, and are refused, located:

* the body calls the function the name denoted *before* the loop, then binds it
  again: from the second iteration on, Python calls the new one;
* after a loop whose count is known only when it runs, the name may be unbound (the
  loop may run no iteration): calling it there is refused.  After a loop of a
  constant count (``range(3)``) it is the body's function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class _Frame:
    """A loop being lowered: the function values before it, and the names of function
    values its body read."""

    before: dict[str, Any]
    reads: set[str] = field(default_factory=set)


class LoopFunctions:
    """The loops around the code being lowered, as the function values see them."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer
        self.frames: list[_Frame] = []
        self.unbound: dict[str, Any] = {}  # name -> the loop that may not bind it

    def enter(self, values: dict[str, Any]) -> None:
        self.frames.append(_Frame(dict(values)))

    def leave(self, values: dict[str, Any], node: Any, trips: int | None) -> None:
        """After a loop: a name its body bound to a function keeps it where the loop
        surely ran (``trips``, known when transforming, at least 1)."""
        frame = self.frames.pop()
        for name in list(values):
            if values[name] is not frame.before.get(name) and (trips is None or trips < 1):
                del values[name]
                self.unbound[name] = node
        if self.frames:
            self.frames[-1].reads |= frame.reads

    def read(self, name: str) -> None:
        for frame in self.frames:
            frame.reads.add(name)

    def binding(self, name: str, node: Any) -> None:
        """``name`` is bound to a function here (refused where a loop called the one
        it denoted before)."""
        for frame in self.frames:
            if frame.before.get(name) is not None and name in frame.reads:
                raise self.n.unsupported(
                    node, f"`{name}` is bound to a function inside a loop that called "
                    f"the function `{name}` denoted before it: from the loop's second "
                    "iteration on that call would call this one",
                    f"give this function another name than `{name}`")
        self.unbound.pop(name, None)

    def refuse_after(self, node: Any) -> None:
        """``node`` (a name) calls a function a loop that may not have run bound."""
        if node.value in self.unbound:
            raise self.n.unsupported(
                node, f"`{node.value}` is bound to a function inside a loop whose number "
                "of iterations is known only when it runs, so after the loop it may not "
                "be bound (Python raises NameError when the loop runs no iteration)",
                f"call `{node.value}` inside the loop, or bind it before the loop (and "
                "not in it)")
