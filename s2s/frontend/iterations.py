"""Iteration idioms desugared to the loops every transform reads (issue 23).

Before a function's body is lowered, each of these becomes plain loops and
assignments that report the user's position::

    for i, (a, (b, c)) in enumerate(zip(xs, zip(ys, zs))):   # nested zips: one zip
    ->  for i, (a, b, c) in enumerate(zip(xs, ys, zs)):

    for i, j in itertools.combinations(range(n), 2):          # nested ranges
    ->  for i in range(n):
            for j in range(i + 1, n):

    for a, b in itertools.product(xs, ys):                    # nested loops
    ->  for a in xs:
            for b in ys:

    for v in itertools.chain(xs, ys):                         # one loop per part
    ->  for v in xs: ...
        for v in ys: ...

    for v in itertools.chain.from_iterable(groups):           # a loop in a loop
    ->  for group in groups:
            for v in group: ...

    hs = [(h := f(h, v)) for v in xs]                         # `:=`: walrus.py

    functools.reduce(np.matmul, [m, *mats, m.T])              # a spread sequence
    ->  functools.reduce(np.matmul, [m] + list(mats) + [m.T])

Python evaluates ``product``'s and ``combinations``' arguments once; the nested
loops read them again per outer item, so an argument that is not a name, a literal
or arithmetic of those (with ``range``/``len``) is first bound to a name of its own.
A loop that leaves early (``break``), has an ``else``, or binds its own targets
again is left as it was (refused where it was), as are the forms not shown here.
A list display spreads this way a parameter the body does not bind again or a
module's tuple or list that is not all ints; a shape (``[n, *x.shape]``, ``[*dims, 3]``
of ints) keeps the shape path (calls.py's ``python_expression``).
"""

from __future__ import annotations

import builtins
import itertools
from typing import Any

import libcst as cst

from ..errors import TransformError
from .closure_cells import closure_states
from .default_dicts import default_dicts
from .deques import deques
from .desugar import module_object
from .dict_appends import split_dict_lists
from .dicts import assigned_names
from .kept_zips import kept_zips
from .sorted_values import evaluated_part, hoist_sorted
from .vectorized import Vectorized
from .walrus import hoisted, scan, while_loop

_STOP = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_PURE_CALLS = (builtins.range, builtins.len)
_ITERTOOLS = {itertools.combinations: "combinations", itertools.product: "product",
              itertools.chain: "chain"}
_FROM_ITERABLE = itertools.chain.from_iterable


def desugared_body(n: Any, nodes: list[Any]) -> list[Any]:
    """A function's statements after the pre-passes that need its Normalizer ``n``:
    ``collections.defaultdict`` and ``deque`` (default_dicts.py, deques.py), closures with ``nonlocal`` state made in the call (closure_cells.py),
    ``np.vectorize`` (vectorized.py), then the iteration idioms."""
    nodes = deques(n, default_dicts(n, nodes))  # (`collections.defaultdict`, `deque`)
    nodes = split_dict_lists(n, closure_states(n, nodes))  # (`d["loss"].append(v)`)
    return Iterations(n).body(Vectorized(n).body(nodes))


class Iterations:
    """The rewrite of one function's body (``n``: its Normalizer)."""

    def __init__(self, n: Any) -> None:
        self.n = n
        self.rebound: set[str] | None = None  # the names the body binds

    def body(self, nodes: list[Any]) -> list[Any]:
        return self._block(nodes)

    # ---- blocks -------------------------------------------------------------------------

    def _block(self, nodes: list[Any]) -> list[Any]:
        out: list[Any] = []
        for node in kept_zips(self, nodes):  # (`pairs = zip(x, y)`, then `for .. in pairs`)
            if isinstance(node, (cst.If, cst.For, cst.While, cst.With, cst.Try)):
                node = self._inner(node)
            node = self._spread(node)
            if isinstance(node, (cst.SimpleStatementLine, cst.For, cst.If)):
                *before, node = hoist_sorted(self, node)  # (`sorted(gen(x))`)
                out += before
            if isinstance(node, cst.For):
                out += self._for(node)
            elif isinstance(node, cst.If):
                out += hoisted(self, node, node.test, lambda new: node.with_changes(test=new))
            elif isinstance(node, cst.While):
                out += while_loop(self, node)
            elif isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
                out += self._line(node)
            else:
                out.append(node)
        return out

    def _inner(self, node: Any) -> Any:
        """``node`` with the blocks inside it rewritten (not a nested ``def``'s); the
        node itself where nothing inside changed (it keeps its position)."""
        changes: dict[str, Any] = {}
        for field in ("body", "orelse", "finalbody"):
            part = getattr(node, field, None)
            if isinstance(part, cst.IndentedBlock):
                new = self._indented(part)
            elif isinstance(part, (cst.Else, cst.Finally)):
                new = self._indented(part.body)
                new = part if new is part.body else part.with_changes(body=new)
            elif isinstance(part, cst.If):  # (an `elif`)
                new = self._inner(part)
            else:
                continue
            if new is not part:
                changes[field] = new
        handlers = getattr(node, "handlers", ())
        new_handlers = [h if self._indented(h.body) is h.body else h.with_changes(
            body=self._indented(h.body)) for h in handlers]
        if any(a is not b for a, b in zip(new_handlers, handlers)):
            changes["handlers"] = new_handlers
        if not changes:
            return node
        new = node.with_changes(**changes)
        self.n.desugar.alias(new, node)
        return new

    def _indented(self, block: Any) -> Any:
        if not isinstance(block, cst.IndentedBlock):
            return block
        body = self._block(list(block.body))
        if len(body) == len(block.body) and all(a is b for a, b in zip(body, block.body)):
            return block
        new = block.with_changes(body=body)
        self.n.desugar.alias(new, block)
        return new

    # ---- names and purity ---------------------------------------------------------------

    def fresh(self, base: str) -> str:
        name = self.n.names.fresh(base)
        self.n.local_names.add(name)
        return name

    def builtin(self, func: Any) -> Any:
        """The object a called module-level name denotes (``zip``, ``itertools.product``),
        or None (a local, or a name s2s does not resolve)."""
        return module_object(self.n, func)

    def pure(self, node: Any) -> bool:
        """Is ``node`` cheap to read again with the same value (names, literals,
        arithmetic, subscripts, ``range``/``len`` of those)?"""
        ok = [True]
        iters = self

        class Check(cst.CSTVisitor):
            def visit_Call(self, c: cst.Call) -> None:
                if iters.builtin(c.func) not in _PURE_CALLS:
                    ok[0] = False

            def on_visit(self, n: Any) -> bool:
                if isinstance(n, (cst.NamedExpr, cst.Yield, cst.Await, cst.Lambda,
                                  cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp)):
                    ok[0] = False
                return ok[0] and super().on_visit(n)

        node.visit(Check())
        return ok[0]

    def stmt(self, text: str, table: dict[str, Any], old: Any) -> Any:
        """A statement parsed from ``text`` with the placeholders of ``table`` put in."""
        stmt = cst.parse_statement(text).visit(_Put(table))
        self.n.desugar.alias_tree(stmt, old)
        return stmt

    def assign(self, target: Any, value: Any, old: Any) -> Any:
        stmt = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], value)])
        self.n.desugar.alias_tree(stmt, old)
        return stmt

    def _loop(self, target: Any, iterable: Any, body: list[Any], old: cst.For) -> cst.For:
        loop = old.with_changes(target=target, iter=iterable,
                                body=old.body.with_changes(body=body), orelse=None)
        self.n.desugar.alias(loop, old)
        self.n.desugar.alias(loop.body, old.body)
        return loop

    # ---- for loops ----------------------------------------------------------------------

    def _for(self, node: cst.For) -> list[Any]:
        if node.orelse is not None or node.asynchronous is not None:
            return [node]
        flat = self._flat_zip(node)
        if flat is not None:
            return [flat]
        call = node.iter
        kind = _ITERTOOLS.get(self.builtin(call.func)) if isinstance(call, cst.Call) else None
        if isinstance(call, cst.Call) and self.builtin(call.func) == _FROM_ITERABLE:
            kind = "from_iterable"  # (a bound classmethod: equal, not the same object)
        if kind is None or any(a.star or a.keyword for a in call.args) or _breaks(node.body):
            return [node]
        return getattr(self, f"_{kind}")(node, [a.value for a in call.args])

    def _flat_zip(self, node: cst.For) -> cst.For | None:
        """``zip(a, zip(b, c))`` walked as ``x, (y, z)``: ``zip(a, b, c)`` as ``x, y, z``
        (also inside ``enumerate``); a name for the inner pair gets it rebuilt
        (``p = (y, z)``) first in the body."""
        call, target = node.iter, node.target
        prefix: list[Any] = []
        if self._is(call, builtins.enumerate) and len(call.args) >= 1 and isinstance(
                target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
            inner = call.args[0].value
            flat = self._zip_parts(target.elements[1].value, inner, prefix, node)
            if flat is None:
                return None
            new_target = target.with_changes(elements=[
                target.elements[0], target.elements[1].with_changes(value=flat[0])])
            new_iter = call.with_changes(args=[call.args[0].with_changes(value=flat[1]),
                                               *call.args[1:]])
        else:
            flat = self._zip_parts(target, call, prefix, node)
            if flat is None:
                return None
            new_target, new_iter = flat
        self.n.desugar.alias_tree(new_iter, call)
        return self._loop(new_target, new_iter, prefix + list(node.body.body), node)

    def _is(self, node: Any, fn: Any) -> bool:
        return isinstance(node, cst.Call) and self.builtin(node.func) is fn and not any(
            a.star or a.keyword for a in node.args)

    def _zip_parts(self, target: Any, call: Any, prefix: list, node: Any,
                   top: bool = True) -> Any:
        """``(target, zip call)`` flattened, or None where no inner zip is unpacked."""
        if not self._is(call, builtins.zip) or not isinstance(
                target, (cst.Tuple, cst.List)) or len(target.elements) != len(call.args) or \
                any(isinstance(e, cst.StarredElement) for e in target.elements):
            return None
        names, args, changed = [], [], False
        for element, arg in zip(target.elements, call.args):
            inner = arg.value
            if not self._is(inner, builtins.zip):
                names.append(element)
                args.append(arg)
                continue
            flat = self._zip_parts(element.value, inner, prefix, node, False)
            if flat is None and isinstance(element.value, cst.Name):
                fresh = [cst.Name(self.fresh(f"{element.value.value}_{k}"))
                         for k in range(len(inner.args))]
                prefix.insert(0, self.assign(element.value, cst.Tuple(
                    [cst.Element(f) for f in fresh]), node.target))
                flat = (cst.Tuple([cst.Element(f) for f in fresh]), inner)
            if flat is None:
                return None
            names += flat[0].elements
            args += flat[1].args
            changed = True
        if not changed and top:
            return None
        elements = [e.with_changes(comma=cst.MaybeSentinel.DEFAULT) for e in names]
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
        return target.with_changes(elements=elements), call.with_changes(args=args)

    def _targets(self, node: cst.For, count: int) -> tuple[list[Any], list[Any]] | None:
        """The loop targets of ``count`` nested loops for ``node``'s target (``i, j``),
        and the statements that bind the user's names first in the body where the
        loops cannot bind them themselves (a single name for the tuple; names the body
        binds again)."""
        target = node.target
        again = assigned_names(node.body)
        if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == count and \
                not any(isinstance(e, cst.StarredElement) for e in target.elements):
            parts = [e.value for e in target.elements]
            if not any(isinstance(p, cst.Name) and p.value in again for p in parts) and \
                    not (assigned_names(target) & again):
                return parts, []
        if isinstance(target, cst.Name) or isinstance(target, (cst.Tuple, cst.List)) and (
                len(target.elements) == count):
            fresh = [cst.Name(self.fresh(f"item_{k}")) for k in range(count)]
            return fresh, [self.assign(target, cst.Tuple([cst.Element(f) for f in fresh]),
                                        node.target)]
        return None

    def _nest(self, node: cst.For, targets: list[Any], iters: list[Any],
              prefix: list[Any]) -> cst.For:
        body = prefix + list(node.body.body)
        loop = None
        for target, iterable in reversed(list(zip(targets, iters))):
            loop = self._loop(target, iterable, body, node)
            body = [loop]
        return loop

    def _bound(self, value: Any, base: str, before: list[Any], node: Any) -> Any:
        """``value`` where it may be read again, else a fresh name bound to it before
        the loops."""
        if self.pure(value):
            return value
        name = cst.Name(self.fresh(base))
        before.append(self.assign(name, value, node))
        return name

    def _product(self, node: cst.For, args: list[Any]) -> list[Any]:
        if not args:
            return [node]
        found = self._targets(node, len(args))
        if found is None:
            return [node]
        targets, prefix = found
        before: list[Any] = []
        iters = [args[0]] + [self._bound(a, "seq", before, a) for a in args[1:]]
        return before + [self._nest(node, targets, iters, prefix)]

    def _combinations(self, node: cst.For, args: list[Any]) -> list[Any]:
        if len(args) != 2 or not isinstance(args[1], cst.Integer):
            return [node]
        r = int(args[1].value)
        found = self._targets(node, r) if r >= 1 else None
        if found is None:
            return [node]
        targets, prefix = found
        seq, before = args[0], []
        ranged = self._is(seq, builtins.range) and 1 <= len(seq.args) <= 2
        if ranged:
            start = seq.args[0].value if len(seq.args) == 2 else None
            stop = self._bound(seq.args[-1].value, "stop", before, seq)
            if start is not None:
                start = self._bound(start, "start", before, seq)
            counters = [t if isinstance(t, cst.Name) else cst.Name(self.fresh("k"))
                        for t in targets]
        else:
            seq = self._bound(seq, "seq", before, seq)
            stop = cst.Call(cst.Name("len"), [cst.Arg(seq)])
            counters = [cst.Name(self.fresh("k")) for _ in targets]
        iters = []
        for k, counter in enumerate(counters):
            lower = start if k == 0 and ranged else (
                None if k == 0 else cst.BinaryOperation(counters[k - 1], cst.Add(),
                                                        cst.Integer("1")))
            iters.append(cst.Call(cst.Name("range"), [cst.Arg(v) for v in (lower, stop)
                                                      if v is not None]))
        binds = [self.assign(t, c if ranged else cst.Subscript(seq, [cst.SubscriptElement(
            cst.Index(c))]), node.target) for t, c in zip(targets, counters) if t is not c]
        for it in iters:
            self.n.desugar.alias_tree(it, node.iter)
        return before + [self._nest(node, counters, iters, binds + prefix)]

    def _chain(self, node: cst.For, args: list[Any]) -> list[Any]:
        out = []
        for arg in args:
            body, target = list(node.body.body), node.target
            if out:  # (each loop its own nodes)
                body = [s.deep_clone() for s in body]
                for new, old in zip(body, node.body.body):
                    _alias_clone(self.n.desugar, new, old)
                target = target.deep_clone()
                _alias_clone(self.n.desugar, target, node.target)
            out.append(self._loop(target, arg, body, node))
        return out or [node]

    def _from_iterable(self, node: cst.For, args: list[Any]) -> list[Any]:
        """``chain.from_iterable(groups)``: each group's items in turn, ``groups`` read
        once as Python reads it."""
        if len(args) != 1:
            return [node]
        group = cst.Name(self.fresh("group"))
        inner = self._loop(node.target, group, list(node.body.body), node)
        return [self._loop(group, args[0], [inner], node)]

    # ---- `[m, *mats]` ---------------------------------------------------------------------

    def _spread(self, node: Any) -> Any:
        """``node`` (a simple line, or a ``for``'s iterable, an ``if``'s test) with each
        list display spreading a sequence of values written as concatenation."""
        part = evaluated_part(node)
        if part is None:
            return node
        found = []
        iters = self

        class Find(cst.CSTVisitor):
            def visit_List(self, n: cst.List) -> None:
                if iters.spreads(n):
                    found.append(n)

            def visit_Lambda(self, n: Any) -> bool:
                return False

        part.visit(Find())
        if not found:
            return node
        new = part.visit(_Spread(self))
        if isinstance(node, cst.For):
            new = node.with_changes(iter=new)
        elif isinstance(node, cst.If):
            new = node.with_changes(test=new)
        self.n.desugar.alias(new, node)
        return new

    def spreads(self, node: cst.List) -> bool:
        """Does the list display ``node`` spread (``*name``) only sequences of values
        (a parameter the body does not bind again, a module's tuple or list not all
        ints), next to items of its own?"""
        starred = [e for e in node.elements if isinstance(e, cst.StarredElement)]
        if not starred or len(node.elements) == 1:  # (`[*ys]`: a copy, list_copy's)
            return False
        if self.rebound is None:
            self.rebound = assigned_names(self.n.p.node.body)
        for e in starred:
            name = e.value
            if not isinstance(name, cst.Name) or name.value in self.rebound:
                return False
            if name.value in self.n.local_names:
                if name.value not in self.n.arguments:
                    return False
                continue
            try:
                value = self.n.resolver.lookup_global(name)
            except TransformError:
                return False
            if not isinstance(value, (tuple, list)) or all(type(v) is int for v in value):
                return False
        return True

    # ---- `:=` -----------------------------------------------------------------------------

    def _line(self, line: cst.SimpleStatementLine) -> list[Any]:
        small = line.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                small.targets[0].target, cst.Name) and isinstance(small.value, cst.ListComp):
            loop = scan(self, line, small.targets[0].target, small.value)
            if loop is not None:
                return loop
        if isinstance(small, (cst.Assign, cst.Return, cst.Expr)) and (
                getattr(small, "value", None) is not None):
            return hoisted(self, line, small.value, lambda new: line.with_changes(
                body=[small.with_changes(value=new)]))
        return [line]



def _breaks(body: Any) -> bool:
    """A ``break`` of the loop itself (not a nested one's)."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Break(self, n: cst.Break) -> None:
            found.append(n)

        def on_visit(self, n: Any) -> bool:
            return not isinstance(n, (cst.For, cst.While, *_STOP)) and super().on_visit(n)

    for s in body.body:
        s.visit(Finder())
    return bool(found)


class _Spread(cst.CSTTransformer):
    """``[a, *b, c]`` as ``[a] + list(b) + [c]`` where ``Iterations.spreads`` says so."""

    def __init__(self, iters: Iterations) -> None:
        self.iters = iters

    def visit_Lambda(self, node: Any) -> bool:
        return False

    def leave_List(self, original: cst.List, updated: cst.List) -> Any:
        if not self.iters.spreads(updated):
            return updated
        parts: list[Any] = []
        run: list[Any] = []
        for e in updated.elements:
            if isinstance(e, cst.StarredElement):
                if run:
                    parts.append(cst.List(run))
                    run = []
                parts.append(cst.Call(cst.Name("list"), [cst.Arg(e.value)]))
            else:
                run.append(cst.Element(e.value))
        if run:
            parts.append(cst.List(run))
        out = parts[0]
        for part in parts[1:]:
            out = cst.BinaryOperation(out, cst.Add(), part)
        self.iters.n.desugar.alias_tree(out, original)
        return out

    def on_leave(self, original: Any, updated: Any) -> Any:
        out = super().on_leave(original, updated)
        if out is not original and isinstance(out, cst.CSTNode):
            self.iters.n.desugar.alias(out, original)
        return out


class _Put(cst.CSTTransformer):
    """The placeholders (``ITEM``) replaced by the user's expressions."""

    def __init__(self, table: dict[str, Any]) -> None:
        self.table = table

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
        return self.table.get(original.value, updated)


def _alias_clone(desugar: Any, new: Any, old: Any) -> None:
    """A deep clone's nodes report the positions of the nodes they copy."""
    olds: list[Any] = []
    news: list[Any] = []

    class Collect(cst.CSTVisitor):
        def __init__(self, into: list[Any]) -> None:
            super().__init__()
            self.into = into

        def on_visit(self, n: Any) -> bool:
            self.into.append(n)
            return True

    old.visit(Collect(olds))
    new.visit(Collect(news))
    for a, b in zip(news, olds):
        desugar.alias(a, b)
