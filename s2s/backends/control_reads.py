"""What the control-flow lowering (control.py) reads of a function's statements: the
names they bind and load, on which paths, and the tapes they push and pop.
"""

from __future__ import annotations

import ast
import re
import threading
from typing import Iterable

from .breaks import MARK, shape_check

_LIST_METHODS = {"append", "pop", "extend", "insert", "remove", "clear"}
_FORBIDDEN = (ast.Return, ast.Break, ast.Continue, ast.Raise, ast.Yield, ast.YieldFrom,
              ast.Global, ast.Nonlocal, ast.Try, ast.With, ast.Delete, ast.Assert,
              ast.Await, ast.ClassDef)
_WORDS = {ast.Return: "`return`", ast.Break: "`break`", ast.Continue: "`continue`",
          ast.Raise: "`raise`", ast.Yield: "`yield`", ast.Try: "`try`",
          ast.With: "`with`", ast.Delete: "`del`", ast.Assert: "`assert`",
          ast.Global: "`global`", ast.Nonlocal: "`nonlocal`"}

_MEMO = threading.local()  # per parse: node id -> names it loads / statement binds


def reset_memo() -> None:
    """Forget the node ids of an earlier parse (the memo keys by id)."""
    _MEMO.loads = {}
    _MEMO.assigned = {}


class GiveUp(Exception):
    """A statement the pass leaves Python, with why and the tapes it touches."""

    def __init__(self, reason: str, tapes: Iterable[str] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.tapes = set(tapes)


def parents_of(fn: ast.FunctionDef) -> dict[int, tuple[ast.AST, list]]:
    """Statement id -> (the node holding it, the block it is in)."""
    found: dict[int, tuple[ast.AST, list]] = {}
    for n in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if not isinstance(block, list):  # an IfExp's body is an expression
                continue
            for s in block:
                if isinstance(s, ast.stmt):
                    found[id(s)] = (n, block)
    return found


# ---- names --------------------------------------------------------------------------


def target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in target_names(t)]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    return []


def assigned_in(stmts: Iterable[ast.stmt]) -> list[str]:
    """Names the statements bind in their own scope, in order (nested functions'
    own names and bodies excluded)."""
    memo = getattr(_MEMO, "assigned", None)
    if memo is None:
        reset_memo()
        memo = _MEMO.assigned
    out: list[str] = []
    for s in stmts:
        found = memo.get(id(s))
        if found is None:
            found = memo[id(s)] = tuple(_assigned_one(s))
        out += [n for n in found if n not in out]
    return out


def _assigned_one(node: ast.AST) -> list[str]:
    out: list[str] = []

    def add(names: Iterable[str]) -> None:
        for n in names:
            if n not in out:
                out.append(n)

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                             ast.ClassDef)):
            return
        if isinstance(node, ast.Assign):
            for t in node.targets:
                add(target_names(t))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            add(target_names(node.target))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            add(target_names(node.target))
        elif isinstance(node, ast.NamedExpr):
            add(target_names(node.target))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            add((a.asname or a.name).split(".")[0] for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(node)
    return out


def node_loads(node: ast.AST) -> frozenset[str]:
    memo = getattr(_MEMO, "loads", None)
    if memo is None:
        reset_memo()
        memo = _MEMO.loads
    found = memo.get(id(node))
    if found is None:
        if isinstance(node, ast.Name):
            found = frozenset([node.id]) if isinstance(node.ctx, ast.Load) else frozenset()
        else:
            names: set[str] = set()
            for child in ast.iter_child_nodes(node):
                names |= node_loads(child)
            found = frozenset(names)
        memo[id(node)] = found
    return found


def loads(nodes: Iterable[ast.AST]) -> set[str]:
    out: set[str] = set()
    for node in nodes:
        out |= node_loads(node)
    return out


def params(fn: ast.FunctionDef) -> list[str]:
    a = fn.args
    out = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    out += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    return out


def definitely(stmts: list[ast.stmt]) -> set[str]:
    """Names the statements bind on every path through them."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(s, ast.If):
            out |= definitely(s.body) & definitely(s.orelse)
            out |= set(assigned_in([ast.Expr(s.test)]))
        elif isinstance(s, (ast.For, ast.While)):
            header = s.iter if isinstance(s, ast.For) else s.test
            out |= set(assigned_in([ast.Expr(header)]))
        else:
            out |= set(assigned_in([s]))
    return out


def scan(stmts: list[ast.stmt], name: str) -> str | None:
    """"read" if running ``stmts`` may read ``name`` before binding it, "written" if
    they certainly bind it first, else None."""
    for s in stmts:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if name in params(s) or name in assigned_in(s.body):
                continue
            if name in loads(s.body):
                return "read"  # a closure read: lowered blocks are called right away
            continue
        if isinstance(s, ast.If):
            if name in loads([s.test]):
                return "read"
            a, b = scan(s.body, name), scan(s.orelse, name)
            if "read" in (a, b):
                return "read"
            if a == b == "written":
                return "written"
            continue
        if isinstance(s, (ast.For, ast.While)):
            header = s.iter if isinstance(s, ast.For) else s.test
            if name in loads([header]):
                return "read"
            if isinstance(s, ast.For) and name in target_names(s.target):
                continue  # the body reads the loop's own binding
            if scan(s.body, name) == "read":
                return "read"
            if scan(s.orelse, name) == "read":
                return "read"
            continue
        if name in loads([s]):
            return "read"
        if name in assigned_in([s]):
            return "written"
    return None



def tape_lists(fn: ast.FunctionDef) -> set[str]:
    """Lists bound to ``[]`` whose every use is ``.append(...)``/``.pop()`` (or a
    lowered loop's ``push=``/``pop=``): the tapes emitted gradients save values on."""
    candidates = {t.id for s in ast.walk(fn) if isinstance(s, ast.Assign)
                  and isinstance(s.value, ast.List) and not s.value.elts
                  for t in s.targets if isinstance(t, ast.Name)}
    allowed: set[int] = set()
    for n in ast.walk(fn):
        if (isinstance(n, ast.Attribute) and n.attr in ("append", "pop")
                and isinstance(n.value, ast.Name)):
            allowed.add(id(n.value))
        if isinstance(n, ast.keyword) and n.arg in ("push", "pop", "extend"):
            allowed |= {id(v) for v in ast.walk(n.value) if isinstance(v, ast.Name)}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and \
                n.id in candidates and id(n) not in allowed:
            candidates.discard(n.id)
    return candidates


def functions_bound(stmts: Iterable[ast.stmt]) -> set[str]:
    """Names the statements bind to a function (a nested ``def``, ``name = lambda``)."""
    out: set[str] = set()
    stack: list[ast.AST] = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(n.name)
            continue
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Lambda):
            out.update(name for t in n.targets for name in target_names(t))
        if not isinstance(n, ast.Lambda):
            stack.extend(ast.iter_child_nodes(n))
    return out


def walk_outside_defs(node: ast.AST):
    """``ast.walk`` that does not enter nested functions (lowered blocks are pure)
    nor shape checks (:func:`shape_check`: they run while JAX traces)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or \
                shape_check(n):
            continue
        for child in ast.iter_child_nodes(n):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                stack.append(child)



def code(line: str) -> str:
    """The line without a trailing comment (emitted code has no '#' in strings)."""
    return line.split("#", 1)[0]


def tape_statement(s: ast.stmt) -> tuple[str | None, str]:
    """``tape.append(e)`` -> (tape, "append"); ``v = tape.pop()`` -> (tape, "pop")."""
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        c = s.value
        if (isinstance(c.func, ast.Attribute) and c.func.attr == "append"
                and isinstance(c.func.value, ast.Name) and len(c.args) == 1
                and not c.keywords):
            return c.func.value.id, "append"
    if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.value, ast.Call):
        c = s.value
        if (isinstance(c.func, ast.Attribute) and c.func.attr == "pop"
                and isinstance(c.func.value, ast.Name) and not c.args and not c.keywords):
            return c.func.value.id, "pop"
    return None, ""


def tapes_in(stmts: list[ast.stmt]) -> set[str]:
    """Lists appended to or popped anywhere in the statements."""
    out = set()
    for s in stmts:
        for n in ast.walk(s):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr in ("append", "pop")
                    and isinstance(n.func.value, ast.Name)):
                out.add(n.func.value.id)
            if isinstance(n, ast.Call):
                for k in n.keywords:
                    if k.arg in ("push", "pop", "extend"):
                        out |= loads([k.value])
    return out


# ---- one statement's surroundings -------------------------------------------------


class Reading:
    """What the lowering of one statement reads of the function around it: which
    names are bound before it and read after it, the loops it is in, the tapes a
    block pushes and pops."""

    def __init__(self, fn: ast.FunctionDef, lines: list[str], lax_name: str,
                 parents: dict[int, tuple[ast.AST, list]]) -> None:
        self.fn = fn
        self.lines = lines
        self.lax = lax_name
        self._parents = parents

    def bound_before(self, node: ast.stmt) -> set[str]:
        """Names certainly bound when ``node`` starts, whichever path led there."""
        out = set(params(self.fn))
        parents = self.parents()
        cur = node
        while True:
            parent, block = parents[id(cur)]
            idx = next(k for k, s in enumerate(block) if s is cur)
            out |= definitely(block[:idx])
            if isinstance(parent, ast.For) and block is parent.body:
                out |= set(target_names(parent.target))
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return out
            cur = parent

    def live_after(self, node: ast.stmt, name: str) -> bool:
        """Whether code run after ``node`` may read ``name`` before binding it."""
        parents = self.parents()
        cur = node
        while True:
            parent, block = parents[id(cur)]
            idx = next(k for k, s in enumerate(block) if s is cur)
            found = scan(block[idx + 1:], name)
            if found is not None:
                return found == "read"
            if isinstance(parent, (ast.For, ast.While)) and block is parent.body:
                # the next iteration: the header, then the body up to and with ``cur``
                if isinstance(parent, ast.While) and (
                        name in loads([parent.test]) or name == self.going_flag(parent)):
                    return True  # (the helper tests a `while`'s break flag beside its test)
                found = scan(block[:idx + 1], name)
                if found is not None:
                    return found == "read"
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return False
            cur = parent

    def parents(self) -> dict[int, tuple[ast.AST, list]]:
        return self._parents

    def in_rewritten_loop(self, node: ast.stmt) -> bool:
        """Whether ``node`` is inside a loop :mod:`~s2s.backends.breaks` rewrote."""
        parents = self.parents()
        cur: ast.AST = node
        while id(cur) in parents:
            cur = parents[id(cur)][0]
            if isinstance(cur, (ast.For, ast.While)) and self.going_flag(cur):  # type: ignore[arg-type]
                return True
        return False

    def going_flag(self, node: ast.stmt) -> str | None:
        """The ``going`` flag of a loop whose ``break`` :mod:`~s2s.backends.breaks`
        rewrote (named on its first line), else None."""
        found = re.search(rf"{re.escape(MARK)}(\w+)", self.lines[node.lineno - 1])
        return found.group(1) if found else None

    def rebound_after(self, stmt: ast.stmt, name: str) -> bool:
        """Whether ``name`` is bound again after ``stmt`` in its block (a push of it
        is then the value at the push, not at the end of the block)."""
        found = self._parents.get(id(stmt))
        if found is None:
            return True
        block = found[1]
        k = next(i for i, b in enumerate(block) if b is stmt)
        return name in assigned_in(block[k + 1:])

    def effects(self, stmts: list[ast.stmt], where: str) -> tuple[dict, dict]:
        """The block's top-level ``tape.append(e)`` and ``v = tape.pop()``
        statements; anything else that changes state refuses the lowering."""
        pushes: dict[str, ast.stmt] = {}
        pops: dict[str, ast.stmt] = {}
        top = set()
        for s in stmts:
            tape, kind = tape_statement(s)
            if tape is None:
                continue
            table = pushes if kind == "append" else pops
            if tape in table:
                raise GiveUp(f"`{tape}` {kind}ed twice in {where}", [tape])
            table[tape] = s
            top.add(id(s.value if isinstance(s, ast.Expr) else s.value))  # type: ignore[attr-defined]
        involved = set(pushes) | set(pops)
        rebound = involved & set(assigned_in(stmts))
        if rebound:  # (`parts_bar = list(...)`: a list of another length each iteration)
            raise GiveUp(f"`{sorted(rebound)[0]}` bound again in {where}",
                         involved | tapes_in(stmts))
        for s in stmts:
            for n in walk_outside_defs(s):
                if isinstance(n, _FORBIDDEN):
                    raise GiveUp(f"{_WORDS.get(type(n), type(n).__name__)} in {where}",
                                  involved | tapes_in(stmts))
                if isinstance(n, ast.Call):
                    if id(n) in top:
                        continue
                    if any(k.arg in ("push", "pop", "extend") for k in n.keywords):
                        raise GiveUp(f"a loop with its own tapes in {where}",
                                      involved | tapes_in(stmts))
                    f = n.func
                    if isinstance(f, ast.Attribute) and f.attr in _LIST_METHODS and not (
                            isinstance(f.value, ast.Name) and f.value.id in ("np", self.lax)):
                        raise GiveUp(f"`.{f.attr}` of a list in {where}",
                                      involved | tapes_in(stmts))
                if isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(
                        n.ctx, ast.Store):
                    raise GiveUp(f"a write into a Python container in {where}",
                                  involved | tapes_in(stmts))
        return pushes, pops
