"""``ast.parse`` for every part of s2s, one call at a time.

CPython 3.11 keeps the depth counter of its AST constructor (the step of
``ast.parse`` that builds the Python node objects) in state shared by all threads: two
threads parsing at once can raise ``SystemError: AST constructor recursion depth
mismatch`` in either (CPython issue gh-106905, and reports against pytest and others).
s2s parses on the caller's thread and, while it specializes in the background, on its
own: ``s2s ledger matrix`` rejected a valid record 1 to 3 times in 39 that way.  Every
``ast.parse`` in s2s goes through :func:`parse`, which holds one lock, so s2s's threads
never parse at the same time.  (Code outside s2s parsing on another thread at the
same moment raises in either thread: s2s's parse is then tried again, up to five
times.)
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import threading
import tokenize
from typing import Any

_LOCK = threading.RLock()


def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec",
          **kwargs: Any) -> Any:
    """:func:`ast.parse`, serialised with every other parse s2s makes; a parse that
    meets another thread's (code outside s2s: the module docstring) is tried again."""
    for attempt in range(5):
        try:
            with _LOCK:
                return ast.parse(source, filename, mode, **kwargs)
        except SystemError:
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


def function_node(fn: Any) -> Any:
    """The ``def`` of ``fn`` parsed from its source (an ``ast.FunctionDef`` or
    ``ast.AsyncFunctionDef``), or None where its source cannot be read as one."""
    try:
        tree = parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError, tokenize.TokenError):
        return None  # (TokenError: a file edited since it was imported, read at odd lines)
    if not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return tree.body[0]


def defined_in(text: str, name: str) -> ast.FunctionDef | None:
    """The top-level ``def name`` of the module ``text`` (emitted code), or None where
    ``text`` does not parse or defines no such function."""
    try:
        module = parse(text)
    except SyntaxError:
        return None
    return next((n for n in module.body if isinstance(n, ast.FunctionDef)
                 and n.name == name), None)


def lambda_node(fn: Any) -> Any:
    """The ``lambda`` of ``fn`` (an ``ast.Lambda``) in its source line, or None: where
    several on the line have its parameters, one ``ast.Module`` holding them all."""
    if fn.__name__ != "<lambda>":
        return None
    try:
        tree = parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError, tokenize.TokenError):
        return None
    code = fn.__code__
    names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda) and [
        a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
        == names]
    return ast.Module([ast.Expr(node.body) for node in found], []) if found else None
