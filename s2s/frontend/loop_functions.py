"""Functions bound inside a loop's body (``for k in range(n): g = lambda y: y * w[k]``).

A loop binds such a name once per iteration; s2s lowers the body once.  Python's
meaning, which s2s gives it:

* in the body, from the binding on, the name is the body's function (reading its
  captured values, the loop index and carried values, at each call);
* *before* the binding, in an iteration after the first, the name is the function
  the previous iteration bound; in the first, the one it denoted before the loop.
  A carried flag (``g_bound = False`` before the loop, ``True`` at the binding)
  chooses between the two where the body calls it (``_Prepared``);
* after the loop, the function of the last iteration, reading the values it
  captures as the last iteration left them: the loop's own names it reads (the loop
  index, a name first bound in the body) are carried out of the loop (they enter as
  ``None``, which nothing reads: the body binds them before reading them).  Where
  the loop may have run no iteration the flag chooses the function bound before the
  loop, or, with none, the read raises ``s2s.UnboundFunctionError`` (Python's
  ``UnboundLocalError``, a NameError) located at the user's line.

A name bound more than once in the body, or in the branches of its ``if``s, or in
a body with ``break``/``continue`` gets one flag per binding (``_prepare_sites``):
set at that binding, cleared at the others; the name is the chain of choices over
them, the function before the loop last.

Still refused, located: a name bound in a nested loop of the body, or to a value
other than a function there too, read after the loop or called before its binding;
a function the loop binds whose values are not captured names (a partial of the
loop's values) read after a loop that may not run.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any

import libcst as cst

from ..errors import UnboundFunctionError
from ..ir.nodes import Const, Var
from .dicts import assigned_names
from .fnvalues import FnValue, Unbound


@dataclass
class _Prepared:
    """A function name a loop binds that is read before its binding in the body or
    after the loop: its flag's name in ``env`` (None: the loop surely runs), the
    function before the loop, the loop's own names its function captures."""

    name: str
    binding: Any  # the def, or the assigned value (a lambda, a module's function)
    before: FnValue | None
    flag: str | None
    own: list[str]
    choice: FnValue | None = None  # what the name is at the body's start
    # a name bound at several places (or in a branch, or in a body with `break`):
    # per binding, its node, its function (lifted ahead) and its flag's name in `env`
    sites: list[tuple[Any, FnValue, str]] = field(default_factory=list)


@dataclass
class _Frame:
    """A loop being lowered: the function values before it, the names of function
    values its body read, and the names prepared for it."""

    before: dict[str, Any]
    reads: set[str] = field(default_factory=set)
    prepared: dict[str, _Prepared] = field(default_factory=dict)


class LoopFunctions:
    """The loops around the code being lowered, as the function values see them."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer
        self.frames: list[_Frame] = []
        self.unbound: dict[str, Any] = {}  # name -> the loop that may not bind it
        self.lifted: dict[int, FnValue] = {}  # id(def or lambda) -> lifted ahead
        # name -> (its function after a loop that may not have run, the flag, the loop)
        self.guards: dict[str, tuple[FnValue, Var, Any]] = {}
        self._pending: dict[str, _Prepared] = {}
        self._checked: set[tuple[int, str]] = set()

    # ---- before the loop ----------------------------------------------------------

    def prepare(self, node: Any, trips: int | None) -> None:
        """Before ``node`` (a ``for``/``while``) is entered: for each function name its
        body binds once, at its top level, and reads before that binding or after the
        loop, bind the flag and the loop's own names it captures (to None)."""
        n = self.n
        self._pending = {}
        body = list(node.body.body) if isinstance(node.body, cst.IndentedBlock) else []
        if not body:
            return
        self._prepare_sites(node, body)
        if _leaves(node.body):
            return
        tops = [(i, *one) for i, s in enumerate(body) if (one := _binding(s)) is not None]
        assigned = _assigned(node)
        counts = _binding_counts(node.body)
        for index, name, value in tops:
            if counts.get(name) != 1 or name in n.env or name in self._pending:
                continue
            before = n.funcs.values.get(name)
            early = before is not None and any(_reads(s, name) for s in body[:index])
            after = self._read_after(node, name)
            if not (early or after):
                continue
            fv = self._ahead(value) if early else None
            if early and fv is None:
                continue  # (refused at the binding, as before)
            own = [m for m in _captured(value) if m in assigned and m in n.local_names
                   and m not in n.env and m not in n.funcs.values and m != name]
            flag = None
            if early or trips is None or trips < 1:
                flag = f"{name}.bound"  # (no user name has a dot)
                ssa = n.names.fresh(f"{name}_bound")
                n.emit(ssa, "identity", (Const(False, "False"),), {}, node)
                n.env[flag] = ssa
                n.bound.add(flag)
            for m in own:  # (the body binds it before it reads it: None is never read)
                ssa = n.names.fresh(m) if m in n.bound else m
                n.emit(ssa, "identity", (Const(None, "None"),), {}, node)
                n.bound.add(m)
                n._bind(m, ssa)
            prepared = _Prepared(name, value, before, flag, own)
            if early:
                assert flag is not None and before is not None and fv is not None
                prepared.choice = FnValue(None, "choice",
                                          choice=(Var(n.env[flag]), fv, before))
                n.funcs.values[name] = prepared.choice
            self._pending[name] = prepared

    def _prepare_sites(self, node: Any, body: list[Any]) -> None:
        """Before a loop whose body binds a name to a function more than once, or in
        a branch, or in a body with ``break``/``continue``, that is read before a
        binding or after the loop: one flag per binding (``f.bound.1``, ...), set at
        that binding and cleared at the others, carried through the loop; the name
        is the chain of choices over them (``f1 if f.bound.1 else f2 if f.bound.2
        else <the function before the loop>``) at the body's start and after the
        loop.  With no function before the loop, a read after it checks that some
        binding ran (``f.bound``), as for one binding."""
        n = self.n
        counts = _binding_counts(node.body)
        for name, found in _sites(node.body).items():
            if name in n.env or counts.get(name) != len(found) or (
                    len(found) == 1 and not _leaves(node.body) and any(
                        _binding(s) is not None and _binding(s)[0] == name for s in body)):
                continue  # (one binding at the top level: prepare's own case)
            before = n.funcs.values.get(name)
            first = next(i for i, s in enumerate(body) if _binds(s, name))
            early = any(_reads(s, name) for s in body[:first]) or any(
                _reads_before_binding(s, name) for s in body[first:])
            if not (early or self._read_after(node, name)) or (early and before is None):
                continue
            fvs = [self._ahead(value) for _, value in found]
            if any(fv is None for fv in fvs):
                continue  # (refused where it is bound or read, as before)
            assigned = _assigned(node)
            own = [m for _, value in found for m in _captured(value)
                   if m in assigned and m in n.local_names and m not in n.env
                   and m not in n.funcs.values and m != name]
            own = list(dict.fromkeys(own))
            flags = [f"{name}.bound.{i}" for i in range(1, len(found) + 1)]
            for flag in flags + ([f"{name}.bound"] if before is None else []):
                n.env[flag] = n.emit(n.names.fresh(_flag_stem(flag)), "identity",
                                     (Const(False, "False"),), {}, node).name
                n.bound.add(flag)
            for m in own:  # (the body binds it before it reads it: None is never read)
                ssa = n.names.fresh(m) if m in n.bound else m
                n.emit(ssa, "identity", (Const(None, "None"),), {}, node)
                n.bound.add(m)
                n._bind(m, ssa)
            prepared = _Prepared(name, None, before, f"{name}.bound" if before is None
                                 else None, own,
                                 sites=[(site, fv, flag) for (site, _), fv, flag in zip(
                                     found, fvs, flags)])
            if before is not None:
                prepared.choice = self._chain(prepared, {})
                n.funcs.values[name] = prepared.choice
            self._pending[name] = prepared

    def _chain(self, prepared: _Prepared, fallback: dict[str, Var]) -> FnValue:
        """The function a name bound at several places denotes: the one whose flag is
        set, else the one before the loop (else the last binding's: see ``check``)."""
        n = self.n
        fvs = [_with_fallbacks(fv, fallback) for _, fv, _ in prepared.sites]
        chain = prepared.before if prepared.before is not None else fvs[-1]
        for (_, _, flag), fv in reversed(list(zip(prepared.sites, fvs))):
            if fv is not chain:
                chain = FnValue(None, "choice", choice=(Var(n.env[flag]), fv, chain))
        return chain

    def _ahead(self, value: Any) -> FnValue | None:
        """The function a binding makes, lifted before the loop (a def or lambda whose
        defaults are literals), or a module's function; None otherwise."""
        n = self.n
        if isinstance(value, (cst.FunctionDef, cst.Lambda)):
            if isinstance(value, cst.FunctionDef) and (value.decorators or value.asynchronous):
                return None
            if any(p.default is not None and not _literal(p.default) for p in (
                    *value.params.posonly_params, *value.params.params,
                    *value.params.kwonly_params)):
                return None
            fv = n.funcs.lift(value)
            self.lifted[id(value)] = fv
            return fv
        root = value
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name) and root.value not in n.local_names:
            return n.funcs.value_of(value)
        return None

    def _read_after(self, loop: Any, name: str) -> bool:
        """Does the function read ``name`` after ``loop`` ends (by position)?"""
        positions = self.n.p.positions
        end = positions.get(loop)
        if end is None:
            return False
        found = []

        class Visit(cst.CSTVisitor):
            def visit_Name(self, m: cst.Name) -> None:
                at = positions.get(m)
                if m.value == name and at is not None and (
                        (at.start.line, at.start.column) >= (end.end.line, end.end.column)):
                    found.append(m)

            def visit_Attribute(self, a: cst.Attribute) -> bool:
                a.value.visit(self)
                return False

        self.n.p.node.visit(Visit())
        return bool(found)

    # ---- the loop -------------------------------------------------------------------

    def enter(self, values: dict[str, Any]) -> None:
        self.frames.append(_Frame(dict(values), prepared=self._pending))
        self._pending = {}

    def read(self, name: str) -> None:
        for frame in self.frames:
            frame.reads.add(name)

    def binding(self, name: str, node: Any) -> None:
        """``name`` is bound to a function here: the flag of a prepared name is set;
        refused where a loop called the function it denoted before, unprepared."""
        n = self.n
        for frame in self.frames:
            prepared = frame.prepared.get(name)
            if prepared is not None and frame is self.frames[-1] and prepared.sites:
                self._set_flags(prepared, node)
                continue
            if prepared is not None and frame is self.frames[-1]:
                if prepared.flag is not None:
                    ssa = n.names.fresh(f"{name}_bound")
                    n.emit(ssa, "identity", (Const(True, "True"),), {}, node)
                    n.env[prepared.flag] = ssa
                continue
            if frame.before.get(name) is not None and name in frame.reads:
                raise n.unsupported(
                    node, f"`{name}` is bound to a function inside a loop that called "
                    f"the function `{name}` denoted before it, here in a nested loop, "
                    "or the loop binds it to a value other than a function too",
                    f"give this function another name than `{name}`, or bind it at the "
                    "top level of the loop's body or in its `if` branches")
        self.unbound.pop(name, None)
        self.guards.pop(name, None)

    def _set_flags(self, prepared: _Prepared, node: Any) -> None:
        """At one of a name's bindings: its flag set, the others cleared."""
        n = self.n
        site = next((k for k, (at, _, _) in enumerate(prepared.sites) if at is node), None)
        if site is None:
            raise n.unsupported(
                node, f"`{prepared.name}` is bound to a function here, in a loop that "
                "binds it at other places too, in a way s2s does not follow",
                f"give this function another name than `{prepared.name}`")
        flags = [(flag, k == site) for k, (_, _, flag) in enumerate(prepared.sites)]
        if prepared.flag is not None:
            flags.append((prepared.flag, True))
        for flag, value in flags:
            n.env[flag] = n.emit(n.names.fresh(_flag_stem(flag)), "identity",
                                 (Const(value, repr(value)),), {}, node).name

    def leave(self, values: dict[str, Any], node: Any, trips: int | None) -> None:
        """After a loop: a name its body bound to a function is the last iteration's
        (prepared), or keeps it where the loop surely ran (``trips``, known when
        transforming, at least 1); else a read of it is refused (``refuse_after``)."""
        n = self.n
        frame = self.frames.pop()
        for name, prepared in frame.prepared.items():
            if prepared.sites:  # (bound at several places: the chain over their flags)
                fallback = {m: Var(n.env[m]) for m in prepared.own if m in n.env}
                for m in fallback:
                    del n.env[m]  # (read after the loop by the functions alone)
                values[name] = self._chain(prepared, fallback)
                for _, _, flag in prepared.sites:
                    del n.env[flag]
                if prepared.flag is not None:  # (no function before: did one run?)
                    self.guards[name] = (values[name], Var(n.env.pop(prepared.flag)), node)
                frame.before[name] = values[name]  # (handled)
                continue
            last = values.get(name)
            if last is None or last is prepared.choice:
                continue  # (the binding was not reached as prepared: nothing to keep)
            fallback = {m: Var(n.env[m]) for m in prepared.own if m in n.env}
            for m in fallback:
                del n.env[m]  # (read after the loop by the function alone)
            last = _with_fallbacks(last, fallback)
            flag = Var(n.env.pop(prepared.flag)) if prepared.flag is not None else None
            if flag is None or (trips is not None and trips >= 1):
                values[name] = last
            elif prepared.before is not None:
                values[name] = FnValue(None, "choice", choice=(flag, last, prepared.before))
            else:
                values[name] = last
                self.guards[name] = (last, flag, node)
            frame.before[name] = values[name]  # (handled)
        for name in list(values):
            if values[name] is not frame.before.get(name) and (trips is None or trips < 1):
                del values[name]
                self.unbound[name] = node
        if self.frames:
            self.frames[-1].reads |= frame.reads

    # ---- after the loop -------------------------------------------------------------

    def check(self, name: str, fv: FnValue, node: Any) -> None:
        """``name`` read where it denotes ``fv``: after a loop that may have run no
        iteration (and nothing bound it before), its flag is checked first."""
        guard = self.guards.get(name)
        if guard is None or guard[0] is not fv or (id(node), name) in self._checked:
            return
        self._checked.add((id(node), name))
        n = self.n
        _, flag, loop = guard
        raiser = n.names.fresh(f"{name}_unbound")
        loop_loc = n.loc(loop)
        n.resolver.namespace[raiser] = functools.partial(
            UnboundFunctionError,
            f"`{name}` is bound only inside the loop on line {loop_loc.line}, which ran "
            f"no iteration (Python's UnboundLocalError: cannot access local variable "
            f"'{name}' where it is not associated with a value)", n.loc(node),
            f"bind `{name}` before the loop too, or make sure the loop runs",
            n.display)
        key = "__s2s_operand_0__"
        n.emit(n.names.fresh("kept"), "kept", (flag,), {
            "template": (f"if not {key}:", (key,)), "kind": "check",
            "body": (f"raise {raiser}()", (key,)), "always": True}, node)

    def refuse_after(self, node: Any) -> None:
        """``node`` (a name) calls a function a loop that may not have run bound."""
        if node.value in self.unbound:
            raise self.n.unsupported(
                node, f"`{node.value}` is bound to a function inside a loop whose number "
                "of iterations is known only when it runs, so after the loop it may not "
                "be bound (Python raises NameError when the loop runs no iteration); "
                "s2s carries out of the loop only functions bound at the top level of "
                "its body or in its `if` branches (not in a nested loop)",
                f"bind `{node.value}` at the top level of the loop's body, or call it "
                "inside the loop")


def _with_fallbacks(fv: FnValue, fallback: dict[str, Var]) -> FnValue:
    """``fv`` whose captured names among ``fallback`` read those values where the name
    is no longer bound (after the loop that carried them out)."""
    if not fallback:
        return fv
    def one(value: Any) -> Any:
        if isinstance(value, Unbound) and value.name in fallback:
            return Unbound(value.name, fallback[value.name])
        return _with_fallbacks(value, fallback) if isinstance(value, FnValue) else value

    if fv.choice is not None:
        return replace(fv, choice=tuple(one(v) for v in fv.choice))
    return replace(fv, captured=tuple((k, one(v)) for k, v in fv.captured))


def _binding(stmt: Any) -> tuple[str, Any] | None:
    """``(name, value)`` for ``def name`` or ``name = <lambda or a dotted name>``."""
    if isinstance(stmt, cst.FunctionDef):
        return stmt.name.value, stmt
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        small = stmt.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(
                small.targets[0].target, cst.Name) and isinstance(
                small.value, (cst.Lambda, cst.Name, cst.Attribute)):
            return small.targets[0].target.value, small.value
    return None


def _binding_counts(body: Any) -> dict[str, int]:
    """How many statements in ``body`` (nested blocks too) bind each name."""
    counts: dict[str, int] = {}

    class Visit(cst.CSTVisitor):
        def visit_FunctionDef(self, d: cst.FunctionDef) -> bool:
            counts[d.name.value] = counts.get(d.name.value, 0) + 1
            return False

        def visit_AssignTarget(self, t: cst.AssignTarget) -> None:
            for m in _target_names(t.target):
                counts[m] = counts.get(m, 0) + 1

        def visit_AugAssign(self, t: cst.AugAssign) -> None:
            for m in _target_names(t.target):
                counts[m] = counts.get(m, 0) + 1

        def visit_For(self, f: cst.For) -> None:
            for m in _target_names(f.target):
                counts[m] = counts.get(m, 0) + 1

        def visit_Lambda(self, _: cst.Lambda) -> bool:
            return False

    body.visit(Visit())
    return counts


def _target_names(target: Any) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [m for e in target.elements for m in _target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def _defined(body: Any) -> set[str]:
    found: set[str] = set()

    class Visit(cst.CSTVisitor):
        def visit_FunctionDef(self, d: cst.FunctionDef) -> bool:
            found.add(d.name.value)
            return False

    body.visit(Visit())
    return found


def _leaves(body: Any) -> bool:
    """Does ``body`` hold a ``break``, ``continue`` or ``return`` (outside nested
    functions)?"""
    found = []

    class Visit(cst.CSTVisitor):
        def visit_Break(self, _: cst.Break) -> None:
            found.append(1)

        def visit_Continue(self, _: cst.Continue) -> None:
            found.append(1)

        def visit_Return(self, _: cst.Return) -> None:
            found.append(1)

        def visit_FunctionDef(self, _: cst.FunctionDef) -> bool:
            return False

        def visit_Lambda(self, _: cst.Lambda) -> bool:
            return False

    body.visit(Visit())
    return bool(found)


def _reads(stmt: Any, name: str) -> bool:
    found = []

    class Visit(cst.CSTVisitor):
        def visit_Name(self, m: cst.Name) -> None:
            if m.value == name:
                found.append(m)

        def visit_Attribute(self, a: cst.Attribute) -> bool:
            a.value.visit(self)
            return False

    stmt.visit(Visit())
    return bool(found)


def _captured(value: Any) -> list[str]:
    """The names a def's or lambda's body reads that are not its parameters."""
    if not isinstance(value, (cst.FunctionDef, cst.Lambda)):
        return []
    ps = value.params
    own = {p.name.value for p in (*ps.posonly_params, *ps.params, *ps.kwonly_params)}
    for star in (ps.star_arg, ps.star_kwarg):
        if isinstance(star, cst.Param):
            own.add(star.name.value)
    return [m for m in names_read(value) if m not in own]


def _literal(node: Any) -> bool:
    from .source import literal_value

    try:
        literal_value(cst.Module([]).code_for_node(node))
    except (ValueError, SyntaxError):
        return False
    return True


def names_read(node: Any) -> list[str]:
    """Names a nested function's body reads, in order of appearance (a superset:
    attribute names and keywords excluded)."""
    out: list[str] = []

    class Visit(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            if n.value not in out:
                out.append(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

        def visit_Arg(self, n: cst.Arg) -> bool:
            n.value.visit(self)
            return False

        def visit_Param(self, n: cst.Param) -> bool:
            if n.default is not None:
                n.default.visit(self)
            return False

    (node.body).visit(Visit())
    return out


def names_assigned(node: Any) -> set[str]:
    """The names a nested function's body binds (``=``, ``+=``, annotated, ``for``,
    ``with ... as``, ``def``, ``class``): its locals, which Python never reads from the
    enclosing function (nested functions' and lambdas' own bodies not entered)."""
    out: set[str] = set()

    def targets(t: Any) -> None:
        if isinstance(t, cst.Name):
            out.add(t.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for e in t.elements:
                targets(e.value)
        elif isinstance(t, cst.StarredElement):
            targets(t.value)

    class Visit(cst.CSTVisitor):
        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            targets(n.target)

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            targets(n.target)

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            targets(n.target)

        def visit_For(self, n: cst.For) -> None:
            targets(n.target)

        def visit_AsName(self, n: cst.AsName) -> None:
            targets(n.name)

        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            out.add(n.name.value)
            return False

        def visit_ClassDef(self, n: cst.ClassDef) -> bool:
            out.add(n.name.value)
            return False

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            return False

    if isinstance(node, cst.FunctionDef):  # (a lambda binds nothing)
        for stmt in node.body.body:
            stmt.visit(Visit())
    return out


def nested_locals(node: Any, n: Any) -> set[str]:
    """``names_assigned(node)`` of a nested function s2s lifts to module level, its
    reads of the enclosing function's names made parameters: a ``nonlocal`` in it is
    refused at its line (it was a SyntaxError compiling the lifted copy)."""
    found: list[cst.Nonlocal] = []

    class Visit(cst.CSTVisitor):
        def visit_Nonlocal(self, stmt: cst.Nonlocal) -> None:
            found.append(stmt)

    node.visit(Visit())
    if found:
        raise n.unsupported(found[0], "`nonlocal` in a nested function: s2s passes it "
                            "the names it reads, never writing the enclosing function's",
                            "return the new value and assign it where it is called")
    return names_assigned(node)


def _flag_stem(flag: str) -> str:
    """The emitted name of a flag: ``f.bound`` -> ``f_bound``, ``f.bound.2`` ->
    ``f_bound_at_2`` (set where the loop's second binding of ``f`` runs)."""
    name, _, site = flag.partition(".bound")
    return f"{name}_bound_at_{site[1:]}" if site else f"{name}_bound"


def _assigned(node: Any) -> set[str]:
    """The names a loop binds: in its body, and its ``for`` target."""
    assigned = assigned_names(node.body) | _defined(node.body)
    if isinstance(node, cst.For):
        assigned |= assigned_names(cst.IndentedBlock([cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(node.target)], cst.Name("None"))])]))
    return assigned


def _sites(body: Any) -> dict[str, list[tuple[Any, Any]]]:
    """The bindings of names to functions in a loop's ``body``, at its top level and
    in the branches of its ``if``s (not in nested loops or functions): name -> the
    nodes the lowering binds them at (a def, an assigned value) and their values."""
    found: dict[str, list[tuple[Any, Any]]] = {}

    def block(stmts: list[Any]) -> None:
        for s in stmts:
            one = _binding(s)
            if one is not None:
                found.setdefault(one[0], []).append(
                    (s if isinstance(s, cst.FunctionDef) else one[1], one[1]))
            elif isinstance(s, cst.If):
                block(list(s.body.body) if isinstance(s.body, cst.IndentedBlock) else [])
                other = s.orelse
                if isinstance(other, cst.If):
                    block([other])
                elif isinstance(other, cst.Else) and isinstance(other.body, cst.IndentedBlock):
                    block(list(other.body.body))

    block(list(body.body) if isinstance(body, cst.IndentedBlock) else [])
    return found


def _binds(stmt: Any, name: str) -> bool:
    """Does ``stmt`` (or an ``if`` branch in it) bind ``name`` to a function?"""
    return name in _sites(cst.IndentedBlock([stmt]))


def _reads_before_binding(stmt: Any, name: str) -> bool:
    """Does an ``if`` statement read ``name`` in a branch before (or without) a
    binding of it there (the previous iteration's function)?"""
    if not isinstance(stmt, cst.If):
        return False
    if _reads(stmt.test, name):
        return True
    branches = [stmt.body]
    if isinstance(stmt.orelse, cst.If):
        branches.append(cst.IndentedBlock([stmt.orelse]))
    elif isinstance(stmt.orelse, cst.Else):
        branches.append(stmt.orelse.body)
    for branch in branches:
        stmts = list(branch.body) if isinstance(branch, cst.IndentedBlock) else []
        for s in stmts:
            if _binds(s, name):
                if _reads_before_binding(s, name):
                    return True
                break
            if _reads(s, name):
                return True
    return False
