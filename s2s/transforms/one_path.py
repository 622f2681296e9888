"""The refusal of a container bound on one path of an ``if`` and None on the other
(transforms/analysis.py ``_placeholder_kind``), worded with the user's names only."""

from __future__ import annotations

import re
from typing import Any

from ..errors import TransformError
from ..ir.nodes import Function


def spelled(fn: Function, name: str) -> str | None:
    """```d``` for the IR's ``d`` (its version ``d_2``) where the user wrote ``d``; None
    for a name s2s made (``x_x_times_2``, a list literal's), which a message must not
    name.  In code s2s emitted (hessian's gradient), the user's lines are the comments
    quoting them."""
    emitted = str(fn.loc.file).startswith("<s2s:")
    lines = [t for t in fn.source_lines.values() if not emitted or t.strip().startswith("#")]
    for base in dict.fromkeys((name, re.sub(r"_\d+$", "", name))):
        if any(re.search(rf"\b{re.escape(base)}\b", t) for t in lines):
            return f"`{base}`"
    return None


def container_on_one_path(fn: Function, target: str, loc: Any) -> TransformError:
    name = spelled(fn, target)
    return TransformError(
        (f"{name} holds a container and is None on another path of the `if` that binds "
         "it" if name else "a list or tuple this `if` builds is None on its other path")
        + "; s2s cannot make its derivative's zeros there", loc,
        f"bind {name} on every path (a container of arrays there too), or read it only "
        "in the `if` that binds it" if name else "build the list before the `if`, on "
        "every path (`parts = [x, 2.0 * x]`, then `if ...: x = np.concatenate(parts)`)",
    )
