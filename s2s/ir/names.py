"""Names in IR: the table of names one emitted function has taken, readable stems for
temporaries, and the names a block binds or reads (and renaming one)."""

from __future__ import annotations

import builtins
import keyword
import re
from typing import Any

from .nodes import Break, Const, For, If, Index, Let, Return, Slice, Stmt, Var


class NameTable:
    """Hands out names unique within one emitted function."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)

    def fresh(self, base: str) -> str:
        base = identifier(base)
        if base not in self.taken:
            self.taken.add(base)
            return base
        i = 2
        while f"{base}_{i}" in self.taken:
            i += 1
        name = f"{base}_{i}"
        self.taken.add(name)
        return name


def identifier(text: str) -> str:
    text = re.sub(r"\W+", "_", text).strip("_") or "tmp"
    if text[0].isdigit():
        text = "v" + text
    if keyword.iskeyword(text) or text in dir(builtins):
        text += "_"
    return text


def stem(atom: Any) -> str:
    if isinstance(atom, Var):
        return atom.name.rstrip("_") or atom.name
    if isinstance(atom, Const):
        v = atom.value
        if isinstance(v, bool) or v is None:
            return str(v).lower()
        if isinstance(v, int):
            return str(v) if v >= 0 else f"m{-v}"
        if isinstance(v, float) and simple_text(atom.text) and "e" not in atom.text.lower():
            text = repr(int(v)) if v.is_integer() else atom.text.replace(".", "_")
            return text.replace("-", "m")
        if isinstance(v, str) and v.isidentifier():
            return v
        if re.fullmatch(r"[A-Za-z_][\w.]*", atom.text):
            return atom.text.split(".")[-1]
        return "c"
    return "s"


def readable(name: str) -> str:
    """A function's name as a stem of emitted names: a special method's without its
    underscores (``__call__``: ``call``, so ``call_vjp_self``, not ``__call___vjp_self``)."""
    if len(name) > 4 and name.startswith("__") and name.endswith("__"):
        return name[2:-2]
    return name


def simple_text(text: str) -> bool:
    return re.fullmatch(r"-?[0-9.eE_+-]+", text) is not None


def bound_names(stmts: list[Stmt]) -> list[str]:
    """Names a block binds (nested blocks included), in order."""
    out: list[str] = []
    for s in stmts:
        if isinstance(s, Let):
            out.append(s.target)
        elif isinstance(s, If):
            out += bound_names(s.body) + bound_names(s.orelse) + s.joins
        elif isinstance(s, For):
            out += [s.target] + ([s.counter] if s.counter else []) + bound_names(s.body)
    return list(dict.fromkeys(out))


def read_names(stmts: Any) -> set[str]:
    """The names statements read (nested blocks included)."""
    out: set[str] = set()

    def r(a: Any) -> None:
        if isinstance(a, Var):
            out.add(a.name)
        elif isinstance(a, Index):
            for i in a.items:
                r(i)
        elif isinstance(a, Slice):
            r(a.lower), r(a.upper), r(a.step)
        elif isinstance(a, (tuple, list)):
            for i in a:
                r(i)

    def walk(ss: Any) -> None:
        for s in ss:
            if isinstance(s, Let):
                r(s.args)
                r(tuple(s.params.values()))
            elif isinstance(s, If):
                r(s.test)
                walk(s.body)
                walk(s.orelse)
            elif isinstance(s, For):
                r(s.iter), r(s.test)
                walk(s.body)
                r(tuple(x for _, x in s.carried))
            elif isinstance(s, Return):
                r(s.value)

    walk(stmts)
    return out


def rename(stmts: list[Stmt], old: str, new: str) -> None:
    def r(a: Any) -> Any:
        if isinstance(a, Var) and a.name == old:
            return Var(new)
        if isinstance(a, Index):
            return Index(tuple(r(i) for i in a.items), a.is_tuple)
        if isinstance(a, Slice):
            return Slice(r(a.lower), r(a.upper), r(a.step))
        if isinstance(a, tuple):
            return tuple(r(i) for i in a)
        return a

    for s in stmts:
        if isinstance(s, Let):
            if s.target == old:
                s.target = new
            s.args = tuple(r(a) for a in s.args)
            s.params = {k: r(v) for k, v in s.params.items()}
        elif isinstance(s, If):
            s.test = r(s.test)
            rename(s.body, old, new)
            rename(s.orelse, old, new)
            s.joins = [new if j == old else j for j in s.joins]
        elif isinstance(s, Break):
            s.env = {k: new if v == old else v for k, v in s.env.items()}
            s.copies = [(new if e == old else e, new if v == old else v) for e, v in s.copies]
        elif isinstance(s, For):
            s.iter = r(s.iter) if s.iter is not None else None
            s.test = r(s.test) if s.test is not None else None
            s.target = new if s.target == old else s.target
            rename(s.body, old, new)
            s.carried = [(new if e == old else e, new if x == old else x) for e, x in s.carried]
        elif isinstance(s, Return):
            s.value = r(s.value)


# In the namespace of emitted code: ``{name: FreeVar}`` for the names it reads from the
# user's module (or from other emitted code), of which it holds copies between calls
UPSTREAM = "__s2s_upstream__"
PRIVATE = "__s2s_private__"  # (a namespace s2s made that no one rebinds: a partial's)
