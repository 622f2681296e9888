"""A closure with ``nonlocal`` state made inside the call (issue 23)::

    def make_counter_loss():
        calls = 0

        def loss(v):
            nonlocal calls
            calls += 1
            return calls * np.sum(v ** 2)

        return loss

    def f(x):                                 loss_calls = make_counter_loss_cells()
        loss = make_counter_loss()     ->     loss_made = make_counter_loss_loss(
        return loss(x) + loss(np.sin(x))          x, calls=loss_calls)
                                              loss_1 = loss_made[0]
                                              loss_calls = loss_made[1]
                                              ...
                                              return loss_1 + loss_2

The factory's cells are made by this call and dropped when it returns: they are local
state of the call, so they become locals of the function (``loss_calls``), made by the
factory's statements before its ``def`` (``make_counter_loss_cells``, written from
your factory, its lines yours), and each call of the closure is a call of its body
written with the cells as keyword parameters, returning its value and the cells'
new values (``make_counter_loss_loss``), moved onto a line of its own before the
statement, in the order Python calls them.  Every transform then carries the cells as
any local (a loop carries them, an ``if`` joins them).

Refused, located: the closure used as a value (passed, returned, stored, called in a
nested function, a comprehension, ``x if c else y``, ``and``/``or``, a ``while`` or
``elif`` test, an assignment's target: calls Python may skip, repeat or make in
another order), its name bound to anything else or to closures of two factories, a
body that can end without ``return``.  A closure made outside the call (a module's)
writes cells that outlive the call: refused where its ``nonlocal`` is (resolve.py).
"""

from __future__ import annotations

import types
import weakref
from typing import Any, NamedTuple

import libcst as cst

from ..errors import TransformError, UnsupportedSyntaxError
from .factories import _cells, _returned
from .resolve import is_library
from .source import parse_function
from .synthesize import DISPLAY, synthesize
from .targets import target_names

_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.ListComp, cst.SetComp,
           cst.DictComp, cst.GeneratorExp)


class _Stateful(NamedTuple):
    cells_fn: Any  # the factory's parameters -> the state (one value, or a tuple)
    step_fn: Any  # the closure's parameters, the state by keyword -> (value, *cells)
    state: tuple[str, ...]  # the factory's names the closure reads or writes
    cells: tuple[str, ...]  # those it writes (`nonlocal`), returned after its value


_MADE: "weakref.WeakKeyDictionary[Any, tuple[Any, Any]]" = weakref.WeakKeyDictionary()


def stateful(fn: Any) -> _Stateful | None:
    """``fn`` rewritten where it is a factory whose returned ``def`` declares
    ``nonlocal`` names of the factory; None for any other function."""
    if not isinstance(fn, types.FunctionType) or is_library(fn):
        return None
    hit = _MADE.get(fn)
    if hit is not None and hit[0] is fn.__code__:
        made = hit[1]
    else:
        made = _stateful(fn)
        _MADE[fn] = (fn.__code__, made)
    if isinstance(made, UnsupportedSyntaxError):
        raise made.with_func(fn.__name__)
    return made


def _stateful(fn: Any) -> Any:
    try:
        parsed = parse_function(fn)
    except Exception:  # noqa: BLE001 - no source: not a factory s2s can read
        return None
    found = _returned(parsed.node)
    if found is None or isinstance(found[1], cst.Lambda):
        return None
    inner = found[1]
    lines = list(inner.body.body)
    declared = [(line, small) for line in lines if isinstance(line, cst.SimpleStatementLine)
                for small in line.body if isinstance(small, cst.Nonlocal)]
    if not declared:
        return None
    cells = tuple(dict.fromkeys(n.name.value for _, s in declared for n in s.names))
    state = tuple(fn.__code__.co_cellvars)

    def refused(node: Any, what: str, hint: str) -> UnsupportedSyntaxError:
        return UnsupportedSyntaxError(what, parsed.loc(node), hint)

    own = {p.name.value for p in (*inner.params.posonly_params, *inner.params.params,
                                   *inner.params.kwonly_params)}
    params = parsed.node.params
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None or (
            params.kwonly_params or params.posonly_params or inner.params.star_kwarg):
        return refused(parsed.node, "a factory whose nested function has `nonlocal` "
                       "state, with `*args`, `**kwargs` or keyword-only parameters",
                       "give the factory and its nested function plain parameters")
    if any(c not in state for c in cells) or inner.name.value in state or own & set(state):
        return refused(declared[0][1], "`nonlocal` of a name the factory does not bind, "
                       "or a nested function calling itself or sharing a name with the "
                       "factory's", "bind the state in the factory, before its `def`")
    if not (lines and isinstance(lines[-1], cst.SimpleStatementLine) and isinstance(
            lines[-1].body[-1], cst.Return)):
        return refused(inner, "a nested function with `nonlocal` state that can end "
                       "without `return`", "end its body with `return value`")
    shown = DISPLAY.get(parsed.filename)

    def display(node: Any) -> tuple:
        col = parsed.loc(node).col
        return (shown[0], shown[1], (shown[2] or 0) + col - 1) if shown else (
            parsed.filename, parsed.lines, parsed.col_offset + col - 1)

    base = fn.__name__
    # the factory's statements before its `def`, then `return` of the state
    ret = cst.Return(cst.Name(state[0]) if len(state) == 1 else cst.Tuple(
        [cst.Element(cst.Name(s)) for s in state]))
    body = list(parsed.node.body.body)[:-2] + [cst.SimpleStatementLine([ret])]
    name = f"{base}_cells"
    fdef = parsed.node.with_changes(name=cst.Name(name), body=cst.IndentedBlock(body),
                                    leading_lines=[], decorators=[])
    cells_fn = synthesize(cst.Module([fdef]).code, name, fn.__globals__, f"cells-{name}",
                          parsed.loc(parsed.node).line, display(parsed.node),
                          cells=_cells(fn) or None)
    # the nested function: the state its keyword parameters, its value and the cells'
    # new values returned (each line where it was: `nonlocal` is `pass`)
    ps = inner.params
    new = [cst.Param(cst.Name(s)) for s in state]
    ps = ps.with_changes(kwonly_params=[*ps.kwonly_params, *new], star_arg=(
        ps.star_arg if isinstance(ps.star_arg, cst.Param) else cst.ParamStar()))
    name = f"{base}_{inner.name.value}"
    step = inner.with_changes(name=cst.Name(name), params=ps, leading_lines=[],
                              decorators=[]).visit(_Returning(cells))
    step_fn = synthesize(cst.Module([step]).code, name, fn.__globals__, f"cells-{name}",
                         parsed.loc(inner).line, display(inner), cells=_cells(fn) or None)
    step_fn.__qualname__ = f"{fn.__qualname__}.<locals>.{inner.name.value}"
    step_fn.__s2s_number_cells__ = _number_cells(body[:-1], inner, cells)  # type: ignore
    return _Stateful(cells_fn, step_fn, state, cells)


def _number_cells(made: list[Any], inner: Any, cells: tuple[str, ...]) -> frozenset:
    """The cells only ever a Python number: bound once by the factory to a number
    literal and written by the nested function only with a number literal
    (``calls += 1``).  Its ``+=`` rebinds, in Python as in the step function; any other
    cell's ``calls += v`` on a parameter is NumPy's in-place add (param_writes.py)."""
    def number(e: Any) -> bool:
        if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Minus):
            e = e.expression
        return isinstance(e, (cst.Integer, cst.Float))

    def writes(nodes: list[Any]) -> dict[str, list[Any]]:
        found: dict[str, list[Any]] = {}

        class Writes(cst.CSTVisitor):
            def visit_Assign(self, a: cst.Assign) -> None:
                for t in a.targets:  # (a tuple target: the name written, not a number)
                    for name in target_names(t.target):
                        found.setdefault(name, []).append(
                            a.value if isinstance(t.target, cst.Name) else None)

            def visit_AugAssign(self, a: cst.AugAssign) -> None:
                for name in target_names(a.target):
                    found.setdefault(name, []).append(a.value)

            def visit_AnnAssign(self, a: cst.AnnAssign) -> None:
                for name in target_names(a.target):
                    found.setdefault(name, []).append(a.value)

            def visit_For(self, a: cst.For) -> None:
                for name in target_names(a.target):
                    found.setdefault(name, []).append(None)

        for node in nodes:
            node.visit(Writes())
        return found

    first, later = writes(made), writes([inner.body])
    return frozenset(c for c in cells if len(first.get(c, ())) == 1 and all(
        v is not None and number(v) for v in first[c] + later.get(c, [])))



class _Returning(cst.CSTTransformer):
    """``return v`` -> ``return v, c1, ...``; ``nonlocal`` -> ``pass`` (same line)."""

    def __init__(self, cells: tuple[str, ...]) -> None:
        self.cells, self.depth = cells, 0

    def on_visit(self, node: Any) -> bool:
        if isinstance(node, _SCOPES):
            self.depth += 1
        return super().on_visit(node)

    def on_leave(self, original: Any, updated: Any) -> Any:
        if isinstance(original, _SCOPES):
            self.depth -= 1
        return super().on_leave(original, updated)

    def leave_Nonlocal(self, original: Any, updated: Any) -> Any:
        return cst.Pass() if self.depth == 1 else updated

    def leave_Return(self, original: Any, updated: Any) -> Any:
        if self.depth != 1:
            return updated
        value = updated.value if updated.value is not None else cst.Name("None")
        if isinstance(value, cst.Tuple) and not value.lpar:
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return updated.with_changes(value=cst.Tuple(
            [cst.Element(value), *(cst.Element(cst.Name(c)) for c in self.cells)]))


# ---- the function that makes the closure ----------------------------------------------


def closure_states(n: Any, nodes: list[Any]) -> list[Any]:
    """``nodes`` (a function's body) with each closure of ``nonlocal`` state it makes
    held as locals (see the module's text); ``nodes`` where it makes none."""
    handles: dict[str, None] = {}
    for line in _lines(nodes):
        made = _made_by(n, line)
        if made is not None:
            handles[made[0]] = None
    if not handles:
        return nodes
    return _Rewrite(n, set(handles)).block(nodes)


def _lines(nodes: list[Any]) -> Any:
    """Every simple statement line in ``nodes`` at any depth (not in nested scopes)."""
    for node in nodes:
        if isinstance(node, cst.SimpleStatementLine):
            yield node
        elif not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            for block in _blocks(node):
                yield from _lines(list(block.body))


def _blocks(node: Any) -> list[Any]:
    out = []
    for field in ("body", "orelse", "finalbody"):
        part = getattr(node, field, None)
        if isinstance(part, (cst.Else, cst.Finally)):
            part = part.body
        if isinstance(part, cst.If):
            out += [part.body, *_blocks(part)[1:]]
        elif isinstance(part, cst.IndentedBlock):
            out.append(part)
    out += [h.body for h in getattr(node, "handlers", ())]
    return out


def _made_by(n: Any, line: Any) -> tuple[str, Any, Any] | None:
    """``(name, call, _Stateful)`` where ``line`` is ``name = factory(...)`` of a
    factory of closures with ``nonlocal`` state."""
    if len(line.body) != 1 or not isinstance(line.body[0], cst.Assign):
        return None
    small = line.body[0]
    if len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name) or (
            not isinstance(small.value, cst.Call)):
        return None
    fn = _global(n, small.value.func)
    made = stateful(fn) if fn is not None else None
    if made is None:
        return None
    n.resolver.resolve_dotted(small.value.func)  # (its IR depends on the factory)
    return small.targets[0].target.value, small.value, made


def _global(n: Any, func: Any) -> Any:
    """What a dotted name of globals denotes, read without recording it; None for a
    local or anything not found."""
    parts = []
    while isinstance(func, cst.Attribute):
        parts.append(func.attr.value)
        func = func.value
    if not isinstance(func, cst.Name) or func.value in n.local_names or (
            func.value in n.env):
        return None
    closure = n.resolver.closure
    try:
        obj = closure[func.value].cell_contents if func.value in closure else (
            n.fn.__globals__[func.value])
    except (KeyError, ValueError):
        return None
    for attr in reversed(parts):
        obj = getattr(obj, attr, None)
    return obj


class _Rewrite:
    """The rewrite of one body for the closures ``handles`` name."""

    def __init__(self, n: Any, handles: set[str]) -> None:
        self.n, self.handles = n, handles
        self.state: dict[str, tuple[dict[str, str], Any]] = {}  # handle -> names, made

    def fresh(self, base: str) -> str:
        name = self.n.names.fresh(base)
        self.n.local_names.add(name)
        return name

    def block(self, nodes: list[Any]) -> list[Any]:
        out: list[Any] = []
        for node in nodes:
            if isinstance(node, cst.SimpleStatementLine):
                for small in node.body:
                    out += self._small(node, small)
                continue
            before: list[Any] = []
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                self._refuse_uses(node)  # (a nested function cannot write this one's)
                out.append(node)
                continue
            if isinstance(node, cst.If):
                node = node.with_changes(test=self._hoist(node.test, before))
            elif isinstance(node, cst.For):
                self._refuse_targets(node)
                node = node.with_changes(iter=self._hoist(node.iter, before))
            else:
                for field in ("test", "items"):  # (`while`, `with`: refused if used)
                    self._refuse_uses(getattr(node, field, None))
            changes = {}
            for field in ("body", "orelse", "finalbody"):
                part = getattr(node, field, None)
                if part is not None:
                    changes[field] = self._part(part)
            if getattr(node, "handlers", ()):
                changes["handlers"] = [h.with_changes(body=self._indented(h.body))
                                       for h in node.handlers]
            new = node.with_changes(**changes)
            self.n.desugar.alias(new, node)
            out += before + [new]
        return out

    def _part(self, part: Any) -> Any:
        if isinstance(part, cst.If):  # (an `elif`: its test Python may not evaluate)
            self._refuse_uses(part.test)
            new = part.with_changes(body=self._indented(part.body), orelse=(
                None if part.orelse is None else self._part(part.orelse)))
        elif isinstance(part, (cst.Else, cst.Finally)):
            new = part.with_changes(body=self._indented(part.body))
        elif isinstance(part, cst.IndentedBlock):
            new = self._indented(part)
        else:
            return part
        self.n.desugar.alias(new, part)
        return new

    def _indented(self, block: Any) -> Any:
        if not isinstance(block, cst.IndentedBlock):
            self._refuse_uses(block)
            return block
        new = block.with_changes(body=self.block(list(block.body)))
        self.n.desugar.alias(new, block)
        return new

    def _small(self, line: Any, small: Any) -> list[Any]:
        made = _made_by(self.n, line.with_changes(body=[small]))
        if made is not None and made[0] in self.handles:
            handle, call, stateful_ = made
            if handle in self.state and self.state[handle][1] is not stateful_:
                raise self._refusal(line, f"`{handle}` names closures of two factories "
                                    "here: which one a call reaches may depend on the "
                                    "path taken", "give each closure a name of its own")
            names = self.state[handle][0] if handle in self.state else {
                s: self.fresh(f"{handle}_{s}") for s in stateful_.state}
            self.state[handle] = (names, stateful_)
            spelled = self._spelled(stateful_.cells_fn)
            self._refuse_uses(call.args)
            targets = ", ".join(names[s] for s in stateful_.state)
            return [self._line(f"{targets} = {spelled}(ARGS)", call, line)]
        before: list[Any] = []
        self._refuse_targets(small)
        new = small.visit(_Calls(self, before, small))
        self.n.desugar.alias(new, small)
        rebuilt = line.with_changes(body=[new])
        self.n.desugar.alias(rebuilt, line)
        return before + [rebuilt]

    def _hoist(self, expr: Any, before: list[Any]) -> Any:
        return expr.visit(_Calls(self, before, expr))

    def call(self, call: cst.Call, before: list[Any], old: cst.Call) -> cst.Name:
        """``handle(args)`` moved onto a line before: the name of its value."""
        handle = call.func.value
        if handle not in self.state:
            raise self._refusal(old, f"`{handle}` is called before the closure with "
                                "`nonlocal` state it names is made here",
                                f"make it first: `{handle} = factory(...)`")
        names, made = self.state[handle]
        value = self.fresh(handle)
        spelled = self._spelled(made.step_fn)
        made_ = self.fresh(f"{handle}_made")
        state = ", ".join(f"{s}={names[s]}" for s in made.state)
        before.append(self._line(f"{made_} = {spelled}(ARGS, {state})", call, old))
        for i, target in enumerate([value, *(names[c] for c in made.cells)]):
            line = cst.parse_statement(f"{target} = {made_}[{i}]")  # (a tuple's items:
            self.n.desugar.alias_tree(line, old)  # no unpacking's run-time checks)
            before.append(line)
        out = cst.Name(value)
        self.n.desugar.alias(out, old)
        return out

    def _line(self, text: str, call: cst.Call, old: Any) -> Any:
        line = cst.parse_statement(text)
        small = line.body[0]
        made = small.value.with_changes(args=[*call.args, *small.value.args[1:]]) if (
            call.args) else small.value.with_changes(args=small.value.args[1:])
        line = line.with_changes(body=[small.with_changes(value=made)])
        self.n.desugar.alias_tree(line, old)
        return line

    def _spelled(self, fn: Any) -> str:
        text = fn.__name__
        known = self.n.resolver.aliases.get(text)
        if known is not None and known[0] is not fn:
            raise TransformError(f"`{text}` names another function here", self.n.loc(
                self.n.p.node), f"rename `{text}`", self.n.display)
        self.n.resolver.aliases[text] = (fn, text)
        self.n.names.taken.add(text)
        return text

    def _refusal(self, node: Any, what: str, hint: str) -> TransformError:
        return self.n.unsupported(node, what, hint)

    def used(self, name: cst.Name) -> TransformError:
        return self._refusal(name, f"`{name.value}` is a closure with `nonlocal` state "
                             "made in this call, used here other than called on a line of "
                             "its own (as a value, in a nested function, a comprehension or "
                             "an assignment's target, "
                             "under `and`/`or`/`if`-`else`, in a `while` or `elif` test)",
                             f"call it in a statement: `y = {name.value}(x)`, or return "
                             "the state and pass it on")

    def _refuse_uses(self, node: Any) -> None:
        for part in node if isinstance(node, (list, tuple)) else [node]:
            if part is None:
                continue
            found = [m for m in _names(part) if m.value in self.handles]
            if found:
                raise self.used(found[0])

    def _refuse_targets(self, small: Any) -> None:
        targets = [t.target for t in getattr(small, "targets", ())] + [
            getattr(small, "target", None)]
        for t in targets:
            if t is None:
                continue
            for m in _names(t):
                if m.value in self.handles and m is not t:  # (`d[loss(x)] = ...`: the
                    raise self.used(m)  # target is evaluated after the value)
                if m.value in self.handles:
                    raise self._refusal(m, f"`{m.value}` names a closure with `nonlocal` "
                                        "state made in this call, and is bound again here",
                                        "give the other value another name")


def _names(node: Any) -> list[cst.Name]:
    """The names ``node`` reads or binds (not an attribute's, not a keyword's)."""
    found: list[cst.Name] = []
    skip = _not_names(node)

    class Names(cst.CSTVisitor):
        def visit_Name(self, m: cst.Name) -> None:
            if id(m) not in skip:
                found.append(m)

    node.visit(Names())
    return found


def _not_names(node: Any) -> set[int]:
    """The ids of ``node``'s names that name no value: ``a.attr``'s, ``f(key=...)``'s."""
    skip: set[int] = set()

    class Walk(cst.CSTVisitor):
        def visit_Attribute(self, a: cst.Attribute) -> None:
            skip.add(id(a.attr))

        def visit_Arg(self, a: cst.Arg) -> None:
            if a.keyword is not None:
                skip.add(id(a.keyword))

    node.visit(Walk())
    return skip


class _Calls(cst.CSTTransformer):
    """Each call of a handle (outside a nested scope or a branch Python may skip)
    moved onto a line before; any other use of one refused."""

    _SKIPPED = (cst.IfExp, cst.BooleanOperation, *_SCOPES)

    def __init__(self, rewrite: _Rewrite, before: list[Any], node: Any) -> None:
        self.rewrite, self.before, self.skipped = rewrite, before, 0
        self.skip = _not_names(node)
        self.called: set[int] = set()

    def on_visit(self, node: Any) -> bool:
        if isinstance(node, self._SKIPPED):
            self.skipped += 1
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            self.called.add(id(node.func))
        return super().on_visit(node)

    def on_leave(self, original: Any, updated: Any) -> Any:
        if isinstance(original, self._SKIPPED):
            self.skipped -= 1
        out = super().on_leave(original, updated)
        if out is not original and isinstance(out, cst.CSTNode):
            self.rewrite.n.desugar.alias(out, original)
        return out

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> Any:
        if isinstance(original.func, cst.Name) and original.func.value in self.rewrite.handles:
            if self.skipped:
                raise self.rewrite.used(original.func)
            return self.rewrite.call(updated, self.before, original)
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
        if original.value in self.rewrite.handles and id(original) not in self.skip and (
                id(original) not in self.called):
            raise self.rewrite.used(original)
        return updated
