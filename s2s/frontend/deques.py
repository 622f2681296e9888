"""``collections.deque`` built in the function, desugared to a list (issue 23)::

    buf = collections.deque(maxlen=3)         buf = []
    buf.append(v)                      ->     buf.append(v)
                                              if len(buf) > 3:
                                                  del buf[0]
    buf.appendleft(v)                  ->     buf.insert(0, v)
                                              if len(buf) > 3:
                                                  del buf[3]
    w = buf.popleft()                  ->     w = buf.pop(0)

A deque with ``maxlen`` drops an item from the other end once an append makes it
longer: the ``if`` above, which the list lowering decides where the list's length is
known (appends outside a loop, or in a loop over constants unrolled); in a loop over
an array, the sliding-window pass (windows.py) takes the ``del buf[0]`` where the
body reads the window by ``len`` and constant indexes, and anything else is refused
there, located.  ``deque(xs)`` is ``list(xs)`` (``deque(xs, maxlen=m)`` keeps its last
``m``); iteration, ``len``, indexing, ``sum``, ``pop()``, ``extend`` and ``clear``
read and edit the list as Python's deque does.  The deque used otherwise (passed to a
function, returned, bound to another name, ``rotate``, ``extendleft``, ``insert`` into
one with ``maxlen``) is refused at the user's line.
"""

from __future__ import annotations

import builtins
import collections
from typing import Any

import libcst as cst

from .block_walk import BlockWalk, NameUses
from .desugar import module_object

__all__ = ["deques"]

_SAME = {"append", "appendleft", "pop", "popleft", "extend", "clear"}
_READERS = {builtins.len, builtins.list, builtins.sorted, builtins.tuple, builtins.sum,
            builtins.min, builtins.max, builtins.enumerate, builtins.zip, builtins.reversed}
_WHY = "s2s holds a `collections.deque` built in the function as a list"


def deques(n: Any, nodes: list[Any]) -> list[Any]:
    """``nodes`` (a function's statements; ``n``: its Normalizer) with each
    ``collections.deque(...)`` bound to a name written as above."""
    made = _made(n, nodes)
    if not made:
        return nodes
    _check_uses(n, nodes, made)
    return _Rewrite(n, made).block(nodes)


def _is_deque(n: Any, node: Any) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, (cst.Name, cst.Attribute)) \
        and module_object(n, node.func) is collections.deque


def _made(n: Any, nodes: list[Any]) -> dict[str, Any]:
    """Name -> its ``maxlen`` expression (None: unbounded) for each name bound only to
    ``collections.deque(...)`` calls of one ``maxlen``."""
    calls: dict[Any, list] = {}
    others: set[str] = set()
    bound: set[int] = set()

    class Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node: Any) -> bool:
            return False

        def visit_ClassDef(self, node: Any) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> None:
            if _is_deque(n, node) and id(node) not in bound:
                calls.setdefault(id(node), [node])

        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                if isinstance(t.target, cst.Name) and len(node.targets) == 1 and _is_deque(
                        n, node.value):
                    calls.setdefault(t.target.value, []).append(node.value)
                    bound.add(id(node.value))
                elif isinstance(t.target, cst.Name):
                    others.add(t.target.value)

    for node in nodes:
        node.visit(Find())
    out: dict[str, Any] = {}
    for key, found in calls.items():
        if not isinstance(key, str) or key in others:
            raise n.unsupported(found[0], "a `collections.deque` not bound to a name of "
                                "its own (`buf = deque(maxlen=3)`): " + _WHY,
                                "bind it to a name of its own")
        sizes = {cst.Module([]).code_for_node(m) if m is not None else None
                 for m in (_parts(n, c)[1] for c in found)}
        if len(sizes) > 1:
            raise n.unsupported(found[1], f"`{key}` is bound to deques of other `maxlen`s",
                                "give each its own name")
        out[key] = _parts(n, found[0])[1]
    return out


def _parts(n: Any, call: cst.Call) -> tuple[Any, Any]:
    """``(iterable or None, maxlen or None)`` of a ``deque(...)`` call."""
    items = size = None
    for k, a in enumerate(call.args):
        name = a.keyword.value if a.keyword is not None else ("iterable", "maxlen")[min(k, 1)]
        if a.star or name not in ("iterable", "maxlen") or k > 1:
            raise n.unsupported(call, "these arguments of `collections.deque`: " + _WHY,
                                "write `deque(xs)` or `deque(xs, maxlen=m)`")
        if name == "iterable":
            items = a.value
        else:
            size = a.value
    if isinstance(size, cst.Name) and size.value == "None":
        size = None
    if isinstance(size, cst.UnaryOperation) and isinstance(size.operator, cst.Minus):
        raise n.unsupported(size, "a negative `maxlen`: Python's `deque` raises "
                            "ValueError", "give a `maxlen` of 0 or more")
    return items, size


def _check_uses(n: Any, nodes: list[Any], made: dict[str, Any]) -> None:
    """Refuse, located, a name of ``made`` used otherwise than the module's note says."""

    class Uses(NameUses):
        LOOPS = (cst.For, cst.CompFor)

        def check(self, name: cst.Name, parent: Any) -> None:
            if self.nested():
                raise n.unsupported(name, f"`{name.value}` (a `collections.deque`) read in "
                                    "a nested function or lambda: " + _WHY, "read it in "
                                    "the function itself")
            if isinstance(parent, cst.Attribute) and parent.value is name:
                method = parent.attr.value
                if method in _SAME:
                    return
                raise n.unsupported(parent, f"`{name.value}.{method}` of a "
                                    "`collections.deque`: " + _WHY + ", which does not "
                                    "have it", "use `append`, `appendleft`, `pop`, "
                                    "`popleft`, `extend`, `clear`, indexing and `len`")
            if not self.in_place(name, parent):
                raise n.unsupported(name, f"`{name.value}` (a `collections.deque`) used "
                                    "as a value here: " + _WHY + ", and another holder "
                                    "would get a list", f"pass `list({name.value})`, or "
                                    "read its items here")

        def reader(self, func: Any) -> bool:
            return _reader(n, func)

    for node in nodes:
        node.visit(Uses(made))


def _reader(n: Any, func: Any) -> bool:
    """Does ``func`` read its argument and keep no reference to it (a builtin of
    ``_READERS``, a NumPy function)?"""
    found = module_object(n, func) if isinstance(func, (cst.Name, cst.Attribute)) else None
    return found in _READERS or getattr(found, "__module__", "") in ("numpy",) or (
        type(found).__name__ == "ufunc")


class _Rewrite(BlockWalk):
    """The statements with each deque operation written on the list."""

    def __init__(self, n: Any, made: dict[str, Any]) -> None:
        super().__init__(n)
        self.made = made

    def line(self, node: cst.SimpleStatementLine) -> list[Any]:
        out = []
        for small in node.body:
            out += self._small(small, node)
        return out

    def head(self, node: Any, elif_: bool) -> tuple[list[Any], Any]:
        return [], self._popleft(node)

    def _small(self, small: Any, line: Any) -> list[Any]:
        """One small statement as lines of its own (each aliased to it)."""
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                small.targets[0].target, cst.Name) and small.targets[0].target.value in (
                self.made) and _is_deque(self.n, small.value):
            return self._made_line(small)
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and isinstance(
                small.value.func, cst.Attribute) and isinstance(
                small.value.func.value, cst.Name) and small.value.func.value.value in self.made:
            name, method = small.value.func.value.value, small.value.func.attr.value
            if method in ("append", "appendleft", "extend"):
                return self._grow(small, name, method)
        new = self._popleft(small)
        if new is small and len(line.body) == 1:
            return [line]
        out = cst.SimpleStatementLine([new])
        self.n.desugar.alias(out, line if len(line.body) == 1 else small)
        return [out]

    def _made_line(self, small: cst.Assign) -> list[Any]:
        name = small.targets[0].target.value
        items, size = _parts(self.n, small.value)
        if _display(items):  # (`deque([a, b], maxlen=2)`: appended one by one)
            empty = small.with_changes(value=cst.List([]))
            line = cst.SimpleStatementLine([empty])
            self.n.desugar.alias_tree(line, small)
            return [line] + self._appends(small, name, items)
        value = cst.List([]) if items is None else _listed(items)
        lines = [cst.SimpleStatementLine([small.with_changes(value=value)])]
        if items is not None and size is not None:
            lines.append(self._trim(name, size, f"{name} = {name}[len({name}) - SIZE:]"))
        for line in lines:
            self.n.desugar.alias_tree(line, small)
        return lines

    def _grow(self, small: Any, name: str, method: str) -> list[Any]:
        call, size = small.value, self.made[name]
        if method == "appendleft":
            if len(call.args) != 1 or call.args[0].keyword or call.args[0].star:
                raise self.n.unsupported(call, "`appendleft` takes one item", "pass one")
            call = call.with_changes(func=call.func.with_changes(attr=cst.Name("insert")),
                                     args=[cst.Arg(cst.Integer("0")), call.args[0]])
        grown = small.with_changes(value=call)
        if method == "extend" and len(call.args) == 1 and _display(call.args[0].value):
            return self._appends(small, name, call.args[0].value)
        if method == "extend":  # (`buf = buf + list(xs)`: the list's own items, then xs's)
            if len(call.args) != 1 or call.args[0].keyword or call.args[0].star:
                raise self.n.unsupported(call, "`extend` takes one iterable", "pass one")
            grown = cst.Assign([cst.AssignTarget(cst.Name(name))], cst.BinaryOperation(
                cst.Name(name), cst.Add(), _listed(call.args[0].value)))
        lines = [cst.SimpleStatementLine([grown])]
        if size is not None:
            lines.append(self._trim(name, size, {
                "append": f"del {name}[0]", "appendleft": f"del {name}[SIZE]",
                "extend": f"{name} = {name}[len({name}) - SIZE:]"}[method]))
        for line in lines:
            self.n.desugar.alias_tree(line, small)
        return lines

    def _appends(self, small: Any, name: str, items: Any) -> list[Any]:
        """``name.append(item)`` for each item of the display ``items`` (trimmed)."""
        out = []
        for e in items.elements:
            call = cst.Call(cst.Attribute(cst.Name(name), cst.Name("append")), [cst.Arg(
                e.value)])
            out += self._grow(cst.Expr(call), name, "append")
        for line in out:
            self.n.desugar.alias_tree(line, small)
        return out

    def _trim(self, name: str, size: Any, text: str) -> Any:
        stmt = cst.parse_statement(f"if len({name}) > SIZE:\n    {text}\n")
        return stmt.visit(_Put(size))

    def _popleft(self, node: Any) -> Any:
        """``buf.popleft()`` in ``node`` (not a nested block's) as ``buf.pop(0)``."""
        made, alias = self.made, self.n.desugar.alias

        class Swap(cst.CSTTransformer):
            def visit_IndentedBlock(self, b: Any) -> bool:
                return False

            def leave_Call(self, original: cst.Call, updated: cst.Call) -> Any:
                f = updated.func
                if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and (
                        f.value.value in made) and f.attr.value == "popleft" and (
                        not updated.args):
                    new = updated.with_changes(func=f.with_changes(attr=cst.Name("pop")),
                                               args=[cst.Arg(cst.Integer("0"))])
                    alias(new, original)
                    alias(new.func, original.func)
                    return new
                return updated

        found = []

        class Find(cst.CSTVisitor):
            def visit_IndentedBlock(self, b: Any) -> bool:
                return False

            def visit_Attribute(self, a: cst.Attribute) -> None:
                if isinstance(a.value, cst.Name) and a.value.value in made and (
                        a.attr.value == "popleft"):
                    found.append(a)

        node.visit(Find())
        if not found:
            return node
        new = node.visit(Swap())
        alias(new, node)
        self.n.desugar.alias_tree(new, node)  # (the nodes libcst made again: its line)
        return new


def _display(items: Any) -> bool:
    return isinstance(items, (cst.List, cst.Tuple)) and not any(
        isinstance(e, cst.StarredElement) for e in items.elements)


def _listed(items: Any) -> Any:
    """A list of ``items``' items: a display's as a list display, else ``list(items)``."""
    if isinstance(items, (cst.List, cst.Tuple)) and not any(
            isinstance(e, cst.StarredElement) for e in items.elements):
        return cst.List([e.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                         for e in items.elements])
    return cst.Call(cst.Name("list"), [cst.Arg(items)])


class _Put(cst.CSTTransformer):
    def __init__(self, size: Any) -> None:
        self.size = size

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
        return self.size.deep_clone() if original.value == "SIZE" else updated
