"""``:=`` outside a test Python may skip, moved onto lines of its own (iterations.py
runs these)::

    if (n := len(hs)) > 2:              n = len(hs)
                                ->      if n > 2:

    hs = [(h := f(h, v)) for v in xs]   hs = []
                                ->      for v_1 in xs:
                                            h = f(h, v_1)
                                            hs.append(h)

    while (n := n - 1) >= 0:            n = n - 1
        body                    ->      while n >= 0:
                                            body
                                            n = n - 1

(a ``while`` whose body has a ``continue`` of its own is left as it was: the ``:=``
must run before each test).

A ``:=`` under ``and``/``or``/``x if c else y``, a lambda or a comprehension's ``if``,
one inside another's value, or a statement reading the name outside the ``:=`` is
left as it was (refused, located: "`:=` is not supported")."""

from __future__ import annotations

from typing import Any

import libcst as cst

from .comprehensions import substitute
from .targets import target_names

__all__ = ["hoisted", "scan", "while_loop"]


def hoisted(iters: Any, stmt: Any, expr: Any, rebuild: Any) -> list[Any]:
    """``stmt`` with each ``name := value`` of ``expr`` that Python evaluates
    first and unconditionally bound on a line before it."""
    walruses = _walruses(expr)
    if not walruses:
        return [stmt]
    targets = {w.target.value for w in walruses if isinstance(w.target, cst.Name)}
    if len(targets) != len(walruses) or _reads(expr, targets, walruses) or any(
            _walruses(w.value) for w in walruses):
        return [stmt]
    before = [iters.assign(w.target, w.value, w) for w in walruses]
    new = rebuild(expr.visit(_Replace({id(w): w.target for w in walruses},
                                      iters.n.desugar.alias)))
    iters.n.desugar.alias(new, stmt)
    return before + [new]

def while_loop(iters: Any, loop: cst.While) -> list[Any]:
    """``while (n := n - 1) >= 0: body``: the ``:=`` bound before the loop and again
    at the end of its body (Python evaluates the test before each pass)."""
    new = hoisted(iters, loop, loop.test, lambda test: loop.with_changes(test=test))
    if len(new) == 1 or _continues(loop.body):
        return [loop]
    *before, head = new
    again = hoisted(iters, loop, loop.test, lambda test: test)[:-1]
    body = head.body.with_changes(body=[*head.body.body, *again])
    iters.n.desugar.alias(body, loop.body)
    out = head.with_changes(body=body)
    iters.n.desugar.alias(out, loop)
    return [*before, out]


def _continues(body: Any) -> bool:
    """A ``continue`` of the loop itself (not a nested loop's or function's)."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Continue(self, n: cst.Continue) -> None:
            found.append(n)

        def on_visit(self, n: Any) -> bool:
            return not isinstance(n, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef,
                                      cst.Lambda)) and super().on_visit(n)

    body.visit(Finder())
    return bool(found)


def scan(iters: Any, line: Any, name: cst.Name, comp: cst.ListComp) -> list[Any] | None:
    """``hs = [(h := f(h, v)) for v in xs if c]``: the loop it is, appending to
    ``hs`` (the comprehension's own names renamed: they are not the function's)."""
    walruses = _walruses(comp.elt)
    if not walruses or any(_walruses(i.test) for c in _clauses(comp.for_in)
                           for i in c.ifs) or any(
            c.asynchronous is not None for c in _clauses(comp.for_in)):
        return None
    table: dict[str, Any] = {}
    clauses = []
    for clause in _clauses(comp.for_in):
        own = [v for v in target_names(clause.target)]
        if own is None:
            return None
        iterable = substitute(clause.iter, dict(table), iters.n.desugar.alias)
        table.update({v: cst.Name(iters.fresh(v)) for v in own})
        clauses.append((substitute(clause.target, table, iters.n.desugar.alias), iterable,
                        [substitute(c.test, dict(table), iters.n.desugar.alias)
                         for c in clause.ifs]))
    elt = substitute(comp.elt, table, iters.n.desugar.alias)
    append = iters.stmt(f"{name.value}.append(ITEM)", {"ITEM": elt}, comp.elt)
    body = [s for s in hoisted(iters, append, append.body[0].value.args[0].value,
                                      lambda new: iters.stmt(
                                          f"{name.value}.append(ITEM)", {"ITEM": new},
                                          comp.elt))]
    if len(body) == 1:  # (a `:=` Python may not evaluate: left as it was)
        return None
    for target, iterable, tests in reversed(clauses):
        for test in reversed(tests):
            branch = cst.If(test, cst.IndentedBlock(body))
            iters.n.desugar.alias_tree(branch, test)
            body = [branch]
        loop = cst.For(target, iterable, cst.IndentedBlock(body))
        iters.n.desugar.alias_tree(loop, comp)
        body = [loop]
    empty = iters.assign(name, cst.List([]), line)
    return [empty] + body


def _clauses(for_in: Any) -> list[Any]:
    out = []
    while for_in is not None:
        out.append(for_in)
        for_in = for_in.inner_for_in
    return out



def _walruses(expr: Any) -> list[cst.NamedExpr]:
    """The ``:=`` of ``expr`` Python surely evaluates, in order (none under ``and``,
    ``or``, ``x if c else y``, a lambda or a comprehension: those may not run, or run
    in a scope of their own); None of any is under one."""
    found: list[Any] = []

    class Find(cst.CSTVisitor):
        def visit_NamedExpr(self, n: cst.NamedExpr) -> bool:
            found.append(n)
            return True  # (one in its value: refused by the caller)

        def on_visit(self, n: Any) -> bool:
            if isinstance(n, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.ListComp,
                              cst.GeneratorExp, cst.DictComp, cst.SetComp)):
                inner: list[Any] = []

                class Any_(cst.CSTVisitor):
                    def visit_NamedExpr(self, m: cst.NamedExpr) -> None:
                        inner.append(m)

                n.visit(Any_())
                if inner:
                    found.append(None)
                return False
            return super().on_visit(n)

    expr.visit(Find())
    return [] if None in found else found


def _reads(expr: Any, names: set[str], walruses: list[Any]) -> bool:
    """Does ``expr`` read one of ``names`` outside the ``:=`` (where a line before
    would change what that read sees; a read in a ``:=``'s value is in order)?"""
    found = []
    skip = {id(w) for w in walruses}

    class Find(cst.CSTVisitor):
        def visit_NamedExpr(self, n: cst.NamedExpr) -> bool:
            return id(n) not in skip

        def visit_Name(self, n: cst.Name) -> None:
            if n.value in names:
                found.append(n)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

    expr.visit(Find())
    return bool(found)


class _Replace(cst.CSTTransformer):
    """Each ``:=`` (by id) replaced by its name."""

    def __init__(self, table: dict[int, Any], alias: Any) -> None:
        self.table, self.alias = table, alias

    def leave_NamedExpr(self, original: Any, updated: Any) -> Any:
        name = self.table.get(id(original))
        if name is None:
            return updated
        new = cst.Name(name.value)
        self.alias(new, original)
        return new

    def leave_ParenthesizedWhitespace(self, original: Any, updated: Any) -> Any:
        return updated

    def on_leave(self, original: Any, updated: Any) -> Any:
        out = super().on_leave(original, updated)
        if out is not original and isinstance(out, cst.CSTNode):
            self.alias(out, original)
        return out
