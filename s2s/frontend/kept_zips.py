"""``pairs = zip(x, y)`` kept in a name, then walked once by a ``for`` loop of the
same block (``for p, q in pairs:``): the zip's operands are bound where the zip was
made (``pairs_0 = x``, ``pairs_1 = y``: Python's zip holds them from there) and the
loop walks ``zip(pairs_0, pairs_1)``, the form every transform lowers.  Any other use
of the name (a second walk, a walk in another block or a loop, ``next``, passing it
on) keeps the zip, refused where it is made."""

from __future__ import annotations

import builtins
from typing import Any

import libcst as cst

from .generator_reads import _walk


def kept_zips(it: Any, nodes: list[Any]) -> list[Any]:
    """``nodes`` (one block's statements; ``it``: the Iterations pass) with each zip
    kept in a name and walked once by a later loop of this block rewritten."""
    out = list(nodes)
    for i, node in enumerate(nodes):
        found = _kept_zip(it, node)
        if found is None:
            continue
        name, call = found
        loop = _walked_once(it.n, name, out[i + 1:])
        if loop is None:
            continue
        _, names = _walk(it.n)
        taken = {x[0].value for x in names} | set(it.n.local_names)
        binds: list[Any] = []
        operands: list[cst.Arg] = []
        for k, arg in enumerate(call.args):
            bound = f"{name}_{k}"
            while bound in taken:
                bound += "_"
            taken.add(bound)
            it.n.local_names.add(bound)  # (a local of the function, as the user's names)
            line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(bound))],
                                                       arg.value)])
            it.n.desugar.alias_tree(line, node)
            binds.append(line)
            operands.append(cst.Arg(cst.Name(bound)))
        walk = cst.Call(cst.Name("zip"), operands)
        it.n.desugar.alias_tree(walk, loop.iter)
        new_loop = loop.with_changes(iter=walk)
        it.n.desugar.alias(new_loop, loop)
        out = [new_loop if x is loop else x for x in out]
        at = out.index(node)
        out[at:at + 1] = binds
    return out


def _kept_zip(it: Any, node: Any) -> tuple[str, cst.Call] | None:
    if not (isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1):
        return None
    stmt = node.body[0]
    if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(
            stmt.targets[0].target, cst.Name) and isinstance(stmt.value, cst.Call)):
        return None
    call = stmt.value
    if it.builtin(call.func) is not builtins.zip or not call.args or any(
            a.star or a.keyword for a in call.args):
        return None
    return stmt.targets[0].target.value, call


def _walked_once(n: Any, name: str, later: list[Any]) -> cst.For | None:
    """The ``for`` among ``later`` (this block's statements after the binding) that
    walks ``name``, where the function's only other mention of ``name`` is that
    binding; None otherwise."""
    _, names = _walk(n)
    uses = [(node, parents) for node, parents, store in names
            if node.value == name and not store]
    stores = [node for node, _, store in names if node.value == name and store]
    if len(uses) != 1 or len(stores) != 1:
        return None
    node, parents = uses[0]
    loop = parents[-1] if parents else None
    if not isinstance(loop, cst.For) or loop.iter is not node or loop.orelse is not None:
        return None
    return loop if any(x is loop for x in later) else None
