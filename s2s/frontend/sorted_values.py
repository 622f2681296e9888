"""``sorted(...)`` of values known only when the code runs, as the lines Python's sort
amounts to (iterations.py runs this)::

    s = sorted(gen(x))          ->      sorted_items = list(gen(x))
                                        order = np.argsort(np.stack(sorted_items), kind="stable")
                                        s = [sorted_items[k] for k in order]

so the consumer reads a list of the same items in Python's order: a stable sort, as
Python's (ties keep their order; the derivative of each item goes to where it came
from).  For a generator function's call or a comprehension of scalars, without ``key=`` or
``reverse=`` (a list display of values stays refused, "it sorts in Python"); where the items are not scalars (Python
compares arrays, and raises for more than one element) ``np.stack`` makes a matrix
whose rows ``order`` holds, and the read of ``sorted_items`` by a row raises.  NaN sorts
last (NumPy's order; Python's comparisons with NaN are all false, so its order there
depends on where the NaN stands).  Over constants ``sorted`` is computed when the code
is generated (static.py); over a dict, its keys (loops.py)."""

from __future__ import annotations

import inspect
from typing import Any

import libcst as cst

from .static import NOVALUE

__all__ = ["hoist_sorted"]

_STOP = (cst.Lambda, cst.FunctionDef, cst.ClassDef)
_COMPS = (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)


def evaluated_part(node: Any) -> Any:
    """What ``node`` evaluates before its body: a simple line, a ``for``'s iterable,
    an ``if``'s test (None for any other statement)."""
    if isinstance(node, cst.SimpleStatementLine):
        return node
    if isinstance(node, cst.For):
        return node.iter
    if isinstance(node, cst.If):
        return node.test
    return None


def hoist_sorted(iters: Any, node: Any) -> list[Any]:
    """``node`` (a simple line, a ``for``, an ``if``) with each such ``sorted(...)`` it
    evaluates first made the lines above, and those lines before it."""
    part = evaluated_part(node)
    if part is None:
        return [node]
    hoisted: list[Any] = []
    new = part.visit(_Sorted(iters, hoisted))
    if not hoisted:
        return [node]
    if isinstance(node, cst.For):
        new = node.with_changes(iter=new)
    elif isinstance(node, cst.If):
        new = node.with_changes(test=new)
    iters.n.desugar.alias(new, node)
    return hoisted + [new]


def _sorts_values(iters: Any, call: cst.Call) -> bool:
    if iters.builtin(call.func) is not sorted or len(call.args) != 1 or (
            call.args[0].keyword or call.args[0].star):
        return False
    arg = call.args[0].value
    if isinstance(arg, (cst.ListComp, cst.GeneratorExp)):
        return iters.n.comps.static.static_value(arg) is NOVALUE
    if isinstance(arg, cst.Call):
        fn = iters.builtin(arg.func)
        return inspect.isgeneratorfunction(fn)
    return False


class _Sorted(cst.CSTTransformer):
    """The ``sorted(...)`` calls Python evaluates first in a statement: none in a
    lambda, nor in a comprehension but its first iterable (its own scope)."""

    def __init__(self, iters: Any, hoisted: list[Any]) -> None:
        self.iters, self.hoisted = iters, hoisted
        self.here = [True]  # (is the node being visited evaluated by the statement?)
        self.first: set[int] = set()  # comprehensions' first iterables

    def on_visit(self, node: Any) -> bool:
        if isinstance(node, _STOP):
            return False
        if isinstance(node, _COMPS):  # (only its first `for`'s iterable runs here)
            self.first.add(id(node.for_in.iter))
            self.here.append(False)
        elif id(node) in self.first:
            self.here.append(True)
        return super().on_visit(node)

    def on_leave(self, original: Any, updated: Any) -> Any:
        if isinstance(original, _COMPS) or id(original) in self.first:
            self.here.pop()
        out = super().on_leave(original, updated)
        if out is not original and isinstance(out, cst.CSTNode):
            self.iters.n.desugar.alias(out, original)
        return out

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> Any:
        if not self.here[-1] or not _sorts_values(self.iters, original):
            return updated
        iters = self.iters
        items, order, k, out = (iters.fresh("sorted_items"), iters.fresh("order"),
                                iters.fresh("k"), iters.fresh("sorted_values"))
        arg = updated.args[0].value
        if isinstance(arg, cst.GeneratorExp):  # (its items as a list, as `list` makes)
            arg = cst.ListComp(arg.elt, arg.for_in)
        texts = [f"{items} = ARG" if isinstance(arg, cst.ListComp) else f"{items} = list(ARG)",
                 f'{order} = np.argsort(np.stack({items}), kind="stable")',
                 f"{out} = [{items}[{k}] for {k} in {order}]"]
        for text in texts:
            self.hoisted.append(iters.stmt(text, {"ARG": arg}, original))
        iters.n.resolver.bind_namespace("np", original)
        name = cst.Name(out)
        iters.n.desugar.alias(name, original)
        return name
