"""A sliding window kept in a list: a loop that appends to a list the function built
and drops its front item once it is longer than ``k``::

    parts = []                            parts = []
    for i in range(n):                    parts_start = 0
        parts.append(f(x[i]))      ->     for i in range(n):
        if len(parts) > k:                    parts.append(f(x[i]))
            del parts[0]                      if len(parts) - parts_start > k:
    return sum(parts)                             parts_start = parts_start + 1
                                          parts = parts[parts_start:]
                                          return sum(parts)

The list keeps every item appended (a list grown in a loop, which every transform
reads) and the loop counts the items dropped at its front, a Python int; after the
loop the list is what Python's is, the items from that count on (``list_edits.py``
makes such edits outside a loop, where the list's length is known each time).  In the
loop ``len(parts)`` is the window's length, ``parts[i]`` (a constant ``i >= 0``) its
``i``-th item, ``v = parts.pop(0)`` its first item, then dropped; a negative index
reads from the end, which both lists share; ``sum(parts)`` (``min``, ``max``, ``list``,
``tuple``, ``sorted``, a NumPy function: a call that reads the list when made and keeps
no reference to it) is the call of the window, ``parts[parts_start:]``.  A loop that
reads the list any other way (``parts`` passed to a function of yours, iterated),
rebinds it, or edits it elsewhere (``insert``, ``del parts[1]``) is left as it was
(refused there, located).
"""

from __future__ import annotations

import builtins
import itertools
from typing import Any

import libcst as cst

from .desugar import lower_in_place, module_object
from .source import literal_value

_EAGER = {builtins.sum, builtins.min, builtins.max, builtins.list, builtins.tuple,
          builtins.sorted}


def sliding_window(n: Any, node: cst.For) -> bool:
    """Lower the loop ``node`` as above where it keeps such a window (True), else
    leave it (False, nothing emitted)."""
    if node.orelse is not None or node.asynchronous is not None:
        return False
    for name in _front_dropped(node):
        if n.env.get(name) not in n.lists:
            continue  # (not a list this function built and still holds)
        uses = _Uses(name, lambda f: _eager_reader(n, f))
        node.body.visit(uses)
        if uses.other:
            continue
        start = n.comps.loop_name(f"{name}_start")
        body = node.body.visit(_Window(name, start, n.desugar.alias_tree, uses.whole))
        statements = [_line(f"{start} = 0"), node.with_changes(body=body),
                      _line(f"{name} = {name}[{start}:]")]
        lower_in_place(n, statements, node)
        return True
    return False


def _line(text: str) -> cst.SimpleStatementLine:
    return cst.parse_statement(text + "\n")  # type: ignore[return-value]


def _is_zero(node: Any) -> bool:
    return isinstance(node, cst.Integer) and literal_value(node.value) == 0


def _front_pop(node: Any, name: str | None = None) -> str | None:
    """The list ``parts`` of ``parts.pop(0)`` (or None)."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(
            node.func.value, cst.Name) and node.func.attr.value == "pop" and len(
            node.args) == 1 and not node.args[0].keyword and not node.args[0].star and (
            _is_zero(node.args[0].value)) and name in (None, node.func.value.value):
        return node.func.value.value
    return None


def _front_del(node: Any, name: str | None = None) -> str | None:
    """The list ``parts`` of ``del parts[0]`` (or None)."""
    if not isinstance(node, cst.Del) or not isinstance(node.target, cst.Subscript):
        return None
    sub = node.target
    if isinstance(sub.value, cst.Name) and len(sub.slice) == 1 and isinstance(
            sub.slice[0].slice, cst.Index) and _is_zero(sub.slice[0].slice.value) and (
            name in (None, sub.value.value)):
        return sub.value.value
    return None


def _front_dropped(node: cst.For) -> list[str]:
    """The names whose front item the loop drops (``del parts[0]``, ``parts.pop(0)``)."""
    found: list[str] = []

    class Find(cst.CSTVisitor):
        def visit_Del(self, d: cst.Del) -> None:
            name = _front_del(d)
            if name is not None and name not in found:
                found.append(name)

        def visit_Call(self, c: cst.Call) -> None:
            name = _front_pop(c)
            if name is not None and name not in found:
                found.append(name)

    node.body.visit(Find())
    return found


class _Uses(cst.CSTVisitor):
    """Is ``name`` read in a way the window does not lower (``other``)?"""

    def __init__(self, name: str, reader: Any) -> None:
        self.name, self.other, self.reader = name, False, reader
        self.whole: set[int] = set()  # (the ``parts`` of ``sum(parts)``, by id)

    def visit_FunctionDef(self, node: Any) -> bool:
        self.other = True  # (a nested function: its reads are its own)
        return False

    visit_Lambda = visit_FunctionDef

    def visit_Del(self, node: cst.Del) -> bool:
        if _front_del(node, self.name) is not None:
            return False
        target = node.target
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and (
                target.value.value == self.name):
            self.other = True  # (`del parts[1]`: an item of the window, not the list)
        return True

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if _front_pop(node, self.name) is not None:
            return False
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and (
                func.value.value == self.name) and func.attr.value == "append":
            for arg in node.args:
                arg.visit(self)
            return False
        if isinstance(func, cst.Name) and func.value == "len" and len(node.args) == 1 and (
                isinstance(node.args[0].value, cst.Name)) and node.args[0].value.value == (
                self.name):
            return False
        if isinstance(func, (cst.Name, cst.Attribute)) and any(
                isinstance(a.value, cst.Name) and a.value.value == self.name and not (
                    a.star or a.keyword) for a in node.args) and self.reader(func):
            for arg in node.args:
                if isinstance(arg.value, cst.Name) and arg.value.value == self.name and (
                        not arg.star and not arg.keyword):
                    self.whole.add(id(arg.value))
                else:
                    arg.visit(self)
            return False
        return True

    def visit_Subscript(self, node: cst.Subscript) -> bool:
        k = _index(node)
        if isinstance(node.value, cst.Name) and node.value.value == self.name and (
                k is not None and k >= 0):  # (from the end: past the window, Python's
            return False  # IndexError, where the whole list has an item)
        return True

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.other = True  # (read, passed, rebound or edited some other way)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False  # (`.parts` of an object is not the name)


def _index(node: cst.Subscript) -> int | None:
    """The constant index of ``parts[i]`` (a load), or None."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    value = node.slice[0].slice.value
    if isinstance(value, cst.Integer):
        return literal_value(value.value)
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) and (
            isinstance(value.expression, cst.Integer)):
        return -literal_value(value.expression.value)
    return None


class _Window(cst.CSTTransformer):
    """The loop body with the window's edits and reads spelled over the whole list."""

    def __init__(self, name: str, start: str, alias: Any, whole: set[int]) -> None:
        self.name, self.start, self.alias, self.whole = name, start, alias, whole

    def on_leave(self, original: Any, updated: Any) -> Any:
        new = super().on_leave(original, updated)
        if isinstance(new, cst.CSTNode) and new is not original:
            self.alias(new, original)  # (a line holding a read spelled anew: still the user's)
        return new

    def _made(self, text: str, old: Any, statement: bool = False) -> Any:
        new = cst.parse_statement(text + "\n").body[0] if statement else (
            cst.parse_expression(text))
        self.alias(new, old)
        return new

    def leave_Del(self, original: cst.Del, updated: cst.Del) -> Any:
        if _front_del(original, self.name) is None:
            return updated
        return self._made(f"{self.start} = {self.start} + 1", original, True)

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr) -> Any:
        if _front_pop(original.value, self.name) is None:
            return updated  # (`parts.pop(0)` as a statement: the count only)
        return self._made(f"{self.start} = {self.start} + 1", original, True)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> Any:
        if _front_pop(original.value, self.name) is None:
            return updated
        # (`v = parts.pop(0)`: the first item read, then dropped; two statements on
        # the line, each at it)
        return cst.FlattenSentinel([
            updated.with_changes(value=self._made(f"{self.name}[{self.start}]",
                                                  original.value)),
            self._made(f"{self.start} = {self.start} + 1", original, True)])

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> Any:
        func = original.func
        if isinstance(func, cst.Name) and func.value == "len" and len(original.args) == 1 \
                and isinstance(original.args[0].value, cst.Name) and (
                original.args[0].value.value == self.name):
            return self._made(f"(len({self.name}) - {self.start})", original)
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
        if id(original) in self.whole:  # (`sum(parts)`: the window's items)
            return self._made(f"{self.name}[{self.start}:]", original)
        return updated

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> Any:
        if not (isinstance(original.value, cst.Name) and original.value.value == self.name):
            return updated
        k = _index(original)
        return self._made(f"{self.name}[{self.start}{f' + {k}' if k else ''}]", original)


def _eager_reader(n: Any, func: Any) -> bool:
    """Does a call of ``func`` read a list argument when made and keep no reference to
    it (``sum``, ``min``, ``max``, ``list``, ``tuple``, ``sorted``, a NumPy function)?"""
    found = module_object(n, func)
    return found in _EAGER or type(found).__name__ == "ufunc" or (
        callable(found) and (getattr(found, "__module__", None) or "").split(".")[0] == (
            "numpy"))


def as_zip(n: Any, call: Any) -> Any:
    """``itertools.pairwise(xs)`` is ``zip(xs, xs[1:])`` (the same pairs, in order, over
    a sequence: an array's rows, a list), and ``list(zip(a, b))`` (``list(pairwise(xs))``)
    the list ``[(a_item, b_item) for a_item, b_item in zip(a, b)]``: the expression s2s
    lowers for ``call`` where it stands (the loop over ``zip`` stops at its shortest
    sequence, as Python's does), or ``call`` itself.  ``xs`` must be a name (or an
    attribute, an item): a call there would be made twice, a generator read twice."""
    if not isinstance(call, cst.Call) or len(call.args) != 1 or call.args[0].star or (
            call.args[0].keyword is not None):
        return call
    func, xs = call.func, call.args[0].value
    last = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
    if last == "pairwise" and module_object(n, func) is itertools.pairwise:
        if not isinstance(xs, (cst.Name, cst.Attribute, cst.Subscript)):
            raise n.unsupported(call, "`itertools.pairwise` of an expression: s2s reads "
                                "it as `zip(xs, xs[1:])`, which would compute it (or run "
                                "a generator) twice", "name it first (`xs = ...`, then "
                                "`itertools.pairwise(xs)`)")
        made: Any = cst.Call(cst.Name("zip"), [cst.Arg(xs), cst.Arg(cst.Subscript(
            xs, [cst.SubscriptElement(cst.Slice(cst.Integer("1"), None))]))])
    elif last == "list" and module_object(n, func) is builtins.list and isinstance(
            xs, cst.Call) and (module_object(n, xs.func) is builtins.zip or getattr(
            xs.func, "attr", xs.func).value == "pairwise"):
        inner = as_zip(n, xs)
        if not inner.args or any(a.star or a.keyword for a in inner.args):
            return call
        names = [cst.Name(n.comps.loop_name("item")) for _ in inner.args]
        made = cst.ListComp(cst.Tuple([cst.Element(v) for v in names]), cst.CompFor(
            cst.Tuple([cst.Element(v) for v in names]), inner))
    else:
        return call
    n.desugar.alias_tree(made, call)
    return made


def as_islice(n: Any, call: Any) -> Any:
    """``itertools.islice(it, stop)`` (``islice(it, start, stop[, step])``), its
    bounds non-negative int constants or None: the slice of ``it``'s items Python's
    ``islice`` gives (fewer where ``it`` has fewer), ``list(gen(x))[start:stop:step]``
    of a generator (s2s runs it as the list of its items, all of them: a generator
    that never ends stays refused), ``xs[start:stop:step]`` of a sequence; None for
    any other call."""
    if not isinstance(call, cst.Call) or module_object(n, call.func) is not itertools.islice:
        return None
    if not 2 <= len(call.args) <= 4 or any(a.star or a.keyword for a in call.args):
        raise n.unsupported(call, "`itertools.islice` with these arguments",
                            "`itertools.islice(it, stop)` or `(it, start, stop, step)`")
    bounds = [a.value for a in call.args[1:]]
    for b in bounds:
        if not (isinstance(b, cst.Integer) or isinstance(b, cst.Name) and b.value == "None"):
            raise n.unsupported(b, "`itertools.islice` of a bound that is not an int "
                                "constant: s2s reads it as a slice of the items, whose "
                                "bounds Python's `islice` checks (no negative ones)",
                                "write a non-negative int literal (or None)")
    if len(bounds) == 1:
        bounds = [cst.Name("None"), bounds[0]]
    if len(bounds) == 3 and isinstance(bounds[2], cst.Integer) and int(bounds[2].value) == 0:
        raise n.unsupported(bounds[2], "`itertools.islice` of step 0 (Python's "
                            "ValueError)", "a step of 1 or more")
    it = call.args[0].value
    if isinstance(it, cst.Call):  # (a generator's items, once: `list(gen(x))`)
        it = cst.Call(cst.Name("list"), [cst.Arg(it)])
    elif not isinstance(it, (cst.Name, cst.Attribute, cst.Subscript)):
        raise n.unsupported(call, "`itertools.islice` of this expression",
                            "name it first (`xs = ...`, then `itertools.islice(xs, k)`)")
    none = [None if isinstance(b, cst.Name) else b for b in bounds]
    made = cst.Subscript(it, [cst.SubscriptElement(cst.Slice(*none))])
    n.desugar.alias_tree(made, call)
    return made
