"""A loop over a slice of a list of functions whose bounds are known only when the
function runs: ``for op in ops[:k]: x = op(x)`` with ``k`` an int argument.

The list's functions are known now, so the loop is unrolled as a loop over the whole
list is (``fncontainers.py``), each copy of the body under an ``if`` that asks, when
the code runs, whether Python's slice takes that item:

    ops_stop = k
    ops_stop = ops_stop + 3 * (ops_stop < 0)    # (of 3 functions)
    if 0 < ops_stop:                            # ops[0] is in ops[:k]
        x = ops[0](x)
    if 1 < ops_stop:
        x = ops[1](x)
    ...

so each call takes the items its own ``k`` selects (a later call with another ``k``
runs other branches of the same code).  The tests are Python's slice rules for an
index ``i`` of ``n`` items: a bound below 0 counts from the end (``k + n``), and ``i``
is taken when ``start <= i < stop``.  The step must be known now (1 by default); a
negative one, or one with a start known only when the code runs, is refused at the
slice.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..errors import SliceIndexError
from .comprehensions import substitute
from .dicts import _jumps, assigned_names
from .static import NOVALUE


def unroll_run_time_slice(containers: Any, node: cst.For) -> bool:
    """``for g in fs[a:b]`` over a local (or module) list of functions with run-time
    bounds, unrolled under per-item tests; False (nothing emitted) for any other
    loop."""
    n = containers.n
    it = node.iter
    if node.orelse is not None or node.asynchronous is not None or not (
            isinstance(it, cst.Subscript) and isinstance(it.value, cst.Name) and len(
                it.slice) == 1 and isinstance(it.slice[0].slice, cst.Slice)):
        return False
    base = it.value.value
    pairs = containers.local.get(base) if base in containers.local else (
        None if base in n.local_names else containers._module_items(it.value, it))
    if not pairs or not all(isinstance(k, int) for k, _ in pairs):
        return False
    part = it.slice[0].slice
    bounds = [None if b is None else n.comps.static.static_value(b)
              for b in (part.lower, part.upper, part.step)]
    if all(b is None or type(b) is int for b in bounds):
        return False  # (bounds known now: fncontainers' own unrolling)
    _check_indices(n, part)
    start, stop, step = bounds
    if step is NOVALUE or step is not None and (type(step) is not int or step < 1) or (
            start is NOVALUE and step not in (None, 1)) or not isinstance(node.target,
                                                                       cst.Name):
        raise n.unsupported(part, f"`{base}` holds functions, and this slice's step, or "
                            "its start with a step, would be known only when the function "
                            "runs", "slice with a step of 1 (`ops[:k]`, `ops[j:k]`), or with "
                            "constant bounds")
    if _jumps(node.body):
        raise n.unsupported(node, "a loop over functions is unrolled, and a `break`, "
                            "`continue` or `return` of it is not supported yet",
                            "use an `if` in the body")
    if node.target.value in assigned_names(node.body):
        raise n.unsupported(node.target, f"the body assigns the loop variable "
                            f"`{node.target.value}`", "give the new value another name")
    size, statements = len(pairs), []
    names = {}
    for which, bound in (("start", start), ("stop", stop)):
        if bound is NOVALUE:  # (computed once, before the loop, as Python does; from
            name = names[which] = n.names.fresh(f"{base}_{which}")  # the end if < 0)
            n.local_names.add(name)
            statements.append(cst.SimpleStatementLine([cst.Assign(
                [cst.AssignTarget(cst.Name(name))],
                part.lower if which == "start" else part.upper)]))
            statements.append(cst.parse_statement(f"{name} = {name} + {size} * ({name} < 0)"))
    known = [start if start is not NOVALUE else None, stop if stop is not NOVALUE else None,
             step]
    taken = set(range(size)[slice(*known)]) if start is not NOVALUE else set(
        range(size)[slice(None, known[1], None)])
    for i in range(size):
        if i not in taken:
            continue
        test = " < ".join([*([f"{names['start']} <= {i}"] if "start" in names else [str(i)]),
                           *([names["stop"]] if "stop" in names else [])])
        item = cst.Subscript(cst.Name(base), [cst.SubscriptElement(cst.Index(
            cst.Integer(str(i))))])
        n.desugar.alias(item, it)
        body = [substitute(s, {node.target.value: item}, n.desugar.alias)
                for s in node.body.body]
        test = cst.parse_expression(test)
        n.desugar.alias_tree(test, part)
        statements.append(cst.If(test, cst.IndentedBlock(body)))
    for s in statements:
        n.desugar.alias_tree(s, node) if not isinstance(s, cst.If) else n.desugar.alias(s, node)
    outer = n.out
    lowered = n.stmts.block(statements)
    n.out = outer
    outer += lowered
    return True


def _check_indices(n: Any, part: cst.Slice) -> None:
    """A bound that is a parameter whose value at this call has no ``__index__`` (a
    float ``k``; its type is part of the call's signature, ``typetests.py``): Python's
    TypeError, located at the bound."""
    types = getattr(n, "arg_types", {})
    for bound in (part.lower, part.upper, part.step):
        cls = types.get(bound.value) if isinstance(bound, cst.Name) else None
        if cls is None or cls is type(None) or hasattr(cls, "__index__"):
            continue
        raise SliceIndexError(
            "slice indices must be integers or None or have an __index__ method (`"
            f"{bound.value}` is a {cls.__name__} at this call)", n.loc(bound),
            f"pass an int (`int({bound.value})` where it holds a whole number)", n.display)
