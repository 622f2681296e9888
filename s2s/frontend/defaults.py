"""A nested function's defaults that are not literals (``lambda t, k=a: ...``).

Python evaluates such a default once, where the ``def`` or ``lambda`` runs.  s2s lifts
nested functions out of the function (``functions.py``), where ``a`` does not exist, so
the default's value is taken there: ``k_default = a`` is assigned where the function is
defined (a name nothing rebinds, so later writes to ``a`` do not change it), the
parameter's default becomes ``None``, and the body reads ``(k_default if k is None else
k)``, which s2s decides when it transforms each call (a call passing ``k`` reads it).
The function then captures ``k_default`` as it captures any value of the enclosing
function.  (A call passing ``None`` for such a parameter gets the default's value.)
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from .comprehensions import substitute
from .desugar import lower_in_place
from .dicts import assigned_names
from .source import literal_value


def snapshot_defaults(node: Any, n: Any) -> Any:
    """``node`` (a nested ``def`` or ``lambda``) with each non-literal default read from
    a name assigned here, where the function is defined; unchanged if none."""
    ps = node.params
    table: dict[str, Any] = {}
    changed: dict[Any, Any] = {}
    for p in (*ps.posonly_params, *ps.params, *ps.kwonly_params):
        if p.default is None or _is_literal(p.default):
            continue
        name = p.name.value
        body = node.body
        if name in assigned_names(body if isinstance(body, cst.BaseSuite) else
                                  cst.IndentedBlock([cst.SimpleStatementLine([
                                      cst.Expr(body)])])):
            return node  # (refused as before: the body rebinds the parameter)
        fresh = n.names.fresh(f"{name}_default")
        n.local_names.add(fresh)
        bind = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(fresh))],
                                                   p.default)])
        for new in (bind, bind.body[0]):
            n.desugar.alias(new, p.default)
        lower_in_place(n, [bind])  # (lowered here: where Python evaluates it)
        read = cst.IfExp(test=cst.Comparison(cst.Name(name), [cst.ComparisonTarget(
            cst.Is(), cst.Name("None"))]), body=cst.Name(fresh), orelse=cst.Name(name),
            lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        n.desugar.alias(read, p.default)
        table[name] = read
        changed[p] = p.with_changes(default=cst.Name("None"))
    if not table:
        return node
    alias = n.desugar.alias

    class Params(cst.CSTTransformer):
        def leave_Param(self, original: cst.Param, updated: cst.Param) -> Any:
            return changed.get(original, updated)

    params = ps.visit(Params())
    body = substitute(node.body, table, alias)
    new = node.with_changes(params=params, body=body)
    alias(new, node)
    alias(body, node.body)
    return new


def _is_literal(node: Any) -> bool:
    try:
        literal_value(cst.Module([]).code_for_node(node))
    except (ValueError, SyntaxError):
        return False
    return True
