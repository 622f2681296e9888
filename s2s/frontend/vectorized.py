"""``np.vectorize`` and ``np.apply_along_axis`` of a Python function, desugared to a
loop over the items, stacked: what JAX's trace unrolls.

A statement calling ``np.vectorize(fn)(a)`` (or ``f(a)`` after ``f =
np.vectorize(fn)``, ``f`` only called) or ``np.apply_along_axis(fn, axis, arr)``
gets statements before it that compute the call's value as NumPy does, the call
replaced by their result::

    vectorized_in = a
    vectorized_items = np.stack([fn(v) for v in np.ravel(vectorized_in)])
    vectorized = np.reshape(vectorized_items, np.shape(vectorized_in))

    along_moved = np.moveaxis(arr, axis, -1)   # (each 1-D slice a row)
    along_items = np.stack([fn(r) for r in np.reshape(along_moved, (-1, ...))])
    along = np.moveaxis(np.reshape(along_items, ...), ...)  # fn's axes at `axis`

so every transform follows the comprehension's loop (``frontend/comprehensions.py``).
Over no items (a size-0 axis) ``np.stack`` raises NumPy's ValueError at the call, as
NumPy's ``vectorize``/``apply_along_axis`` raise one.  Other forms (keywords,
``signature=``, several arrays, a call in a comprehension or an ``if`` test) are left
as written: refused, located, as any call without a rule.
"""

from __future__ import annotations

from typing import Any

import libcst as cst
import numpy as np

from ..errors import TransformError

_STOP = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
         cst.FunctionDef, cst.ClassDef)


class Vectorized:
    """The rewrite of one function's body (``n``: its Normalizer)."""

    def __init__(self, n: Any) -> None:
        self.n = n
        self.made: dict[str, Any] = {}  # `f` of `f = np.vectorize(fn)` -> fn
        self.dropped: set[int] = set()  # (those assignments: ids of their statements)

    def body(self, nodes: list[Any]) -> list[Any]:
        self._find_made(nodes)
        out = self._block(nodes)
        if self.made and _names_in(out) & set(self.made):  # (`f` called where this pass
            self.made, self.dropped = {}, set()  # does not reach: a lambda, an `if` test;
            out = self._block(nodes)  # `f = np.vectorize(fn)` kept, refused as before)
        return out

    # ---- what the calls are -----------------------------------------------------

    def numpy_function(self, func: Any) -> tuple[str, str] | None:
        """``("vectorize", "np")`` where ``func`` is NumPy's ``vectorize`` (or
        ``apply_along_axis``) spelled ``np.vectorize``; else None."""
        if not isinstance(func, cst.Attribute) or func.attr.value not in (
                "vectorize", "apply_along_axis"):
            return None
        root = func.value
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or root.value in self.n.local_names:
            return None
        try:
            obj, _ = self.n.resolver.resolve_dotted(func.value)
        except TransformError:
            return None
        if obj is not np:
            return None
        return func.attr.value, cst.Module([]).code_for_node(func.value)

    def _plain(self, call: cst.Call, count: int) -> bool:
        return len(call.args) == count and all(
            a.keyword is None and a.star == "" for a in call.args)

    def _made_by(self, value: Any) -> Any:
        """``fn`` where ``value`` is ``np.vectorize(fn)``; else None."""
        if isinstance(value, cst.Call) and self._plain(value, 1):
            which = self.numpy_function(value.func)
            if which is not None and which[0] == "vectorize":
                return value.args[0].value, which[1]
        return None

    def _find_made(self, nodes: list[Any]) -> None:
        """``f = np.vectorize(fn)`` bound once, ``f`` read only as called."""
        bound: dict[str, list] = {}
        uses: dict[str, list[bool]] = {}

        class Walk(cst.CSTVisitor):
            def visit_Assign(inner, node: cst.Assign) -> None:  # noqa: N805
                for t in node.targets:
                    if isinstance(t.target, cst.Name):
                        bound.setdefault(t.target.value, []).append(node)

            def visit_Call(inner, node: cst.Call) -> None:  # noqa: N805
                if isinstance(node.func, cst.Name):
                    uses.setdefault(node.func.value, []).append(True)

            def visit_Name(inner, node: cst.Name) -> None:  # noqa: N805
                uses.setdefault(node.value, []).append(False)

        for node in nodes:
            node.visit(Walk())
        for name, assigns in bound.items():
            if len(assigns) != 1 or len(assigns[0].targets) != 1:
                continue
            made = self._made_by(assigns[0].value)
            calls = uses.get(name, [])
            # (each call counts once as a call and once as a name; the target once)
            if made is not None and calls.count(True) * 2 + 1 == len(calls):
                self.made[name] = made
                self.dropped.add(id(assigns[0]))

    # ---- the rewrite -----------------------------------------------------------------

    def _block(self, nodes: list[Any]) -> list[Any]:
        out: list[Any] = []
        for node in nodes:
            if isinstance(node, cst.SimpleStatementLine):
                out += self._line(node)
            elif isinstance(node, (cst.If, cst.For, cst.While, cst.With, cst.Try)) and \
                    self._holds_one(node):
                out.append(self._compound(node))
            else:
                out.append(node)
        return out

    def _holds_one(self, node: Any) -> bool:
        """Does ``node`` hold a call this pass rewrites (or drops)?"""
        v, found = self, []

        class Find(cst.CSTVisitor):
            def visit_Call(inner, call: cst.Call) -> None:  # noqa: N805
                if v.spelled(call) is not None:
                    found.append(call)

            def visit_Assign(inner, a: cst.Assign) -> None:  # noqa: N805
                if id(a) in v.dropped:
                    found.append(a)

        node.visit(Find())
        return bool(found)

    def _compound(self, node: Any) -> Any:
        self_ = self

        class Blocks(cst.CSTTransformer):
            def visit_FunctionDef(inner, n: Any) -> bool:  # noqa: N805
                return False

            def visit_ClassDef(inner, n: Any) -> bool:  # noqa: N805
                return False

            def leave_IndentedBlock(inner, o: Any, u: Any) -> Any:  # noqa: N805
                body = self_._block(list(u.body)) or [cst.SimpleStatementLine([cst.Pass()])]
                return u.with_changes(body=body)

        new = node.visit(Blocks())
        if new is not node:
            self.n.desugar.alias(new, node)
        return new

    def _line(self, line: cst.SimpleStatementLine) -> list[Any]:
        small = [s for s in line.body if id(s) not in self.dropped]
        if not small:
            return []
        hoisted: list[Any] = []
        calls = _Calls(self, hoisted)
        new_small = [s.visit(calls) for s in small]
        if not hoisted and len(small) == len(line.body):
            return [line]
        new = line.with_changes(body=new_small)
        self.n.desugar.alias(new, line)
        return hoisted + [new]

    def spelled(self, call: cst.Call) -> tuple[str, list[Any]] | None:
        """``(kind, operands)`` of a call this pass rewrites, else None."""
        func = call.func
        if isinstance(func, cst.Name) and func.value in self.made and self._plain(call, 1):
            fn, np_text = self.made[func.value]
            return "vectorize", [np_text, fn, call.args[0].value]
        if isinstance(func, cst.Call) and self._plain(call, 1):
            made = self._made_by(func)
            if made is not None:
                return "vectorize", [made[1], made[0], call.args[0].value]
        if self._plain(call, 3):
            which = self.numpy_function(func)
            if which is not None and which[0] == "apply_along_axis":
                return "along", [which[1]] + [a.value for a in call.args]
        return None

    def statements(self, kind: str, operands: list[Any], old: cst.Call,
                   hoisted: list[Any]) -> cst.Name:
        """The statements computing the call's value (appended to ``hoisted``), and
        the name of that value."""
        fresh = self.n.names.fresh
        np_text = operands[0]
        if kind == "vectorize":
            fn, arg = operands[1:]
            a, items, out, v = (fresh("vectorized_in"), fresh("vectorized_items"),
                                fresh("vectorized"), fresh("v"))
            texts = [f"{a} = ARG",
                     f"{items} = {np_text}.stack([FN({v}) for {v} in {np_text}.ravel({a})])",
                     f"{out} = {np_text}.reshape({items}, {np_text}.shape({a}))"]
            table = {"ARG": arg, "FN": fn}
        else:
            fn, axis, arr = operands[1:]
            m, items, ax, out, r = (fresh("along_moved"), fresh("along_items"),
                                    fresh("along_axis"), fresh("along"), fresh("row"))
            texts = [f"{ax} = AXIS",
                     f"{m} = {np_text}.moveaxis(ARR, {ax}, -1)",
                     f"{items} = {np_text}.stack([FN({r}) for {r} in {np_text}.reshape("
                     f"{m}, (-1, {np_text}.shape({m})[-1]))])",
                     f"{out} = {np_text}.moveaxis({np_text}.reshape({items}, {np_text}.shape("
                     f"{m})[:-1] + {np_text}.shape({items})[1:]), tuple(range({np_text}.ndim("
                     f"{m}) - 1, {np_text}.ndim({m}) + {np_text}.ndim({items}) - 2)), tuple("
                     f"range({ax} % {np_text}.ndim({m}), {ax} % {np_text}.ndim({m}) + "
                     f"{np_text}.ndim({items}) - 1)))"]
            table = {"AXIS": axis, "ARR": arr, "FN": fn}
        self.n.local_names.update(t.split(" = ")[0] for t in texts)
        for text in texts:
            stmt = cst.parse_statement(text).visit(_Put(table))
            self.n.desugar.alias_tree(stmt, old)
            hoisted.append(stmt)
        return cst.Name(out)


class _Calls(cst.CSTTransformer):
    """The calls of one statement this pass rewrites, innermost first; none inside a
    lambda, a comprehension or a nested ``def`` (their variables are theirs)."""

    def __init__(self, v: Vectorized, hoisted: list[Any]) -> None:
        self.v, self.hoisted = v, hoisted

    def on_visit(self, node: Any) -> bool:
        return not isinstance(node, _STOP) and super().on_visit(node)

    def on_leave(self, original: Any, updated: Any) -> Any:
        out = super().on_leave(original, updated)
        if out is not original and isinstance(out, cst.CSTNode):
            self.v.n.desugar.alias(out, original)  # (a changed node keeps its position)
        return out

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> Any:
        spelled = self.v.spelled(updated)
        if spelled is None:
            return updated
        name = self.v.statements(*spelled, original, self.hoisted)
        self.v.n.desugar.alias(name, original)
        return name


class _Put(cst.CSTTransformer):
    """The placeholders ``FN``, ``ARG``... replaced by the user's expressions."""

    def __init__(self, table: dict[str, Any]) -> None:
        self.table = table

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
        new = self.table.get(original.value)
        if new is None:
            return updated
        return new if isinstance(new, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) \
            else new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) \
            if hasattr(new, "lpar") else new


def _names_in(nodes: list[Any]) -> set[str]:
    found: set[str] = set()

    class Find(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

    for node in nodes:
        node.visit(Find())
    return found
