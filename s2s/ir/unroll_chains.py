"""Lists built by appending, and names an unrolled block hands on (an IR pass's part).

``out = []; out.append(a); out.append(b)`` (straight code, or the copies of unrolled
loops) is a list whose items this call knows: ``ir/unroll.py`` follows the chain of
appends (``appended``), so ``len(out)`` is a constant and ``for v in out`` unrolls as a
loop over a literal does.  A chain inside a loop the pass keeps has no length (each
pass appends again): the unroller drops it there.  ``compose``: after an unrolled loop
or a decided branch, the names later code reads instead of those it carried.
"""

from __future__ import annotations

from typing import Any

from .kinds import LEAF, Tree
from .nodes import Atom, Const, Let, Var


def compose(subst: dict[str, Atom], later: dict[str, Atom]) -> None:
    """``subst`` after a block or unrolled loop whose entries ``later`` renames: a
    name read as an entry the block carried (``out`` read as the first unrolled loop's
    last exit, which a second loop appending to it carried on) reads its new exit."""
    for k, v in subst.items():
        if isinstance(v, Var) and v.name in later:
            subst[k] = later[v.name]
    subst.update(later)


def appended(u: Any, s: Let) -> Let:
    """Follow lists built by appending (``items = []; items.append(v)``, unrolled);
    a dict comprehension's ``make_dict(keys, values)`` over two such lists whose
    keys are now constant strings becomes the dict literal ``{"w": v0, ...}``."""
    if s.prim == "make_list" and not s.args:
        u.chains[s.target] = ()
    elif s.prim == "identity" and isinstance(s.args[0], Var) and \
            s.args[0].name in u.chains:  # (an `if` decided per call: its join)
        u.chains[s.target] = u.chains[s.args[0].name]
    elif s.prim == "append" and isinstance(s.args[0], Var) and s.target not in \
            u.rebound and s.args[0].name not in u.chains and \
            getattr(u.trees.get(s.args[0].name), "type", None) is list:
        grown = u.trees[s.args[0].name]  # (`xs = [a, b]; xs.append(c)`: 3 items)
        new = u.trees.get(s.args[1].name, LEAF) if isinstance(s.args[1], Var) else LEAF
        u.trees[s.target] = Tree(list, tuple(range(len(grown.keys) + 1)),
                               grown.children + (new,))
    elif s.prim == "append" and isinstance(s.args[0], Var) and s.args[0].name in u.chains:
        u.chains[s.target] = items = u.chains[s.args[0].name] + (s.args[1],)
        if all(isinstance(a, Const) and type(a.value) is str for a in items):
            # `[k for k in p]`: a list of this call's keys, read as its literal
            u.literals[s.target] = items
            u.trees[s.target] = Tree(list, tuple(range(len(items))), (LEAF,) * len(items))
        else:  # (`out = []; out.append(a)` in straight code or unrolled loops: its
            # length known, so `for v in out` unrolls too; refused before, "a tuple,
            # list or dict argument can only be indexed with a constant key")
            u.trees[s.target] = Tree(list, tuple(range(len(items))), tuple(
                u.trees.get(a.name, LEAF) if isinstance(a, Var) else LEAF for a in items))
    elif keyed_per_call(s) and all(a.name in u.chains for a in s.args):
        keys, values = (u.chains[a.name] for a in s.args)
        if all(isinstance(k, Const) and type(k.value) is str for k in keys) and len(
                {k.value for k in keys}) == len(keys):
            u.removable |= {n for n in u.chains}
            return Let(s.target, "make_dict", values,
                       {"keys": tuple(k.value for k in keys)}, s.loc)
    return s


def keyed_per_call(s: Any) -> bool:
    """A dict comprehension's ``make_dict(keys, values)`` over run-time lists."""
    return isinstance(s, Let) and s.prim == "make_dict" and "from_items" in s.params
