"""A loop over a tuple or list of dicts whose keys are known (``for s in specs:`` of a
tuple-of-dicts parameter made per its items' keys, ``bound_params.py``, or of a
literal of dicts), unrolled, so each copy of the body reads one dict of known keys
(``penalty(w, specs[0])``: a callee matching on it decides its cases)::

    for s in specs:                         total = total + penalty(w, specs[0])
        total = total + penalty(w, s)  ->   total = total + penalty(w, specs[1])
                                            s = specs[1]

A loop whose body leaves early (``break``, ``continue``, ``return``) or binds the
loop's name is left to the loop lowering."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..ir.nodes import Var
from .comprehensions import substitute
from .desugar import leaves_somewhere
from .dicts import assigned_names
from .module_dicts import lower_copies


def unroll_dict_items(n: Any, node: cst.For) -> bool:
    """Lower ``node`` as above (True), or leave it (False, nothing emitted)."""
    if node.orelse is not None or node.asynchronous is not None or not isinstance(
            node.iter, cst.Name) or not isinstance(node.target, cst.Name):
        return False
    name, target = node.iter.value, node.target.value
    ssa = n.env.get(name) if name in n.local_names else None
    let = n.lets.get(ssa) if ssa is not None else None
    if let is None or let.target != ssa or let.prim not in ("make_tuple", "make_list") or (
            let.params or not let.args or ssa in n.loop_carried or ssa in n.lists or
            ssa in n.buffer_root.values()):
        return False
    if not all(isinstance(a, Var) and n.dicts.known(a.name) is not None for a in let.args):
        return False
    body = list(node.body.body)
    if target in assigned_names(node.body) or any(leaves_somewhere(s, kind) for s in body
                                                  for kind in (cst.Break, cst.Continue,
                                                               cst.Return)):
        return False
    alias = n.desugar.alias
    items = []
    for k in range(len(let.args)):
        item = cst.Subscript(cst.Name(name), [cst.SubscriptElement(cst.Index(cst.Integer(
            str(k))))])
        n.desugar.alias_tree(item, node.iter)
        items.append(item)
    copies = [[substitute(s, {target: item}, alias) for s in body] for item in items]
    last = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target))],
                                               items[-1])])
    n.desugar.alias_tree(last, node.target)
    copies[-1].append(last)  # (after the loop its name holds the last item, as in Python)
    lower_copies(n, copies)
    return True
