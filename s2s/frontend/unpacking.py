"""Starred unpacking of a value whose length is known only when the function runs."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..ir.nodes import Atom, Var
from .desugar import lower_in_place


def starred_at_run_time(n: Any, target: Any, tree: Atom) -> None:
    """``first, *rest, last = v`` of a value whose length is known only when the
    function runs (an array's rows, a list grown in a loop): the statements Python's
    unpacking amounts to, ``rest`` a list of the middle items, and Python's
    ``ValueError`` when there are too few."""
    elements = list(target.elements)
    if not isinstance(tree, Var) or sum(
            isinstance(e, cst.StarredElement) for e in elements) != 1:
        raise n.unsupported(
            target, "this starred unpacking is not supported",
            "index it: `first, rest = v[0], v[1:]`")
    k = next(i for i, e in enumerate(elements) if isinstance(e, cst.StarredElement))
    after, need = len(elements) - k - 1, len(elements) - 1
    v, i = n.comps.loop_name("unpacked"), n.comps.loop_name("i")
    n._bind(v, tree.name)

    def spelled(e: Any) -> str:
        return cst.Module([]).code_for_node(e.value)

    lines = [f"if len({v}) < {need}:\n    raise ValueError(f'not enough values to "
             f"unpack (expected at least {need}, got {{len({v})}})')\n"]
    lines += [f"{spelled(e)} = {v}[{j}]\n" for j, e in enumerate(elements[:k])]
    lines.append(f"{spelled(elements[k])} = [{v}[{i}] for {i} in range({k}, len({v})"
                 f"{f' - {after}' if after else ''})]\n")
    lines += [f"{spelled(e)} = {v}[{j - after}]\n"
              for j, e in enumerate(elements[k + 1:])]
    statements = [cst.parse_statement(line) for line in lines]
    lower_in_place(n, statements, target)
