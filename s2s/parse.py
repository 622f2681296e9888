"""Find a function's source, parse it with libcst, and locate nodes in the user's file.

Named functions come from ``inspect.getsourcelines``; a lambda is found by parsing its
whole file and picking the lambda that starts on the code object's first line.  Every
node can be mapped back to an absolute file, line and column for error messages.
"""

from __future__ import annotations

import hashlib
import inspect
import linecache
import textwrap
from dataclasses import dataclass
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .errors import Loc, SourceNotFoundError


@dataclass
class ParsedFunction:
    node: cst.FunctionDef | cst.Lambda
    filename: str
    positions: dict  # node -> CodeRange, relative to the parsed text
    line_offset: int  # add to a parsed line number to get the file's line number
    col_offset: int  # add to a parsed 0-based column to get the file's 0-based column
    lines: dict[int, str]  # file line number -> text
    source_hash: str

    def loc(self, node: cst.CSTNode) -> Loc:
        pos = self.positions.get(node)
        if pos is None:
            return self.loc(self.node)
        line = pos.start.line + self.line_offset
        return Loc(
            file=self.filename,
            line=line,
            col=pos.start.column + self.col_offset + 1,
            text=self.lines.get(line, ""),
        )


_MODULE_CACHE: dict[tuple[str, str], tuple[Any, Any]] = {}


def parse_function(fn: Any) -> ParsedFunction:
    """Parse the source of ``fn`` (a plain function or lambda)."""
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
        src_lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise _no_source(fn, filename) from exc
    text = "".join(src_lines)
    dedented = textwrap.dedent(text)
    indent = _indent_of(src_lines[0]) - _indent_of(dedented.splitlines()[0] + "\n")
    try:
        wrapper = MetadataWrapper(cst.parse_module(dedented), unsafe_skip_copy=True)
    except cst.ParserSyntaxError as exc:
        raise _no_source(fn, filename) from exc
    positions = dict(wrapper.resolve(PositionProvider))
    node = next(
        (s for s in wrapper.module.body if isinstance(s, cst.FunctionDef)), None
    )
    if node is None or node.name.value != fn.__name__:
        raise _no_source(fn, filename)
    lines = {first + i: ln.rstrip("\n") for i, ln in enumerate(src_lines)}
    return ParsedFunction(
        node=node,
        filename=filename,
        positions=positions,
        line_offset=first - 1,
        col_offset=indent,
        lines=lines,
        source_hash=hashlib.sha256(text.encode()).hexdigest(),
    )


def _parse_lambda(fn: Any, filename: str, code: Any) -> ParsedFunction:
    all_lines = linecache.getlines(filename, fn.__globals__)
    if not all_lines:
        raise _no_source(fn, filename)
    text = "".join(all_lines)
    key = (filename, hashlib.sha256(text.encode()).hexdigest())
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
    if len(found) != 1:
        raise SourceNotFoundError(
            f"cannot tell which lambda on line {code.co_firstlineno} of {filename} "
            f"is {fn!r}" if found else f"cannot find the source of {fn!r}",
            hint="give the function a name with `def` on its own lines",
        )
    node = found[0]
    lines = {i + 1: ln.rstrip("\n") for i, ln in enumerate(all_lines)}
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
