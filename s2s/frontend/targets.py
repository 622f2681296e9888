"""The plain names an assignment's, a loop's or a comprehension's target binds."""

from __future__ import annotations

from typing import Any

import libcst as cst


def target_names(target: Any) -> list[str]:
    """The plain names an assignment's or a loop's target binds (``a``; ``a, (b, c)``),
    not subscripts or attributes."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in target_names(e.value)]
    return []
