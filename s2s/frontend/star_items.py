"""``h(*xs)`` where the length of ``xs`` is known only per call (a tuple or list
argument, a list the function grew): spread into a user function whose remaining
positional parameters have no defaults, the call can only mean ``h(xs[0], ...,
xs[n - 1])`` for those ``n`` parameters, and Python raises ``TypeError`` at any other
length.  So it is lowered as those reads, after a kept check that raises Python's
error where the call's ``xs`` has another length (``if len(xs) != 2: raise
TypeError(...)``, run with the real value in the forward computation).

With defaults left to fill, or a ``*args`` parameter, the length decides which
parameters the items bind: the transform is then made per call's length of ``xs``
(``api/callables.py`` binds it, ``synthesize.SeqLength``), and the spread is the reads
``xs[0], ..., xs[n - 1]`` of that length (``spread_items``), which bind the callee's
parameters as Python binds them (defaults filled, ``*args`` collecting the rest).
"""

from __future__ import annotations

import inspect
import types
from typing import Any

import libcst as cst

from .resolve import unwrap_forwarding

__all__ = ["spread_items", "star_count", "star_items"]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def star_count(fv: Any, node: cst.Call) -> tuple[int, str] | None:
    """How many items the one ``*name`` of the call ``node`` of the function value
    ``fv`` must hold, and the function's name; None where its signature does not
    decide it (a choice of functions, defaults left to fill, ``*args``)."""
    if fv.choice is not None:
        return None
    count = _count(unwrap_forwarding(fv.obj), len(fv.head), node)
    return None if count is None else (count, fv.text)


def _count(obj: Any, head: int, node: cst.Call) -> int | None:
    """``star_count`` for the function ``obj`` (``head`` positional values bound before
    the call's own: a partial's)."""
    stars = [a for a in node.args if a.star == "*"]
    if len(stars) != 1:
        return None
    if not isinstance(obj, types.FunctionType) or any(a.star == "**" for a in node.args):
        return None
    position = node.args.index(stars[0])
    if any(not a.keyword and not a.star for a in node.args[position + 1:]):
        return None  # (items after the spread: `h(*xs, y)`)
    params = inspect.signature(obj).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return None
    positional = [p for p in params if p.kind in _POSITIONAL]
    before = head + sum(1 for a in node.args[:position] if not a.keyword)
    named = {a.keyword.value for a in node.args if a.keyword is not None}
    rest = positional[before:]
    while rest and rest[-1].name in named:  # (`h(x0, *xs, d=x3)`: d by its name)
        rest = rest[:-1]
    if any(p.name in named for p in rest) or any(
            p.default is not inspect.Parameter.empty for p in rest):
        return None
    return len(rest)


def star_items(n: Any, arg: cst.Arg, count: int, callee: str, atom: Any) -> list[Any]:
    """The items of ``*xs`` for a call that takes ``count`` of them: the kept length
    check, then ``xs[0]``, ..., ``xs[count - 1]`` read as the user's subscripts.  An
    expression spread (``*np.sin(x)``, ``*x[1:3]``; ``atom``, its value computed once)
    is read through a name of its own."""
    name = arg.value
    if not isinstance(name, cst.Name):
        text = cst.Module([]).code_for_node(name)
        name = cst.Name(f"__s2s_star_{atom.name}")
        n.env[name.value] = atom.name
        n.local_names.add(name.value)
    else:
        text = name.value
    test = cst.Comparison(
        cst.Call(cst.Name("len"), [cst.Arg(name)]),
        [cst.ComparisonTarget(cst.NotEqual(), cst.Integer(str(count)))])
    words = "no positional argument" if count == 0 else (
        "1 positional argument" if count == 1 else f"{count} positional arguments")
    at = n.loc(arg)
    message = (f"{callee}() takes {words} from `*{text}`, and this call's "
               f"`{text}` holds another number of items (Python's TypeError)\n"
               f'  File "{at.file}", line {at.line}, column {at.col}\n    {at.text.strip()}\n'
               f"  Instead: pass a `{text}` of {count} items, or each argument by name")
    error = cst.Raise(cst.Call(cst.Name("TypeError"), [cst.Arg(cst.SimpleString(
        repr(message)))]))
    for new in (test, error):
        n.desugar.alias_tree(new, arg)
    n.stmts.kept.keep(arg, [test], "check", "if {0}:", body=error)
    items = []
    for i in range(count):
        read = cst.Subscript(name, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))])
        n.desugar.alias_tree(read, arg)
        items.append(n.exprs.expr(read))
    return items


def spread_items(n: Any, arg: cst.Arg, count: int) -> list[Any]:
    """``*xs`` of a parameter whose length this call gives (``count``): the reads
    ``xs[0]``, ..., ``xs[count - 1]``, located at the spread."""
    items = []
    for i in range(count):
        read = cst.Subscript(arg.value, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))])
        n.desugar.alias_tree(read, arg)
        items.append(n.exprs.expr(read))
    return items
