"""Errors inside your class's methods in your spelling (issue 23): s2s writes a
method as a function over the dict of the object's fields (``self.w`` as
``self["w"]``, built_objects.py; a list field ``__init__`` grows as a local name,
init_lists.py), so a refusal's words would name that function (``A_v``) and quote
that code (```self['w'] += ...```).  The function carries how you wrote it; a
refusal raised while lowering it names ``A.v`` and says ``self.w``.  (The quoted
line, file and column are the user's already: the function keeps their numbers.)"""

from __future__ import annotations

import re
from typing import Any

SPELLED = "__s2s_spelled__"


def mark(fn: Any, where: str, me: str, held: dict[str, str] | None = None) -> None:
    """Remember that ``fn`` is the method ``where`` (``"A.v"``), ``me`` its ``self``,
    ``held`` its list fields held by local names (field -> name)."""
    setattr(fn, SPELLED, (where, me, dict(held or {})))


def as_written(err: Any, fn: Any) -> Any:
    """``err`` (raised while lowering ``fn``) in the user's spelling."""
    found = getattr(fn, SPELLED, None)
    parts = getattr(fn, "__qualname__", "").split(".")
    if found is None and len(parts) == 2 and err.func == (  # (a method s2s calls as
            f"{parts[0]}_{parts[1].strip('_')}"):  # it is: `A_bad_try`, your `A.bad_try`)
        err.func = ".".join(parts)
        err.args = (err._render(),)
        return err
    if found is None or err.func not in (None, fn.__name__):
        return err
    where, me, held = found
    field = re.compile(rf"\b{re.escape(me)}\[(['\"])([A-Za-z_]\w*)\1\]")

    def spelled(text: Any) -> Any:
        if not isinstance(text, str):
            return text
        text = field.sub(rf"{me}.\2", text).replace("gives the dict a new item",
                                                     "gives the object a new field")
        for name, local in held.items():
            text = re.sub(rf"\b{re.escape(local)}\b", f"{me}.{name}", text)
        return text

    err.what, err.hint, err.func = spelled(err.what), spelled(err.hint), where
    err.args = (err._render(),)
    return err
