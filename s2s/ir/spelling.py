"""How emitted code spells the IR's atoms: names, constants, indexes and tuples."""

from __future__ import annotations

from typing import Any

from .nodes import Const, Index, Slice, Var


def atom_text(atom: Any) -> str:
    """How emitted code spells an atom, index, or tuple of atoms."""
    if isinstance(atom, Var):
        return atom.name
    if isinstance(atom, Const):
        return atom.text
    if isinstance(atom, Index):
        return index_text(atom)
    if isinstance(atom, tuple):
        inner = ", ".join(atom_text(a) for a in atom)
        return f"({inner},)" if len(atom) == 1 else f"({inner})"
    return repr(atom)


def index_text(index: Index) -> str:
    parts = []
    for item in index.items:
        if isinstance(item, Slice):
            lo = atom_text(item.lower) if item.lower is not None else ""
            hi = atom_text(item.upper) if item.upper is not None else ""
            text = f"{lo}:{hi}"
            if item.step is not None:
                text += f":{atom_text(item.step)}"
            parts.append(text)
        else:
            parts.append(atom_text(item))
    if index.is_tuple and len(parts) == 1:
        return parts[0] + ","
    return ", ".join(parts)
