"""Tuples and lists of arrays that a NumPy function reads as one array.

``np.sum(xs)`` of a list is ``np.sum(np.asarray(xs))``: NumPy converts the list
first.  Emitted rules must read that array, never the list: the backward of
``np.square(xs)`` is ``2 * xs * g``, and ``2 * xs`` of a list repeats the list (a
gradient half the size, or silently wrong for a one-item list).  Lists the function
builds are converted by the frontend when it lowers the call (frontend/calls.py,
``as_array``); this pass converts the ones whose structure only the call signature
says: a tuple or list argument, or one inside a pytree argument (``p["ws"]``).  It
runs per call structure, where the transforms unroll container loops, so the probes
and the emitted code see the same names.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..ir.kinds import Tree
from ..ir.names import NameTable
from ..ir.nodes import Const, For, Function, If, Let, Stmt, Var
from ..ir.unroll import unroll_container_loops
from ..primitives.registry import reads_arrays


def per_call(fn: Function, arg_kinds: tuple) -> Function:
    """``fn`` as the transforms read it for arguments of ``arg_kinds``: loops over
    containers unrolled, sequence arguments read as arrays converted."""
    return lists_as_arrays(unroll_container_loops(fn, arg_kinds), arg_kinds)


def lists_as_arrays(fn: Function, arg_kinds: tuple) -> Function:
    """``fn`` with ``np.asarray`` of each tuple or list argument (or pytree part) that
    an array-reading primitive takes as an operand, before it."""
    seqs = {p: k for p, k in zip(fn.params, arg_kinds) if isinstance(k, Tree)}
    if not seqs:
        return fn
    pass_ = _Convert(fn, seqs)
    body = pass_.block(fn.body)
    if not pass_.changed:
        return fn
    return replace(fn, body=body, names=pass_.names)


class _Convert:
    def __init__(self, fn: Function, trees: dict[str, Tree]) -> None:
        self.trees: dict[str, Any] = dict(trees)
        self.names = NameTable(fn.names.taken)
        self.changed = False

    def block(self, stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, Let):
                out += self.let(s)
            elif isinstance(s, If):
                out.append(replace(s, body=self.block(s.body), orelse=self.block(s.orelse)))
            elif isinstance(s, For):
                out.append(replace(s, body=self.block(s.body)))
            else:
                out.append(s)
        return out

    def let(self, s: Let) -> list[Stmt]:
        a = s.args[0] if s.args else None
        tree = self.trees.get(a.name) if isinstance(a, Var) else None
        if tree is not None and s.prim == "identity":
            self.trees[s.target] = tree
        elif tree is not None and s.prim == "getitem":
            child = _child(tree, _constant_key(s))
            if isinstance(child, Tree):
                self.trees[s.target] = child
        if not reads_arrays(s.prim):
            return [s]
        before: list[Stmt] = []
        args = list(s.args)
        for k, b in enumerate(args):
            t = self.trees.get(b.name) if isinstance(b, Var) else None
            if t is None or t.type is dict:
                continue
            name = self.names.fresh(f"{b.name}_array")
            before.append(Let(name, "asarray", (b,), {}, s.loc))
            args[k] = Var(name)
        if not before:
            return [s]
        self.changed = True
        return before + [replace(s, args=tuple(args))]


def _child(tree: Tree, key: Any) -> Any:
    """The part ``tree[key]`` (None where the key is not one of its own)."""
    if tree.type is dict:
        return tree.child(key) if key in tree.keys else None
    if type(key) is int and -len(tree.keys) <= key < len(tree.keys):
        return tree.children[key]
    return None


def _constant_key(s: Let) -> Any:
    index = s.params.get("index")
    items = getattr(index, "items", ())
    if len(items) == 1 and isinstance(items[0], Const) and type(items[0].value) in (int, str):
        return items[0].value
    return None
