"""What the analysis's refusals say: the user's names and a value's structure in words.

A name the IR made (``d_2``, a loop's carried field ``g_terms``) is spelled as the
user wrote it where the function's text has it (``d``, ``g.terms``).
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import TransformError
from ..ir.kinds import LEAF, Tree
from ..ir.nodes import Function


def _user_name(fn: Function, name: str) -> str:
    """The name the user wrote for the IR's ``name`` (``d`` for its version ``d_2``),
    where the function's text has it."""
    base = re.sub(r"_\d+$", "", name)
    lines = fn.source_lines.values()
    if base != name and any(re.search(rf"\b{re.escape(base)}\b", line) for line in lines):
        return base
    parts = base.split("_")  # (`g_terms`: the field `g.terms` a loop carries as a name)
    for k in range(1, len(parts)):
        spelled = f"{'_'.join(parts[:k])}.{'_'.join(parts[k:])}"
        if all(parts[:k]) and any(re.search(rf"\b{re.escape(spelled)}\b", line)
                                  for line in lines):
            return spelled
    return name


def _structure(kind: Any) -> str:
    """A value's structure in words (``{'w': *, 'b': *}``; ``*`` an array)."""
    if isinstance(kind, Tree) and kind.type is dict and not kind.keys:
        return "an empty dict"
    return "an array" if kind == LEAF else f"`{kind!r}`"


def structure_changed(fn: Function, entry: str, before: Any, after: Any, loc: Any,
                      a_list: bool) -> TransformError:
    """The refusal of a value a loop carries whose structure an iteration changes; a
    list field (``a_list``: before an iteration) a method called in the loop grows
    (``g.grow(v)``) said as such."""
    spelled = _user_name(fn, entry)
    if "." in spelled and after == LEAF and a_list:
        return TransformError(
            f"`{spelled}` is a list a method called in this loop grows: s2s holds a list "
            "a loop grows where the loop itself appends to a name", loc, "append to a "
            "local list in the loop (`terms.append(v)`), and build the object from it "
            "after the loop")
    return TransformError(
        f"`{spelled}` changes structure inside the loop: {_structure(before)} before an "
        f"iteration, {_structure(after)} after it", loc,
        "keep a value carried by a loop the same kind of value (a dict: the same keys)")
