"""Dicts a loop body writes with a key known only per call (``seen[k] = v`` in ``for
k, p in params.items():``), whose keys are not those of the literal before the loop.

The body of such a loop is lowered once, reading the dict under its name from before
the loop (``seen = {}``), while each iteration may add a key.  A read decided from the
literal's keys when the function is normalized (``seen.get("a", 0.5)``, ``"a" in
seen``, ``seen.get(k)`` of the empty literal) would hold for the first iteration only:
the gradient of ``0.5 * sum(p)`` where Python reads ``2.0`` in the second (a wrong
number on main).  Inside such a loop the dict's keys are left unknown
(``DictWrites.known``), so each read is decided per call, where the loop over the
dict's keys is unrolled (ir/unroll.py) or, if it is not, refused as a dict changing
structure in the loop."""

from __future__ import annotations

from typing import Any

import libcst as cst


def written_by_key(body: Any) -> set[str]:
    """The names ``body`` writes an item of with a key that is no string or number
    literal (``d[k] = v``, ``d[k] += v``)."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def _target(self, target: Any) -> None:
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and \
                    not all(isinstance(e.slice, cst.Index) and isinstance(
                        e.slice.value, (cst.SimpleString, cst.Integer)) for e in target.slice):
                found.add(target.value.value)

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self._target(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._target(node.target)

    body.visit(Finder())
    return found


def enter(n: Any, node: Any, before: dict[str, str]) -> None:
    """At a loop's start: the versions from before it of the dicts it writes by a
    key known per call, whose keys stay unknown inside it."""
    n.dicts.grown |= {before[u] for u in written_by_key(node.body) if u in before}
