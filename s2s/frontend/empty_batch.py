"""A vmap written in the function over a batch of no example.

``s2s.vmap(g)(x)`` in a body is a loop of calls of ``g`` whose results are stacked
(``frontend/inner_vmap.py``); with no row there is no result to stack, and the stacked
array's shape is ``g``'s output's with a leading 0, which jax.vmap knows by tracing
``g`` abstractly.  s2s computes it the same way, from shapes and dtypes alone: the
stack is ``np.stack(parts) if len(parts) else <empty>``, the empty branch a call of an
``EmptyBatch`` object that runs ``s2s.eval_shape(g)`` on the rows' shapes (the
shape rules of ``primitives/shape_rules.py``, never ``g`` on data) and returns zeros
of shape ``(0, *out_shape)`` (the 0 at ``out_axes``).  It reads only the arguments'
shapes and dtypes, so it carries no derivative and, under an outer vmap, is the same
for every example.
"""

from __future__ import annotations

from typing import Any

import libcst as cst
import numpy as np

from ..ir.nodes import If, Var
from ..runtime import ShapeDtypeStruct


class EmptyBatch:
    """``g``'s stacked results for an empty batch, from the arguments' shapes and
    dtypes (per argument of the call, then per value a lifted ``g`` captured)."""

    def __init__(self, eval_shape: Any, fn: Any, axes: list[Any], arity: int | None,
                 out_axis: int, name: str) -> None:
        self.eval_shape, self.fn, self.axes = eval_shape, fn, axes
        self.arity, self.out_axis, self.name = arity, out_axis, name

    def __repr__(self) -> str:
        return self.name

    def __call__(self, *facts: Any) -> Any:
        structs = []
        for k in range(0, len(facts), 2):
            shape, dtype = tuple(facts[k]), facts[k + 1]
            axis = self.axes[k // 2] if k // 2 < len(self.axes) else None
            if axis is not None:
                axis = axis % len(shape) if shape else 0
                shape = shape[:axis] + shape[axis + 1:]
            weak = isinstance(dtype, type) and dtype in (int, float, complex, bool)
            structs.append(ShapeDtypeStruct(shape, np.dtype(dtype), weak))
        out = self.eval_shape(self.fn, *structs)
        outs = tuple(out) if self.arity else (out,)
        if self.arity and len(outs) != self.arity:
            raise ValueError(f"{self.name}: g returned {len(outs)} results, not "
                             f"{self.arity}")
        zeros = [np.moveaxis(np.zeros((0, *o.shape), o.dtype), 0, self.out_axis)
                 for o in outs]
        return tuple(zeros) if self.arity else zeros[0]


# how the empty branch reads an argument: its shape and its dtype
FACTS = ("np.shape({0})", "np.asarray({0}).dtype")


def stacked_or_empty(n: Any, node: Any, target: str | None, stacked: list[Any],
                     length: Any, empty: EmptyBatch, facts: list[Any],
                     fresh: Any, alias: Any) -> Any:
    """``stacked`` (the CST of each output's ``np.stack(parts)``) where the batch has
    rows, else ``empty``'s zeros: an `if` on ``length`` (``len(m)`` of the rows
    iterated) joining one name per
    output; ``facts`` are the CST expressions whose shapes and dtypes ``empty`` reads
    (``fresh``: a new local name; ``alias``: new nodes take the user's call's place)."""
    count = n.exprs.expr(length)
    joins = [n.names.fresh(f"stacked_{k}" if empty.arity else "stacked")
             for k in range(len(stacked))]
    outer, env = n.out, dict(n.env)
    branches = []
    n.out = []
    for join, expr in zip(joins, stacked):
        atom = n.exprs.expr(expr, join)
        if not (isinstance(atom, Var) and atom.name == join):
            n.emit(join, "identity", (atom,), {}, node)
    branches.append(n.out)
    n.env, n.out = dict(env), []
    operands, keys = [], []
    for value in facts:
        for template in FACTS:
            expr = cst.parse_expression(template.format(cst.Module([]).code_for_node(value)))
            alias(n, expr, node)
            atom = n.exprs.expr(expr)
            if isinstance(atom, Var):
                keys.append(f"__s2s_operand_{len(operands)}__")
                operands.append(atom)
            else:
                keys.append(atom.text)
    n.resolver.namespace[empty.name] = empty
    n.names.taken.add(empty.name)
    call = f"{empty.name}({', '.join(keys)})"
    used = tuple(k for k in keys if k.startswith("__s2s_operand_"))
    for k, join in enumerate(joins):
        n.emit(join, "pyexpr", tuple(operands), {
            "template": (call + (f"[{k}]" if empty.arity else ""), used),
            "shape_only": ()}, node)
    branches.append(n.out)
    n.out, n.env = outer, env
    n.out.append(If(count, branches[0], branches[1], n.loc(node), joins=list(joins)))
    names = [fresh(j) for j in joins]
    for name, join in zip(names, joins):
        n.env[name] = join
        n.bound.add(name)
    result = cst.Name(names[0]) if not empty.arity else cst.Tuple(
        [cst.Element(cst.Name(m)) for m in names])
    alias(n, result, node)
    return n.exprs.expr(result, target)


def empty_call(n: Any, obj: EmptyBatch, text: str, node: cst.Call,
               target: str | None) -> Any:
    """``g_empty_batch(shape_m, dtype_m, ...)`` read again in emitted code (a transform
    of code s2s emitted, ``jacfwd`` of a gradient): the same statement."""
    args, kwargs = n.calls.call_args(node)
    if kwargs:
        raise n.unsupported(node, f"`{text}` takes positional arguments",
                            "pass them by position")
    keys = [f"__s2s_operand_{k}__" if isinstance(a, Var) else a.text
            for k, a in enumerate(args)]
    n.resolver.namespace.setdefault(text, obj)
    return n.emit(n.exprs.target(target, "empty"), "pyexpr", tuple(
        a for a in args if isinstance(a, Var)), {
        "template": (f"{text}({', '.join(keys)})", tuple(
            k for k, a in zip(keys, args) if isinstance(a, Var))),
        "shape_only": ()}, node)
