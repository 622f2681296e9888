"""``functools.reduce(f, xs[, initial])``: a left fold, lowered as the calls it makes.

Over a sequence whose length is known when s2s transforms the function (a literal, a
tuple argument, a comprehension it unrolls) the fold is unrolled, one call of ``f`` per
item.  Over one known only when it runs (an array's rows, a list grown in a loop) it is
the loop Python runs::

    acc = xs[0]                      # (or: acc = initial)
    for k in range(1, len(xs)):      # (or: range(len(xs)))
        acc = f(acc, xs[k])

so every transform sees an ordinary loop, with the fold's first and last calls
written out of it (JAX, which unrolls the Python loop, never multiplies a derivative
that is zero by construction: the seed's in reverse mode, the constant's or the basis's
second-order one in forward mode; carried into a loop such a derivative becomes an
array of zeros, and ``0 * inf`` is NaN where JAX's Hessian of the product ``[inf, 0]``
is ``[[0, 1], [1, 0]]``)::

    acc = xs[0]                      # (or: acc = initial; if n > 0: acc = f(acc, xs[0]))
    if n > 2:
        acc = f(acc, xs[1])
        for k in range(2, n - 1):
            acc = f(acc, xs[k])
        acc = f(acc, xs[n - 1])
    elif n == 2:
        acc = f(acc, xs[1])

An empty sequence without ``initial`` is Python's ``TypeError``, raised when the
function runs.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..ir.nodes import Atom, Var
from .desugar import lower_in_place


def lower_reduce(n: Any, node: cst.Call, target: str | None) -> Atom:
    """``functools.reduce(f, xs[, initial])`` lowered by the Normalizer ``n``."""
    args = node.args
    if len(args) not in (2, 3) or any(a.keyword or a.star for a in args):
        raise n.unsupported(node, "functools.reduce takes a function, a sequence and "
                            "an optional initial value, by position here",
                            "write functools.reduce(f, xs) or functools.reduce(f, xs, initial)")
    fv = n.funcs.value_of(args[0].value)
    if fv is None:
        err = n.unsupported(args[0], "this is not a function s2s knows",
                            "pass a function defined in a file, a lambda or an operator")
        err.per_call = True  # (a parameter: bound to the call's function, callables.py)
        raise err
    items = n.comps.items_of(args[1].value)
    if items is not None:
        if len(args) == 3:
            acc, rest = n.exprs.expr(args[2].value), items
        elif not items:
            raise n.unsupported(node, "reduce() of an empty sequence with no initial "
                                "value is Python's TypeError", "pass an initial value")
        else:
            acc, rest = items[0], items[1:]
        for k, item in enumerate(rest):
            last = k == len(rest) - 1
            acc = n.funcs.call(fv, node, target if last else None, ([acc, item], {}))
        return acc
    return _loop(n, node, target)


def _loop(n: Any, node: cst.Call, target: str | None) -> Atom:
    args = node.args
    seq = args[1].value
    statements = []
    if not isinstance(seq, cst.Name):  # (the sequence computed once)
        name = n.comps.loop_name("items")
        statements.append(_assign(name, seq))
        seq = cst.Name(name)
    # (not the assignment's own name: its first version, the first item, and the
    # result the statement binds to it would be two values of one name, whose
    # cotangents the reverse sweep then adds: trace(reduce(matmul, [m, ...])) had
    # an extra identity in its gradient)
    acc, k = n.comps.loop_name("acc"), n.comps.loop_name("k")
    count = n.comps.loop_name("n")
    spelled = cst.Module([]).code_for_node(seq)

    def call(item: str) -> cst.SimpleStatementLine:
        return _assign(acc, cst.Call(args[0].value, [cst.Arg(cst.Name(acc)), cst.Arg(
            cst.parse_expression(item))]))

    # the first and last calls out of the loop (the module's docstring says why)
    loop = cst.For(target=cst.Name(k), iter=cst.parse_expression(
        f"range(2, {count} - 1)"), body=cst.IndentedBlock([call(f"{spelled}[{k}]")]))
    rest = cst.If(test=cst.parse_expression(f"{count} > 2"), body=cst.IndentedBlock([
        call(f"{spelled}[1]"), loop, call(f"{spelled}[{count} - 1]")]), orelse=cst.If(
            test=cst.parse_expression(f"{count} == 2"),
            body=cst.IndentedBlock([call(f"{spelled}[1]")])))
    if len(args) == 3:
        statements.append(_assign(acc, args[2].value))
        statements.append(_assign(count, cst.parse_expression(f"len({spelled})")))
        statements.append(cst.If(test=cst.parse_expression(f"{count} > 0"),
                                 body=cst.IndentedBlock([call(f"{spelled}[0]"), rest])))
    else:
        # (the test reads the length, not the list: vmap batches none of it)
        statements.append(_assign(count, cst.parse_expression(f"len({spelled})")))
        statements.append(cst.parse_statement(
            f"if {count} == 0:\n"
            f"    raise TypeError('reduce() of empty iterable with no initial value')\n"))
        statements.append(cst.parse_statement(f"{acc} = {spelled}[0]\n"))
        statements.append(rest)
    lower_in_place(n, statements, node)
    return Var(n.env[acc])


def _assign(name: str, value: Any) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])



def lower_accumulate(n: Any, node: cst.Call, target: str | None) -> Atom:
    """``itertools.accumulate(xs[, f], initial=None)`` over a sequence whose length is
    known when s2s transforms the function: the list of its running values, one call
    of ``f`` (``+`` by default) per item, as Python computes them."""
    args = node.args
    positional = [a for a in args if a.keyword is None]
    keywords = {a.keyword.value: a.value for a in args if a.keyword is not None}
    if any(a.star for a in args) or not 1 <= len(positional) <= 2 or (
            set(keywords) - {"func", "initial"}) or (len(positional) == 2 and "func" in keywords):
        raise n.unsupported(node, "itertools.accumulate takes a sequence, an optional "
                            "function and an optional initial= here",
                            "write itertools.accumulate(xs), itertools.accumulate(xs, f) "
                            "or itertools.accumulate(xs, initial=v)")
    func = positional[1].value if len(positional) == 2 else keywords.get("func")
    fv = None
    if func is not None and not (isinstance(func, cst.Name) and func.value == "None"):
        fv = n.funcs.value_of(func)
        if fv is None:
            err = n.unsupported(func, "this is not a function s2s knows",
                                "pass a function defined in a file, a lambda or an operator")
            err.per_call = True  # (a parameter: bound to the call's function)
            raise err
    items = n.comps.items_of(positional[0].value)
    if items is None:
        raise n.unsupported(positional[0].value, "itertools.accumulate is supported over "
                            "a list or tuple whose length s2s knows when it transforms "
                            "the function (a literal, a tuple argument, a comprehension it "
                            "unrolls), not over this",
                            "over an array's rows: np.cumsum(x, axis=0) (np.cumprod, "
                            "np.maximum.accumulate); over a list grown in a loop: keep "
                            "the running value in that loop (acc = acc + v; "
                            "out.append(acc))")
    initial = keywords.get("initial")
    if initial is not None and not (isinstance(initial, cst.Name) and initial.value == "None"):
        runs = [n.exprs.expr(initial)]
    else:
        runs, items = items[:1], items[1:]
    for item in items if runs else ():
        if fv is None:
            runs.append(n.calls.apply("add", [runs[-1], item], {}, node, None,
                                      "itertools.accumulate"))
        else:
            runs.append(n.funcs.call(fv, node, None, ([runs[-1], item], {})))
    out = n.emit(n.exprs.target(target, "runs"), "make_list", tuple(runs), {}, node)
    n.lists.add(out.name)
    return out
