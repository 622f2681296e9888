"""``np.piecewise(x, condlist, funclist, *args, **kw)``: a chain of ``np.where``.

Each function of ``funclist`` is called on the whole of ``x`` (with ``args`` and
``kw``), each constant stands for itself, and the conditions choose, the last one that
holds winning (NumPy's and JAX's order)::

    np.where(c2, f2(x), np.where(c1, f1(x), default))

``default`` is the extra last entry of ``funclist`` where it has one more entry than
``condlist``, else 0; the result is cast to ``x``'s dtype, as NumPy's (and JAX's).  As
in JAX (``lax.switch`` over a vectorized index), every function sees every element:
a function that is NaN or infinite outside its piece makes its piece's derivative
NaN there (where's VJP gives the other side 0, times an infinite factor), as JAX's.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..ir.nodes import Atom, Const
from ..primitives.registry import ATTRIBUTES

_CONDITION = (cst.Comparison, cst.UnaryOperation, cst.BooleanOperation,
              cst.BinaryOperation, cst.Call)


def lower_piecewise(n: Any, node: cst.Call, target: str | None) -> Atom:
    """``np.piecewise(...)`` lowered by the Normalizer ``n``."""
    positional = [a for a in node.args if a.keyword is None]
    if any(a.star for a in node.args) or len(positional) < 3:
        raise n.unsupported(node, "np.piecewise takes x, a list of conditions and a list "
                            "of functions or constants, by position here",
                            "write np.piecewise(x, [x < 0, x >= 0], [f, g])")
    x_node, cond_node, func_node = (a.value for a in positional[:3])
    x = n.exprs.expr(x_node)
    extra = [n.exprs.expr(a.value) for a in positional[3:]]
    keywords = {a.keyword.value: n.exprs.expr(a.value) for a in node.args if a.keyword}
    conds = n.comps.items_of(cond_node)
    if conds is None and isinstance(cond_node, _CONDITION):
        conds = [n.exprs.expr(cond_node)]  # (one boolean array: one condition)
    if conds is None:
        raise n.unsupported(cond_node, "np.piecewise's conditions must be a list or tuple "
                            "s2s knows the length of when it transforms the function",
                            "write the list in the call: np.piecewise(x, [c1, c2], ...)")
    if not isinstance(func_node, (cst.List, cst.Tuple)) or any(
            isinstance(e, cst.StarredElement) for e in func_node.elements):
        raise n.unsupported(func_node, "np.piecewise's functions must be a list or tuple "
                            "written in the call", "write np.piecewise(x, conds, [f, g])")
    pieces = [n.funcs.value_of(e.value) or n.exprs.expr(e.value) for e in func_node.elements]
    if len(pieces) == len(conds) + 1:
        default = pieces.pop()
    elif len(pieces) == len(conds):
        default = None
    else:
        raise n.unsupported(node, f"np.piecewise with {len(conds)} conditions takes "
                            f"{len(conds)} or {len(conds) + 1} functions, not "
                            f"{len(pieces)} (NumPy refuses it too)",
                            "give one function per condition, and one more for the "
                            "elements no condition holds for")

    def value(piece: Any) -> Atom:
        if isinstance(piece, Atom):
            return piece  # (a constant piece, or an array the function computed)
        return n.funcs.call(piece, node, None, ([x, *extra], dict(keywords)))

    text = "np.piecewise"
    out = value(default) if default is not None else (
        Const(0, "0") if conds else n.calls.apply("zeros_like", [x], {}, node, None, text))
    for cond, piece in zip(conds, pieces):
        out = n.calls.apply("where", [cond, value(piece), out], {}, node, None, text)
    if isinstance(x, Const):
        return n.calls.apply("array", [out], {}, node, target, text) if target else out
    dtype = n.emit(n.exprs.target(None, "dtype"), ATTRIBUTES["dtype"], (x,), {}, node)
    return n.calls.apply("astype", [out, dtype], {}, node, target, text)
