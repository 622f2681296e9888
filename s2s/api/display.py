"""Notebook display of transformed functions (Jupyter's ``_repr_html_`` and
``_repr_markdown_``): the emitted code, highlighted, or before the first call, what
the transform will emit and what it waits for.  Display never raises: a notebook cell
that shows a transform must not fail because the transform cannot emit yet.
"""

from __future__ import annotations

import html
import inspect
from typing import Any

from ..emit.highlight import highlight_html


def _title(obj: Any) -> str:
    kind = getattr(obj, "display_kind", None) or getattr(obj, "mode", None) or "transform"
    fn = getattr(obj, "fun", None) or getattr(obj, "fn", None)
    if kind == "hessian":  # jacfwd of the gradient inside: name the user's function
        fn = getattr(fn, "fn", fn)
    if isinstance(fn, NotebookDisplay):  # a composition: vmap(grad(f)), jit(...)
        return f"s2s.{kind}({_title(fn)})"
    name = getattr(fn, "__name__", None) or "f"
    return f"s2s.{kind}({name})"


def shown(obj: Any) -> tuple[str, str | None, str]:
    """``(title, code or None, note)``: what a notebook shows for a transform."""
    title = _title(obj)
    try:
        code = obj.source
        if not isinstance(code, str) or not code.strip():
            raise ValueError("call it once: the code is emitted for its arguments")
    except Exception as exc:  # (whatever keeps it from emitting yet, said in one line)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return title, None, f"Nothing emitted yet: {first}"
    return title, code, ""


class NotebookDisplay:
    """Gives a transform class Jupyter's rich display; ``display_kind`` names it."""

    display_kind: str | None = None

    def _repr_html_(self) -> str:
        title, code, note = shown(self)
        head = f"<div><b>{html.escape(title)}</b></div>"
        if code is None:
            return head + f"<div><i>{html.escape(note)}</i></div>"
        try:
            return head + highlight_html(code)
        except Exception:  # the highlighter is not worth a failed cell
            return head + f"<pre>{html.escape(code)}</pre>"

    def _repr_markdown_(self) -> str:
        title, code, note = shown(self)
        if code is None:
            return f"**{title}**\n\n_{note}_\n"
        return f"**{title}**\n\n```python\n{code.rstrip()}\n```\n"


class _Checkpointed(NotebookDisplay):
    """What a notebook shows for ``s2s.checkpoint(f)`` (a plain function): the mark,
    and the function's own source, which is what it runs."""

    display_kind = "checkpoint"

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    @property
    def source(self) -> str:
        return inspect.getsource(self.fn)


def display_checkpointed(fn: Any) -> None:
    view = _Checkpointed(fn)
    fn._repr_html_ = view._repr_html_
    fn._repr_markdown_ = view._repr_markdown_
