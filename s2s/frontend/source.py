"""Find a function's source, parse it with libcst, and locate nodes in the user's file.

Named functions come from ``inspect.getsourcelines``; a lambda is found by parsing its
whole file and picking the lambda that starts on the code object's first line.  Every
node can be mapped back to an absolute file, line and column for error messages.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import inspect
import linecache
import os
import sys
import textwrap
import threading
import weakref
from dataclasses import dataclass
from typing import Any

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from .. import syntax
from ..caches import LRU
from ..errors import Loc, SourceNotFoundError, UnsupportedSyntaxError
from . import parse_shared
from .synthesize import DISPLAY


@dataclass
class ParsedFunction:
    node: cst.FunctionDef | cst.Lambda
    filename: str
    positions: dict  # node -> CodeRange, relative to the parsed text
    line_offset: int  # add to a parsed line number to get the file's line number
    col_offset: int  # add to a parsed 0-based column to get the file's 0-based column
    lines: dict[int, str]  # file line number -> text
    source_hash: str
    # how deep its expressions nest (for the recursion room later passes need)
    depth: int = 0

    def loc(self, node: cst.CSTNode) -> Loc:
        pos = self.positions.get(node)
        if pos is None:
            if node is self.node:  # (a rebuilt tree without its position: the header)
                line = self.line_offset + 1
                return Loc(file=self.filename, line=line, col=self.col_offset + 1,
                           text=self.lines.get(line, ""))
            return self.loc(self.node)
        line = pos.start.line + self.line_offset
        return Loc(
            file=self.filename,
            line=line,
            col=pos.start.column + self.col_offset + 1,
            text=self.lines.get(line, ""),
        )


# parsed modules by (file, text hash): the most recently used only (s2s/caches.py)
_MODULE_CACHE: LRU[tuple[str, str], tuple[Any, Any]] = LRU(64)


# fn -> (its code object, its file's (mtime, size), the parse): transforming the same
# function again skips reading and parsing its file while neither has changed
_PARSED: "weakref.WeakKeyDictionary[Any, tuple[Any, Any, ParsedFunction]]" = (
    weakref.WeakKeyDictionary()
)
_PARSED_LOCK = threading.Lock()


def _file_stamp(filename: str) -> tuple[int, int] | None:
    try:
        st = os.stat(filename)
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_size)


def parse_function(fn: Any) -> ParsedFunction:
    """Parse the source of ``fn`` (a plain function or lambda).

    Memoized per function object while its code object and its file's modification
    time and size stay the same (an edited file is read and checked again)."""
    code = getattr(fn, "__code__", None)
    stamp = _file_stamp(code.co_filename) if code is not None else None
    if stamp is not None:
        try:
            hit = _PARSED.get(fn)
        except TypeError:  # not weak-referenceable
            hit = None
        if hit is not None and hit[0] is code and hit[1] == stamp:
            return hit[2]
    parsed = parse_shared.parsed(fn, code, stamp, _parse_function)  # (a lambda made again)
    if stamp is not None:
        try:
            with _PARSED_LOCK:
                _PARSED[fn] = (code, stamp, parsed)
        except TypeError:
            pass
    return parsed


def _parse_function(fn: Any) -> ParsedFunction:
    code = getattr(fn, "__code__", None)
    if code is None:
        raise SourceNotFoundError(
            f"{fn!r} is not a Python function, so it has no source to transform",
            hint="pass a function defined with `def` or `lambda` in a file",
        )
    filename = code.co_filename
    if fn.__name__ == "<lambda>":
        return _parse_lambda(fn, filename, code)
    try:
        # (the code object, not the function: inspect follows a decorator's
        # ``__wrapped__`` to the function it wraps, whose text is not the code
        # that runs when ``fn`` is called)
        src_lines, first = inspect.getsourcelines(
            code if hasattr(fn, "__wrapped__") else fn)
    except (OSError, TypeError) as exc:
        raise _no_source(fn, filename) from exc
    text = "".join(src_lines)
    dedented = textwrap.dedent(text)
    indent = _indent_of(src_lines[0]) - _indent_of(dedented.splitlines()[0] + "\n")
    depth = _checked_depth(dedented, filename, first - 1, indent, src_lines)
    return _with_room(depth, _parse_def, fn, code, src_lines, first, dedented, indent)


def _parse_def(fn: Any, code: Any, src_lines: list[str], first: int, dedented: str,
               indent: int, depth: int) -> ParsedFunction:
    filename = code.co_filename
    text = "".join(src_lines)
    try:
        wrapper = MetadataWrapper(cst.parse_module(dedented), unsafe_skip_copy=True)
    except cst.ParserSyntaxError as exc:
        raise _no_source(fn, filename) from exc
    positions = dict(wrapper.resolve(PositionProvider))
    node = next(
        (s for s in wrapper.module.body if isinstance(s, cst.FunctionDef)), None
    )
    if node is None or node.name.value != code.co_name:
        raise _no_source(fn, filename)
    lines = {first + i: ln.rstrip("\n") for i, ln in enumerate(src_lines)}
    if not _same_code(dedented, code):
        raise _stale(fn, filename, _def_loc(filename, node, positions, first, indent,
                                                     lines))
    node = _unfold_suites(node, positions)
    if HOIST_WALRUS:
        node = _hoist_walrus(node, positions)
    shown = DISPLAY.get(filename)  # (a def s2s wrote for your nested function)
    if shown is not None:
        filename, lines = shown[0], {**lines, **shown[1]}
        indent = indent if shown[2] is None else shown[2]
        if len(shown) > 3:
            positions = _shifted(positions, shown[3], first - 1)
    return ParsedFunction(
        node=node,
        filename=filename,
        positions=positions,
        line_offset=first - 1,
        col_offset=indent,
        lines=lines,
        source_hash=hashlib.sha256(text.encode()).hexdigest(),
        depth=depth,
    )


def _shifted(positions: dict, moved: dict, line_offset: int) -> dict:
    """``positions`` moved back onto the user's lines and columns where ``DISPLAY``
    says the text stands elsewhere (``{line: (the user's line, ((column, shift),
    ...))}``: a position at or right of ``column`` is ``shift`` columns further right)."""
    def back(pos: Any) -> Any:
        at = moved.get(pos.line + line_offset)
        if at is None:
            return pos
        shift = next((d for column, d in at[1] if pos.column >= column), 0)
        return CodePosition(at[0] - line_offset, max(pos.column - shift, 0))

    return {node: CodeRange(back(r.start), back(r.end)) for node, r in positions.items()}


# ---- deep expressions ----------------------------------------------------------------
#
# libcst's parser, its visitors and s2s's own passes recurse once or more per level of
# an expression: a sum of 400 terms nests 400 deep and ran out of Python's recursion
# limit (RecursionError from inside libcst), and libcst's native parser also uses the
# C stack per level.  Code that nests deeper than SAFE_DEPTH is read on a thread of its
# own with a stack sized for it, with the recursion limit raised for as long as s2s's
# passes over it run (and put back after); deeper than MAX_DEPTH is refused, located.

SAFE_DEPTH = 100  # nesting any pass handles within Python's default recursion limit
MAX_DEPTH = 3000  # nesting s2s reads at all (CPython compiles up to 3 x its recursion limit)
FRAMES_PER_LEVEL = 8  # Python frames a pass may use per level of nesting
_STACK_PER_LEVEL = 8 * 1024  # bytes of thread stack per level (libcst's parser, compile)

_LIMIT_LOCK = threading.Lock()
_LIMIT_STATE = {"users": 0, "saved": 0, "set": 0}
_STACK_LOCK = threading.Lock()
_AST_LOCK = threading.Lock()


def _frame_depth() -> int:
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


@contextlib.contextmanager
def recursion_room(depth: int):
    """Python's recursion limit raised, while the block runs, so that passes over code
    nesting ``depth`` levels deep have room above the current frame; no change for
    code no deeper than SAFE_DEPTH.  The limit is process-wide: concurrent users share
    one raise (the highest asked for), and the last one out puts the old limit back
    unless someone else changed it meanwhile."""
    if depth <= SAFE_DEPTH:
        yield
        return
    need = _frame_depth() + FRAMES_PER_LEVEL * min(depth, MAX_DEPTH) + 1000
    state = _LIMIT_STATE
    with _LIMIT_LOCK:
        if state["users"] == 0:
            state["saved"], state["set"] = sys.getrecursionlimit(), 0
        state["users"] += 1
        if need > sys.getrecursionlimit():
            sys.setrecursionlimit(need)
            state["set"] = need
    try:
        yield
    finally:
        with _LIMIT_LOCK:
            state["users"] -= 1
            if state["users"] == 0 and state["set"] and (
                    sys.getrecursionlimit() == state["set"]):
                try:
                    sys.setrecursionlimit(state["saved"])
                except RecursionError:  # (this thread is deeper than that now)
                    pass
                state["set"] = 0


def _with_room(depth: int, work: Any, *args: Any) -> Any:
    """``work(*args, depth)``: directly for shallow code; for deep code on a thread
    with a stack sized for ``depth`` levels and the recursion limit raised."""
    if depth <= SAFE_DEPTH:
        return work(*args, depth)
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            with recursion_room(depth):
                out["value"] = work(*args, depth)
        except BaseException as exc:  # handed to the caller's thread
            out["error"] = exc

    size = min(max(32 * 1024 * 1024, depth * _STACK_PER_LEVEL), 512 * 1024 * 1024)
    try:
        with _STACK_LOCK:  # (threading.stack_size is process-wide)
            old = threading.stack_size(size)
            try:
                thread = threading.Thread(target=run, name="s2s-deep-source", daemon=True)
                thread.start()
            finally:
                threading.stack_size(old)
    except (ValueError, RuntimeError, MemoryError):  # no such thread here: this one
        run()
    else:
        thread.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def parse_ast(text: str, mode: str = "exec") -> Any:
    """``ast.parse``, safe to call from several threads: CPython 3.11 keeps the AST
    constructor's recursion count in its module state, so two threads building trees
    at once can fail with SystemError ("AST constructor recursion depth mismatch";
    CPython gh-106905).  s2s's own calls take turns, and a failure is tried again."""
    for attempt in range(5):
        try:
            with _AST_LOCK:
                return syntax.parse(text, mode=mode)
        except SystemError:  # (another thread's ast use, not s2s's)
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


def literal_value(text: str) -> Any:
    """The value of a literal's text (``ast.literal_eval``, through ``parse_ast``:
    libcst's ``evaluated_value`` calls the ast module unguarded)."""
    return ast.literal_eval(parse_ast(text.strip(), "eval"))


def _nesting(text: str) -> tuple[int, Any]:
    """How deep ``text``'s syntax nests (in libcst's tree: an ``and``/``or`` chain is
    a chain of pairs there), and the deepest node's position (line, column offset of
    ``ast``, UTF-8 bytes), or (0, None) when Python cannot parse it alone."""
    try:
        tree = parse_ast(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 0, None
    except SystemError:  # (never seen: as deep as the text could be)
        return min(len(text), MAX_DEPTH), None
    deepest, where = 0, None
    stack: list[tuple[Any, int]] = [(tree, 0)]
    while stack:
        node, d = stack.pop()
        if d >= deepest and hasattr(node, "lineno"):  # (ties: the leftmost)
            deepest, where = d, (node.lineno, node.col_offset)
        step = len(node.values) if isinstance(node, ast.BoolOp) else 1
        stack.extend((child, d + step) for child in ast.iter_child_nodes(node))
    return deepest, where


def _checked_depth(text: str, filename: str, line_offset: int, col_offset: int,
                   src_lines: list[str]) -> int:
    """``text``'s nesting depth; a located error beyond MAX_DEPTH."""
    if len(text) < SAFE_DEPTH:  # (too short to nest deeper)
        return 0
    depth, where = _nesting(text)
    if depth <= MAX_DEPTH or where is None:
        return min(depth, MAX_DEPTH)
    line, byte_col = where
    row = src_lines[line - 1].rstrip("\n") if line - 1 < len(src_lines) else ""
    row_in_text = text.splitlines()[line - 1] if line - 1 < len(text.splitlines()) else ""
    col = len(row_in_text.encode()[:byte_col].decode(errors="replace")) + col_offset
    raise UnsupportedSyntaxError(
        f"this expression nests {depth} operations deep; s2s reads expressions up to "
        f"{MAX_DEPTH} deep (a sum of {MAX_DEPTH} terms)",
        Loc(filename, line_offset + line, col + 1, row),
        "split it into several assignments, e.g. partial sums `s1 = a + b + ...` then "
        "`s2 = s1 + ...`",
    )


class _Unfold(cst.CSTTransformer):
    """Writes each one-line body (`def f(x): return x`, `if c: y = 1; z = 2`) as an
    indented block of its statements, the one form the later passes read.  A rebuilt
    node keeps the source position of the node it replaces."""

    def __init__(self, positions: dict) -> None:
        self.positions = positions

    def on_leave(self, original: Any, updated: Any) -> Any:
        if isinstance(updated, cst.SimpleStatementSuite):
            lines = []
            for small in updated.body:
                line = cst.SimpleStatementLine(body=[small.with_changes(
                    semicolon=cst.MaybeSentinel.DEFAULT)])
                if small in self.positions:
                    self.positions[line] = self.positions[small]
                    self.positions[line.body[0]] = self.positions[small]
                lines.append(line)
            updated = cst.IndentedBlock(body=lines)
        if updated is not original and original in self.positions:
            self.positions[updated] = self.positions[original]
        return updated


def _has_suite(node: Any) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def visit_SimpleStatementSuite(self, _: Any) -> bool:
            found.append(True)
            return False

    node.visit(Finder())
    return bool(found)


def _unfold_suites(node: Any, positions: dict) -> Any:
    return node.visit(_Unfold(positions)) if _has_suite(node) else node


# `name := value` in statements and `if` tests is moved out, assigning first
HOIST_WALRUS = True


class _Walrus(cst.CSTTransformer):
    """Takes each ``name := value`` out of one statement's expression: ``name`` is
    read where it stood, and ``name = value`` runs first.  Only where that keeps the
    meaning: not inside ``and``/``or``, a conditional expression, a lambda or a
    comprehension (which evaluate parts conditionally, or in their own scope), and
    not when the statement reads ``name`` before the ``:=`` (it would see the new
    value).  What is left is refused by the normalizer, at its line."""

    def __init__(self, positions: dict, before: list[str]) -> None:
        self.positions = positions
        self.before = before  # names the statement reads before the current point
        self.hoisted: list[Any] = []

    def on_leave(self, original: Any, updated: Any) -> Any:
        new = super().on_leave(original, updated)
        if new is not original and isinstance(new, cst.CSTNode) and (
                original in self.positions) and new not in self.positions:
            self.positions[new] = self.positions[original]
        return new

    def visit_IfExp(self, _: Any) -> bool:
        return False

    def visit_BooleanOperation(self, _: Any) -> bool:
        return False

    def visit_Lambda(self, _: Any) -> bool:
        return False

    def visit_ListComp(self, _: Any) -> bool:
        return False

    def visit_SetComp(self, _: Any) -> bool:
        return False

    def visit_DictComp(self, _: Any) -> bool:
        return False

    def visit_GeneratorExp(self, _: Any) -> bool:
        return False

    def leave_NamedExpr(self, original: Any, updated: Any) -> Any:
        name = updated.target.value
        if name in self.before:
            return updated
        assign = cst.Assign(targets=[cst.AssignTarget(target=cst.Name(name))],
                            value=updated.value)
        line = cst.SimpleStatementLine(body=[assign])
        read = cst.Name(name, lpar=updated.lpar, rpar=updated.rpar)
        if original in self.positions:
            for new in (assign, line, read):
                self.positions[new] = self.positions[original]
        self.hoisted.append(line)
        return read


def _names_before_walrus(node: Any, positions: dict) -> dict[int, list[str]]:
    """For each ``:=`` in ``node`` (by id), the names written before it."""
    names: list[tuple[Any, str]] = []
    walruses: list[Any] = []

    class Finder(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            if n in positions:
                names.append((positions[n].start, n.value))

        def visit_NamedExpr(self, n: cst.NamedExpr) -> None:
            walruses.append(n)

    node.visit(Finder())
    out: dict[int, list[str]] = {}
    for w in walruses:
        start = positions[w].start if w in positions else None
        out[id(w)] = [v for p, v in names if start is None or (p.line, p.column) < (
            start.line, start.column)]
    return out


def _has_walrus(node: Any) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def visit_NamedExpr(self, _: Any) -> bool:
            found.append(True)
            return False

    node.visit(Finder())
    return bool(found)


def _take_walrus(part: Any, whole: Any, positions: dict) -> tuple[list[Any], Any]:
    """``part`` (an expression or small statement of the statement ``whole``) with
    its hoistable ``:=`` replaced by names, and the assignments to run first."""
    before = _names_before_walrus(whole, positions)
    out_lines: list[Any] = []

    class PerWalrus(_Walrus):
        def leave_NamedExpr(self, original: Any, updated: Any) -> Any:
            self.before = before.get(id(original), [])
            return super().leave_NamedExpr(original, updated)

    t = PerWalrus(positions, [])
    new = part.visit(t)
    out_lines += t.hoisted
    return out_lines, new


class _HoistWalrus(cst.CSTTransformer):
    def __init__(self, positions: dict) -> None:
        self.positions = positions

    def on_leave(self, original: Any, updated: Any) -> Any:
        new = super().on_leave(original, updated)
        if new is not original and isinstance(new, cst.CSTNode):
            self._keep(new, original)
        return new

    def _keep(self, new: Any, old: Any) -> Any:
        if old in self.positions:
            self.positions[new] = self.positions[old]
        return new

    def leave_If(self, original: Any, updated: Any) -> Any:
        # elif (n := ...): the assignment runs in the else branch, before the test
        orelse = updated.orelse
        if isinstance(orelse, cst.If) and _has_walrus(orelse.test):
            lines, test = _take_walrus(orelse.test, orelse.test, self.positions)
            if lines:
                inner = self._keep(orelse.with_changes(test=test), orelse)
                block = cst.IndentedBlock(body=[*lines, inner])
                updated = updated.with_changes(orelse=cst.Else(body=block))
        return self._keep(updated, original) if updated is not original else updated

    def leave_IndentedBlock(self, original: Any, updated: Any) -> Any:
        body: list[Any] = []
        changed = False
        for stmt in updated.body:
            if isinstance(stmt, cst.SimpleStatementLine) and _has_walrus(stmt):
                for small in stmt.body:
                    lines, new = _take_walrus(small, small, self.positions)
                    line = cst.SimpleStatementLine(body=[new.with_changes(
                        semicolon=cst.MaybeSentinel.DEFAULT)])
                    self._keep(line, stmt)
                    body += [*lines, line]
                changed = True
            elif isinstance(stmt, (cst.If, cst.For)):
                head = stmt.test if isinstance(stmt, cst.If) else stmt.iter
                lines, new_head = _take_walrus(head, head, self.positions) if _has_walrus(
                    head) else ([], head)
                if lines:
                    new = stmt.with_changes(test=new_head) if isinstance(stmt, cst.If) \
                        else stmt.with_changes(iter=new_head)
                    body += [*lines, self._keep(new, stmt)]
                    changed = True
                else:
                    body.append(stmt)
            else:
                body.append(stmt)
        if not changed:
            return updated
        return self._keep(updated.with_changes(body=body), original)


def _hoist_walrus(node: Any, positions: dict) -> Any:
    return node.visit(_HoistWalrus(positions)) if _has_walrus(node.body) else node


_FUTURE_FLAGS = 0
for _feature in __import__("__future__").all_feature_names:
    _FUTURE_FLAGS |= getattr(__import__("__future__"), _feature).compiler_flag


def _same_code(dedented: str, code: Any) -> bool:
    """Does this text (a ``def``, dedented) compile to the function's own bytecode?
    (A file edited after import holds text that is no longer the code that runs;
    transforming it would differentiate another function.)"""
    found = _compiled_as_defined(dedented, code, lambda_text=False)
    return found is not None and _code_equal(found, code)


def _compiled_as_defined(text: str, code: Any, lambda_text: bool) -> Any:
    """The code object ``text`` (a ``def`` statement, or a lambda expression) compiles
    to where it stands in a scope like the one ``code`` was defined in, or None.

    Free names compile differently at module level (globals) than in a closure
    (cells), so a function with free variables is compiled inside a function that
    binds each of them; a method (or a function reading ``__class__``, as
    zero-argument ``super()`` does) inside a class body of its class's name as well.
    Its instructions are then those of the code that runs if the text is the text
    it was compiled from.  Nothing is run."""
    free = [n for n in code.co_freevars if n != "__class__"]
    # a method compiles in its class's body: `self.__w` is mangled with the class's
    # name, and `super()` reads the class cell
    parts = getattr(code, "co_qualname", code.co_name).split(".")
    owner = parts[-2] if len(parts) > 1 and parts[-2] != "<locals>" else None
    in_class = owner is not None or "__class__" in code.co_freevars
    if lambda_text:
        # inside parentheses, a lambda's continuation lines need no indentation
        body = f"__s2s_value__ = (\n{text}\n)\n"
    else:
        body = text if text.endswith("\n") else text + "\n"
    source = body
    owner = owner if owner is not None and owner.isidentifier() else "__s2s_class__"
    if in_class:
        source = f"class {owner}:\n" + textwrap.indent(source, "    ")
    if free:
        source = (f"def __s2s_outer__():\n    {' = '.join(free)} = None\n"
                  + textwrap.indent(source, "    "))
    try:
        scope = compile(source, code.co_filename, "exec",
                        flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for name in ("__s2s_outer__" if free else None, owner if in_class else None):
        if name is not None:
            scope = _const_code(scope, name)
            if scope is None:
                return None
    return _const_code(scope, code.co_name)


def _const_code(scope: Any, name: str) -> Any:
    """The one code object named ``name`` among ``scope``'s constants, or None."""
    found = [c for c in scope.co_consts if hasattr(c, "co_code") and c.co_name == name]
    return found[0] if len(found) == 1 else None


_SKIP_OPS = {"RESUME", "PRECALL", "CACHE", "PUSH_NULL", "KW_NAMES", "NOP", "EXTENDED_ARG",
             "COPY_FREE_VARS", "MAKE_CELL"}


def _code_equal(a: Any, b: Any) -> bool:
    return _instructions(a) == _instructions(b)


def _instructions(code: Any) -> tuple:
    """The operations and operands of a code object, without what an interpreter may
    spell differently for the same source (caches, method-call forms, jump offsets)."""
    import dis

    out = []
    for ins in dis.get_instructions(code):
        if ins.opname in _SKIP_OPS:
            continue
        arg: Any = ins.argval
        if "JUMP" in ins.opname or ins.opname in ("FOR_ITER", "SEND"):
            arg = None
        elif hasattr(arg, "co_code"):
            arg = _instructions(arg)
        elif isinstance(arg, frozenset):  # (`x in {"a", "b"}`: its order is the hash
            arg = ("frozenset", sorted(map(repr, arg)))  # seed's of the process that
        else:  # wrote the bytecode, maybe another one's)
            arg = repr(arg)
        out.append(("LOAD_ATTR" if ins.opname == "LOAD_METHOD" else ins.opname, arg))
    return tuple(out)


def _by_columns(found: list, positions: Any, code: Any) -> list:
    """The lambdas among ``found`` (on one line, with the same parameters) whose span
    holds every position ``code``'s instructions have (Python 3.11's columns; an
    empty span, the frame's start, says nothing): the
    one of several on a line that this code was compiled from."""
    spots = [(line, col) for line, _, col, end in code.co_positions()  # (RESUME's:
             if line is not None and col is not None and end is not None and end > col]
    if not spots:
        return []

    def holds(node: Any) -> bool:
        span = positions[node]
        first, last = (span.start.line, span.start.column), (span.end.line, span.end.column)
        return all(first <= spot < last for spot in spots)

    return [node for node in found if holds(node)]


def _parse_lambda(fn: Any, filename: str, code: Any) -> ParsedFunction:
    all_lines = linecache.getlines(filename, fn.__globals__)
    if not all_lines:
        raise _no_source(fn, filename)
    text = "".join(all_lines)
    key = (filename, hashlib.sha256(text.encode()).hexdigest())
    depth = _DEPTHS.get(key)
    if depth is None:  # (the whole file is read: its deepest expression counts)
        depth = _DEPTHS[key] = _checked_depth(text, filename, 0, 0, all_lines)
    return _with_room(depth, _parse_lambda_in, fn, code, all_lines, key)


_DEPTHS: dict[tuple[str, str], int] = {}  # (file, text hash) -> nesting depth


def _parse_lambda_in(fn: Any, code: Any, all_lines: list[str], key: Any,
                     depth: int) -> ParsedFunction:
    filename = code.co_filename
    text = "".join(all_lines)
    if key not in _MODULE_CACHE:
        try:
            wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
        except cst.ParserSyntaxError as exc:
            raise _no_source(fn, filename) from exc
        _MODULE_CACHE[key] = (wrapper, dict(wrapper.resolve(PositionProvider)))
    wrapper, shared_positions = _MODULE_CACHE[key]
    positions = dict(shared_positions)  # this function may add synthesized nodes
    params = list(code.co_varnames[: code.co_argcount])
    found: list[cst.Lambda] = []

    class Finder(cst.CSTVisitor):
        def visit_Lambda(self, node: cst.Lambda) -> None:
            if positions[node].start.line == code.co_firstlineno:
                names = [p.name.value for p in node.params.params]
                if names == params:
                    found.append(node)

    wrapper.module.visit(Finder())
    if len(found) > 1:  # (`ACTS = [lambda z: np.tanh(z), lambda z: z * z]`: by column)
        found = _by_columns(found, positions, code) or found
    if len(found) != 1:
        raise SourceNotFoundError(
            f"cannot tell which lambda on line {code.co_firstlineno} of {filename} "
            f"is {fn!r}" if found else f"cannot find the source of {fn!r}",
            hint="give the function a name with `def` on its own lines",
        )
    node = found[0]
    lines = {i + 1: ln.rstrip("\n") for i, ln in enumerate(all_lines)}
    if not _same_lambda(node, code):
        start = positions[node].start
        raise _stale(fn, filename, Loc(filename, start.line, start.column + 1,
                                       lines.get(start.line, "")))
    start = positions[node].start.line
    end = positions[node].end.line
    snippet = "\n".join(lines[i] for i in range(start, end + 1))
    return ParsedFunction(
        node=node,
        filename=filename,
        positions=positions,
        line_offset=0,
        col_offset=0,
        lines=lines,
        source_hash=hashlib.sha256(snippet.encode()).hexdigest(),
        depth=depth,
    )


def _same_lambda(node: cst.Lambda, code: Any) -> bool:
    """Does the lambda's text compile to the code that runs?  (As ``_same_code`` for
    a ``def``; a lambda reading variables of the function it was made in, or
    a loop variable, is compiled where those are cells, as they are in the code that
    runs.)"""
    text = cst.Module(body=[]).code_for_node(node)
    found = _compiled_as_defined(text, code, lambda_text=True)
    return found is not None and _code_equal(found, code)


def _def_loc(filename: str, node: Any, positions: dict, first: int, indent: int,
             lines: dict[int, str]) -> Loc:
    """Where a ``def`` statement's ``def`` keyword is (below its decorators)."""
    pos = positions.get(node.name)
    line = first if pos is None else pos.start.line + first - 1
    text = lines.get(line, "")
    col = text.find("def ")
    return Loc(filename, line, (col if col >= 0 else indent) + 1, text)


def verified_source(fn: Any) -> str:
    """The dedented text of ``fn``'s ``def``, checked to compile to the code that runs
    (as a transformed function's is): for code s2s reads and inlines itself, such as
    a primitive's rules."""
    code = fn.__code__
    try:
        src_lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise _no_source(fn, code.co_filename) from exc
    text = textwrap.dedent("".join(src_lines))
    if not _same_code(text, code):
        k = next((i for i, ln in enumerate(src_lines) if ln.lstrip().startswith(
            ("def ", "async def "))), 0)
        line = src_lines[k].rstrip("\n")
        raise _stale(fn, code.co_filename, Loc(code.co_filename, first + k,
                                               _indent_of(line) + 1, line))
    return text


def _stale(fn: Any, filename: str, loc: Loc) -> SourceNotFoundError:
    """The error for a function whose file (or notebook cell) no longer holds the code
    that runs, located at the text found where that code was defined."""
    if getattr(fn, "__name__", "") == "<lambda>":
        what = f"the lambda on line {fn.__code__.co_firstlineno} of {filename}"
    else:
        what = f"`{getattr(fn, '__qualname__', fn)}` in {filename}"
    cell = filename.startswith("<") or not os.path.exists(filename)
    return SourceNotFoundError(
        f"the source of {what} is not the code that runs: "
        + ("its cell was edited after it ran" if cell
           else "the file changed after it was imported"),
        loc,
        hint="run the cell again, then transform again" if cell else
        "reload the module (importlib.reload) or restart, then transform again",
    )


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def _no_source(fn: Any, filename: str) -> SourceNotFoundError:
    return SourceNotFoundError(
        f"the source of {getattr(fn, '__qualname__', fn)!r} cannot be found "
        f"(it was defined in {filename!r}, not in a file s2s can read)",
        hint="define the function in a .py file (or a notebook cell) and import it; "
        "functions typed at the interactive prompt or built with exec() "
        "have no source",
    )


def emitted(fn: Any) -> bool:
    """Is ``fn`` code s2s emitted (a derivative transformed again)?"""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith("<s2s:")

