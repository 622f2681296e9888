"""``break`` and ``continue`` rewritten with flags, so the control pass lowers the loop.

:mod:`s2s.backends.control` lowers a loop by turning its body into a function that
``lax.fori_loop``/``lax.scan``/``lax.while_loop`` calls once per iteration: a jump out
of that function cannot be expressed.  Before it runs, this pass rewrites each ``for``
over a ``range`` and each ``while`` whose own body jumps (not a nested loop's) into
the same loop without jumps::

    for i in range(n):                     going = True
        y = np.sin(y)                      for i in range(n):  # break flag: going
        if np.sum(y) > 4.0:                    if going:
            y = y * 0.5            ->              y = np.sin(y)
            break                                  if np.sum(y) > 4.0:
        y = y + 0.1                                    y = y * 0.5
                                                       going = False  # break
                                                   if going:
                                                       y = y + 0.1

* ``break`` sets the loop's ``going`` flag (carried from one iteration to the next);
  a ``for`` body runs under ``if going:``, so once it is False the remaining
  iterations change nothing (the lowered ``fori_loop``/``scan`` runs them all, masked
  by that ``lax.cond``); a ``while`` loop's helper tests ``going`` beside the test;
* ``continue`` sets ``trip_going`` (True at the start of each iteration);
* the statements after one that may jump run under ``if <flag>:``.

The loop's first line keeps ``# break flag: <going>``: the control pass hands the
flag's position in the carry to the helper (``going=k``), which, run the Python way
(concrete values), stops at the first iteration that breaks, exactly as ``break``
does, so a tape gets one entry per iteration that ran.

Only jumps nested in ``if`` statements are rewritten (not inside ``try``/``with``, or
an ``elif`` chain), and only in loops the control pass could lower otherwise (no
``return``/``raise``/``yield`` inside, no ``else:`` on the loop).  A rewritten loop
that the control pass still keeps Python is restored as it was (:func:`lower_control`
starts again without rewriting it), so what stays Python keeps its ``break``.
"""

from __future__ import annotations

import ast
from typing import Iterable

from .. import syntax

__all__ = ["MARK", "rewrite_jumps"]

MARK = "# break flag: "
_NOT_NESTED = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef,
               ast.Lambda, ast.ClassDef)
_OTHER_EXITS = (ast.Return, ast.Raise, ast.Yield, ast.YieldFrom, ast.Await)


_SHAPE_READS = {"len", "shape", "ndim", "size"}


def shape_check(node: ast.AST) -> bool:
    """``if <a test of shapes>: raise <error>`` with no ``else``: a check the emitted
    code makes of its values' shapes (vmap's ``if np.shape(a)[1:] != np.shape(b)[1:]:
    raise if_shapes_differ(...)`` at an ``if``'s join).  Shapes are static under
    ``jax.jit``, so it runs as Python while JAX traces, inside a lowered loop's body
    as well: it is no control flow for the lowering (a ``raise`` kept the loop around
    it Python, and a ``break`` there then read a traced test).  The test may read a
    name only as the argument of ``len``/``np.shape``/``np.ndim``/``np.size``."""
    if not (isinstance(node, ast.If) and not node.orelse and len(node.body) == 1
            and isinstance(node.body[0], ast.Raise)):
        return False

    def static(e: ast.AST) -> bool:
        if isinstance(e, ast.Constant):
            return True
        if isinstance(e, ast.Call):
            f = e.func
            name = f.id if isinstance(f, ast.Name) else f.attr if (
                isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                and f.value.id == "np") else None
            return name in _SHAPE_READS and not e.keywords and len(e.args) == 1 and (
                isinstance(e.args[0], ast.Name) or static(e.args[0]))
        if isinstance(e, ast.BoolOp):
            return all(static(v) for v in e.values)
        if isinstance(e, ast.UnaryOp):
            return static(e.operand)
        if isinstance(e, ast.Compare):
            return static(e.left) and all(static(c) for c in e.comparators)
        if isinstance(e, ast.Subscript):
            return static(e.value) and static(e.slice)
        if isinstance(e, ast.Slice):
            return all(p is None or static(p) for p in (e.lower, e.upper, e.step))
        if isinstance(e, ast.Tuple):
            return all(static(v) for v in e.elts)
        return False

    return static(node.test)


def _owned(node: ast.AST) -> Iterable[ast.AST]:
    """Nodes inside ``node`` that belong to it: not inside a nested loop or function,
    nor inside a shape check (:func:`shape_check`: it runs while JAX
    traces, and its ``raise`` is no exit of the loop's lowering)."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, _NOT_NESTED) and not shape_check(child):
            yield from _owned(child)


def _jumps(node: ast.AST) -> list[ast.stmt]:
    """``break``/``continue`` statements ``node`` owns (``node`` itself included)."""
    if isinstance(node, (ast.Break, ast.Continue)):
        return [node]  # type: ignore[list-item]
    if isinstance(node, _NOT_NESTED):  # a nested loop's jumps are its own
        return []
    return [n for n in _owned(node) if isinstance(n, (ast.Break, ast.Continue))]


def range_of(it: ast.expr) -> tuple | None:
    """``range(...)`` or ``reversed(range(...))``: ((start, stop, step), reversed)."""
    reverse = False
    if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
            and it.func.id == "reversed" and len(it.args) == 1 and not it.keywords):
        it, reverse = it.args[0], True
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
            and it.func.id == "range" and 1 <= len(it.args) <= 3 and not it.keywords
            and not any(isinstance(a, ast.Starred) for a in it.args)):
        return None
    a = it.args
    if len(a) == 1:
        return (None, a[0], None), reverse
    return (a[0], a[1], a[2] if len(a) == 3 else None), reverse


def _range_loop(node: ast.AST) -> bool:
    return (isinstance(node, ast.For) and isinstance(node.target, ast.Name)
            and range_of(node.iter) is not None)


def _candidate(loop: ast.AST, lines: list[str]) -> bool:
    """A loop this pass rewrites: its own body jumps, only from inside ``if``s."""
    if not (_range_loop(loop) or isinstance(loop, ast.While)):
        return False
    if loop.orelse:  # type: ignore[attr-defined]
        return False
    if not any(_jumps(s) for s in loop.body):  # type: ignore[attr-defined]
        return False
    if any(isinstance(n, _OTHER_EXITS) for n in _owned(loop)):
        return False
    return _only_in_ifs(loop.body, lines)  # type: ignore[attr-defined]


def _only_in_ifs(block: list[ast.stmt], lines: list[str]) -> bool:
    for s in block:
        if isinstance(s, (ast.Break, ast.Continue)) or not _jumps(s):
            continue
        if not isinstance(s, ast.If):
            return False  # a jump inside try/with/match
        if s.orelse and _is_elif(s, lines):
            return False
        if not (_only_in_ifs(s.body, lines) and _only_in_ifs(s.orelse, lines)):
            return False
    return True


def _is_elif(node: ast.If, lines: list[str]) -> bool:
    first = node.orelse[0]
    return isinstance(first, ast.If) and \
        lines[first.lineno - 1].lstrip().startswith("elif")


def _loops(tree: ast.AST) -> list[ast.stmt]:
    return sorted((n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))),
                  key=lambda n: (n.lineno, n.col_offset))


def all_names(tree: ast.AST) -> set[str]:
    """Every name a tree binds or reads (names, functions, classes, parameters)."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
    return out


def rewrite_jumps(text: str,
                  excluded: Iterable[int] = ()) -> tuple[str, dict[str, int]]:
    """``text`` with its jumping loops rewritten (see the module docstring), and for
    each rewritten loop its marker's flag name -> the loop's number among the loops
    this pass rewrites, in reading order (``excluded`` numbers are left alone)."""
    excluded = set(excluded)
    tree = syntax.parse(text)
    lines = text.splitlines(keepends=True)
    remaining = [k for k, loop in enumerate(_loops(tree)) if _candidate(loop, lines)]
    taken = all_names(tree)
    flags: dict[str, int] = {}
    while True:
        todo = [k for k in remaining if k not in excluded]
        if not todo:
            return text, flags
        number = todo[-1]  # the last in reading order: earlier lines stay put
        candidates = [loop for loop in _loops(tree) if _candidate(loop, lines)]
        loop = candidates[remaining.index(number)]
        first, last, new, flag = _Rewrite(lines, loop, taken).run()
        flags[flag] = number
        lines[first:last] = new
        text = "".join(lines)
        remaining.remove(number)
        tree = syntax.parse(text)
        lines = text.splitlines(keepends=True)


def _fresh(taken: set[str], base: str) -> str:
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def _header_end(lines: list[str], after: ast.AST) -> int:
    """1-based number of the line holding the header's colon."""
    k = after.end_lineno  # type: ignore[attr-defined]
    while not lines[k - 1].split("#", 1)[0].rstrip().endswith(":"):
        k += 1
    return k


class _Rewrite:
    def __init__(self, lines: list[str], loop: ast.For | ast.While,
                 taken: set[str]) -> None:
        self.lines = lines
        self.loop = loop
        jumps = [j for s in loop.body for j in _jumps(s)]
        self.breaks = any(isinstance(j, ast.Break) for j in jumps)
        self.continues = any(isinstance(j, ast.Continue) for j in jumps)
        self.going = _fresh(taken, "going") if self.breaks else None
        self.trip = _fresh(taken, "trip_going") if self.continues else None
        self.guard = self.trip or self.going

    def run(self) -> tuple[int, int, list[str], str]:
        loop, lines = self.loop, self.lines
        ind = " " * loop.col_offset
        test = loop.iter if isinstance(loop, ast.For) else loop.test
        head = _header_end(lines, test)
        flag = self.going or self.trip
        out = [f"{ind}{self.going} = True\n"] if self.going else []
        header = lines[loop.lineno - 1:head]
        header[0] = f"{header[0].rstrip(chr(10))}  {MARK}{flag}\n"
        out += header
        body_col = loop.body[0].col_offset
        shift = 0
        if self.going and isinstance(loop, ast.For):
            out.append(f"{' ' * body_col}if {self.going}:\n")
            shift = 4
        if self.trip:
            out.append(f"{' ' * (body_col + shift)}{self.trip} = True\n")
        out += self.block(loop.body, head + 1, shift)
        return loop.lineno - 1, loop.end_lineno, out, flag  # type: ignore[return-value]

    def copy(self, first: int, last: int, shift: int) -> list[str]:
        """Lines ``first..last`` (1-based, inclusive), indented ``shift`` more."""
        pad = " " * shift
        return [pad + line if line.strip() else line
                for line in self.lines[first - 1:last]]

    def block(self, stmts: list[ast.stmt], start: int, shift: int) -> list[str]:
        out: list[str] = []
        for k, s in enumerate(stmts):
            pad = " " * (s.col_offset + shift)
            if isinstance(s, (ast.Break, ast.Continue)):
                out += self.copy(start, s.lineno - 1, shift)
                if isinstance(s, ast.Break):
                    out.append(f"{pad}{self.going} = False  # break\n")
                    if self.trip:
                        out.append(f"{pad}{self.trip} = False\n")
                else:
                    out.append(f"{pad}{self.trip} = False  # continue\n")
                return out  # what follows a jump in its block never runs
            if not _jumps(s):
                out += self.copy(start, s.end_lineno, shift)  # type: ignore[arg-type]
                start = s.end_lineno + 1  # type: ignore[operator]
                continue
            assert isinstance(s, ast.If)
            head = _header_end(self.lines, s.test)
            out += self.copy(start, head, shift)
            out += self.block(s.body, head + 1, shift)
            if s.orelse:
                else_line = self._else_line(s)
                body_end: int = s.body[-1].end_lineno  # type: ignore[assignment]
                out += self.copy(body_end + 1, else_line, shift)
                out += self.block(s.orelse, else_line + 1, shift)
            rest = stmts[k + 1:]
            if any(not isinstance(r, ast.Pass) for r in rest):
                out.append(f"{pad}if {self.guard}:\n")
                end: int = s.end_lineno  # type: ignore[assignment]
                out += self.block(rest, end + 1, shift + 4)
            return out
        return out

    def _else_line(self, node: ast.If) -> int:
        body_end: int = node.body[-1].end_lineno  # type: ignore[assignment]
        for k in range(body_end + 1, node.orelse[0].lineno):
            line = self.lines[k - 1]
            if line.split("#", 1)[0].strip() == "else:" and \
                    len(line) - len(line.lstrip()) == node.col_offset:
                return k
        raise AssertionError("no else: line")  # pragma: no cover - _is_elif refused it
