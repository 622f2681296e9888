"""Emitted code: a tiny statement tree, rendered to text, formatted with black, checked.

Transforms produce :class:`Line`, :class:`Comment` and :class:`Block` items; this
module renders them, formats the module with black, and holds the executable output
invariants: the text compiles, re-parses with libcst, and a second black pass leaves it
unchanged.  A violation is an internal error that shows the offending source.

Checking the invariants costs as much as formatting again, so a transform pays it only
where ``S2S_CHECK_EMITTED=1`` is set (the test suite sets it, so every emission the suite
makes is checked); users' transforms pay for black once.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import linecache
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from .. import syntax


@dataclass
class Line:
    """One simple statement; knows which names it reads and binds.

    ``keep`` marks a statement run for its effect (a tape push): dead-code removal
    never drops it.
    """

    text: str
    uses: set[str] = field(default_factory=set)
    defines: set[str] = field(default_factory=set)
    keep: bool = False

    def __post_init__(self) -> None:
        tree = syntax.parse(self.text)
        stmt = tree.body[0]
        loads: set[str] = set()
        stores: set[str] = set()
        # a comprehension's own variables are neither read nor bound by the statement
        local = {n.id for c in ast.walk(stmt) if isinstance(c, ast.comprehension)
                 for n in ast.walk(c.target) if isinstance(n, ast.Name)}
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and node.id not in local:
                (stores if isinstance(node.ctx, ast.Store) else loads).add(node.id)
        if isinstance(stmt, ast.AugAssign) or (
            isinstance(stmt, ast.Assign)
            and any(isinstance(t, ast.Subscript) for t in stmt.targets)
        ):
            # x[i] += v reads and writes x
            root = stmt.target if isinstance(stmt, ast.AugAssign) else stmt.targets[0]
            while isinstance(root, (ast.Subscript, ast.Attribute)):
                root = root.value
            if isinstance(root, ast.Name):
                loads.add(root.id)
                stores.add(root.id)
        self.uses = loads
        self.defines = stores


@dataclass
class Comment:
    text: str


@dataclass
class Block:
    """A compound statement: ``if test:`` (with an optional else body) or ``for``."""

    header: str
    body: list[Any]
    orelse: list[Any]
    uses: set[str] = field(default_factory=set)
    defines: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        stmt = syntax.parse(self.header + "\n    pass").body[0]
        if isinstance(stmt, (ast.If, ast.While)):
            head = [stmt.test]
        else:
            head = [stmt.target, stmt.iter]
        names = [n for h in head for n in ast.walk(h) if isinstance(n, ast.Name)]
        self.uses = {n.id for n in names if isinstance(n.ctx, ast.Load)}
        self.defines = {n.id for n in names if isinstance(n.ctx, ast.Store)}

    @property
    def is_loop(self) -> bool:
        return self.header.startswith(("for ", "while "))


_CONTEXT = "if with_context("  # the test of the `if` a kept `with` is lowered to


def render(items: list[Any], indent: int) -> list[str]:
    pad = "    " * indent
    out: list[str] = []
    for item in items:
        if isinstance(item, Line):
            out.append(pad + item.text)
        elif isinstance(item, Comment):
            out.append(pad + "# " + item.text)
        elif isinstance(item, Block) and item.header.startswith(_CONTEXT):
            # a `with` the function wrote (frontend/contexts.py): kept as a `with`,
            # the `if`'s other branch (never taken: zeros, or nothing) dropped
            out.append(pad + "with " + item.header[len(_CONTEXT):-2] + ":")
            out += render(item.body, indent + 1) or [pad + "    pass"]
        elif isinstance(item, Block):
            out.append(pad + item.header)
            out += render(item.body, indent + 1) or [pad + "    pass"]
            if item.orelse:
                out.append(pad + "else:")
                out += render(item.orelse, indent + 1)
    # a trailing comment with nothing under it says nothing
    while out and out[-1].lstrip().startswith("#"):
        out.pop()
    return out


def render_function(name: str, signature: str, items: list[Any]) -> str:
    lines = [f"def {name}({signature}):"] + render(items, 1)
    return "\n".join(lines) + "\n"


class EmitError(AssertionError):
    """Emitted code broke an output invariant: an s2s bug, never the user's."""


CHECK_INVARIANTS = os.environ.get("S2S_CHECK_EMITTED", "") not in ("", "0")


def format_module(text: str) -> str:
    """Format with black (and check the output invariants where CHECK_INVARIANTS).

    Most emitted modules are short simple statements that black would change in two
    ways only (``x ** 2`` hugged to ``x**2``, single quotes made double); those are
    done here and black is skipped (``_black_already``).  Anything else (a long line,
    a string with escapes, an inline comment, a bracket black might rewrap...) goes
    through black.  Under the test suite every result is checked against black.
    """
    quick = _black_already(text)
    if quick is not None:
        if CHECK_INVARIANTS:
            _check_once(quick)
        return quick
    if CHECK_INVARIANTS:  # the suite emits many modules more than once: black once each
        return _format_and_check_once(text)
    return _format(text)


_BLACK: list[Any] = []  # black, once imported
_BLACK_LOCK = threading.Lock()


def black_module() -> Any:
    """black, imported on first use (the slowest import s2s has) by one thread at a
    time.  The lock orders s2s's own imports only: black is compiled by mypyc, whose
    module enters ``sys.modules`` before its initialisation ends and without the
    ``__spec__._initializing`` mark, so any other thread's ``import black`` meanwhile
    takes the half-made module without waiting (``module 'black' has no attribute
    'Mode'``).  A thread s2s starts (the specializer's) could race the caller's own
    ``import black``; the caller imports it before starting one (api/transformed)."""
    if not _BLACK:
        with _BLACK_LOCK:
            if not _BLACK:
                import black

                _BLACK.append(black)
    return _BLACK[0]


@functools.lru_cache(maxsize=256)  # (a pure function of the text: a function made
def _format(text: str) -> str:  # again, a lambda per step, emits the same text)
    black = black_module()
    mode = black.Mode()
    try:
        formatted = black.format_str(text, mode=mode)
    except Exception as exc:  # black raises its own classes for invalid input
        raise EmitError(f"s2s emitted code black cannot format ({exc}):\n{text}") from exc
    return formatted


# Under CHECK_INVARIANTS only (the test suite): a text is formatted and checked once per
# process; the checks are functions of the text alone, and lru_cache keeps no failures.
@functools.lru_cache(maxsize=2048)
def _format_and_check_once(text: str) -> str:
    formatted = _format(text)
    _check_once(formatted)
    return formatted


@functools.lru_cache(maxsize=2048)
def _check_once(text: str) -> None:
    check_invariants(text)


_SIMPLE = r"(?:[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*|[0-9]+(?:\.[0-9]*)?)"
# (not after a unary minus: black writes -x ** 2 as -(x**2))
_POWER = re.compile(r"(?<![\w.)\]'\"+~-])(" + _SIMPLE + r") \*\* (-?" + _SIMPLE + r")(?![\w.(\[])")
_STRING = re.compile(r"'([^'\"\\\n]*)'")
_RISKY = re.compile(
    r"\\|;|\"\"\"|'''|,\s*[\]}]|\b[0-9]+[EXJL]|[0-9]e\+|\blambda\b|\b[rbfuRBFU]+['\"]|\t"
)  # (black writes 1e+308, as repr does, 1e308)


def _black_already(text: str) -> str | None:
    """The text as black would write it, where that is sure without running black;
    None where black must run."""
    out = []
    lines = text.split("\n")
    if not text.endswith("\n") or (len(lines) > 1 and lines[-2] == ""):
        return None
    for line in lines[:-1]:
        stripped = line.strip()
        if not stripped:
            out.append("")
            continue
        if line != line.rstrip() or len(line) > 88:
            return None
        if stripped.startswith("#"):
            if not stripped.startswith("# ") and stripped != "#":
                return None
            out.append(line)
            continue
        if "#" in line or _RISKY.search(line):
            return None
        line = _STRING.sub(lambda m: '"' + m.group(1) + '"', line)
        if "'" in line:
            return None
        line = _POWER.sub(r"\1**\2", line)
        if " ** " in line or len(line) > 88:
            return None
        if ",)" in line and re.search(r"\([^(),]*,\)", line) is None:
            return None
        if re.search(r",\s*=", line):
            return None  # a bare tuple target: black parenthesizes it
        body = line.lstrip()
        for head in ("return (", "= (", " in (", "if (", "while ("):
            at = body.find(head)
            if at >= 0 and _closes_at_end(body[at + len(head) - 1:]):
                return None  # black drops parentheses around a whole right-hand side
        if ":" in line and "[" in line and not _simple_slices(line):
            return None  # a slice with a complex bound: black spaces the colon
        out.append(line)
    # blank lines: only between top-level statements, never two blank runs of >2
    run = 0
    for i, line in enumerate(out):
        if line == "":
            run += 1
            nxt = next((ln for ln in out[i + 1:] if ln != ""), "")
            if run > 2 or nxt.startswith((" ", "\t")) or i == 0:
                return None
        else:
            if run and line.startswith("def ") and run != 2:
                return None
            run = 0
    return "\n".join(out) + "\n"


_INNERMOST = re.compile(r"\[([^\[\]]*)\]")
_SIMPLE_BOUND = re.compile(r"^-?\w*$")  # (black spaces an attribute bound too)


def _simple_slices(line: str) -> bool:
    """Are all slice bounds in the line names, numbers or attributes (where black
    leaves the colon unspaced)?  Brackets are read innermost first."""
    while True:
        m = _INNERMOST.search(line)
        if m is None:
            return True
        content = m.group(1)
        if ":" in content:
            for part in content.split(","):
                if ":" in part and not all(_SIMPLE_BOUND.match(b.strip())
                                           for b in part.split(":")):
                    return False
        line = line[:m.start()] + "_" + line[m.end():]


def _closes_at_end(s: str) -> bool:
    """Does the parenthesis opening ``s`` close at its last character?"""
    depth = 0
    for k, ch in enumerate(s):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return k == len(s) - 1
    return False


def check_invariants(text: str) -> None:
    """Compiles, re-parses with libcst, stable under a second black pass."""
    try:
        compile(text, "<s2s-check>", "exec")
    except SyntaxError as exc:
        raise EmitError(f"emitted code does not compile ({exc}):\n{text}") from exc
    import libcst as cst  # loaded with the frontend, not by `import s2s`

    try:
        cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise EmitError(f"emitted code does not re-parse with libcst:\n{text}") from exc
    black = black_module()
    again = black.format_str(text, mode=black.Mode())
    if again != text:
        raise EmitError(f"emitted code is not stable under black:\n{text}")


def compile_module(text: str, namespace: dict[str, Any], tag: str) -> dict[str, Any]:
    """Execute module text with a fake filename registered in linecache.

    Registering the text makes tracebacks, ``inspect.getsource`` and debuggers show
    the emitted lines.
    """
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    filename = f"<s2s:{tag}:{digest}>"
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    code = compile(text, filename, "exec")
    exec(code, namespace)
    return namespace
