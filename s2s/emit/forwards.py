"""The forward functions emitted code calls that no module of the user's defines, as
source after the emitted functions (``s2s.source`` shows them; ``s2s emit`` copies them).

Emitted code runs a callee's forward as Python: ``helper(x)`` calls the user's
``helper``.  A nested ``def`` or ``lambda`` s2s lifted to module level has no such name
(``sq(x)`` calls ``k``'s nested ``def sq``, a ``lambda`` is ``lam``), and a call that
passes a function or keyword-only values calls an adapter s2s wrote
(``apply_tanh(x)`` is ``apply(tanh, x)``).  Their source is listed after a marker line,
the names they read from their enclosing function being trailing parameters, so the
module text reads no name it neither defines nor imports without saying where it
comes from.  The code that runs stays the functions' own objects (the listing is a
copy of their source); listing them after the emitted functions keeps the emitted
lines' numbers those of tracebacks.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import io
import re
import symtable
import sys
import textwrap
import tokenize
import types
from typing import Any

import numpy as np

from .. import syntax
from .code import black_module

LIFTED_FILES = "<s2s-lifted-"  # (the file names frontend/functions.py's `lift` compiles in)
MARK = "# ---- forward functions the code above calls"
NAMES = "# ---- names the code above reads that s2s bound where it runs ----"


def made_by_s2s(obj: Any) -> bool:
    """A lifted nested function or lambda (see ``LIFTED_FILES``), or an adapter s2s
    wrote (frontend/fnvalues.py's ``Plan.adapter``)."""
    return isinstance(obj, types.FunctionType) and (
        _lifted(obj) or hasattr(obj, "__s2s_adapts__"))


def _lifted(obj: Any) -> bool:
    return obj.__code__.co_filename.startswith(LIFTED_FILES)


def emitted_part(text: str) -> str:
    """The emitted functions of a module text, without the forward listing."""
    at = min((i for i in (text.find("\n" + MARK), text.find("\n" + NAMES)) if i >= 0),
             default=-1)
    return text if at < 0 else text[:at + 1]


def with_forwards(text: str, namespace: dict[str, Any],
                  user: dict[str, Any] | None = None) -> str:
    """``text`` and, after it, the source of the forward functions s2s made that it
    calls (``namespace``: the names emitted code runs with; ``user``: the globals of
    the user's function, whose names a reader has)."""
    try:
        section = forward_section(text, namespace, user)
    except (OSError, TypeError, SyntaxError) as exc:  # (a source s2s cannot read back)
        section = f"{MARK}: s2s cannot list them ({type(exc).__name__}: {exc}) ----\n"
    return text if not section else text.rstrip("\n") + "\n\n\n" + section


def forward_section(text: str, namespace: dict[str, Any],
                    user: dict[str, Any] | None = None) -> str:
    """The listing ``with_forwards`` appends ("" when the text calls none)."""
    found, renames = _collect(text, namespace)
    if not found and user is None:
        return ""
    sources = {name: _rename(source_as(fn, name), renames) for name, fn in found.items()}
    defined = set(found) | set(namespace) | set(dir(builtins))
    lines: list[str] = []
    if user is not None:  # (what emitted code reads that the user's module lacks)
        for name in sorted(global_reads(text) & set(namespace)):
            value = namespace[name]
            if name not in found and not made_by_s2s(value) and not (
                    name in user and user[name] is value) and name != "np":
                same = [u for u in sorted(user) if user[u] is value and u.isidentifier()]
                line = f"{name} = {same[0]}" if same and not isinstance(
                    value, (int, float, str, bytes)) else _spelled(name, value, None)
                if line and line not in lines:
                    lines.append(line)
    defined |= {name for name in user or () if all(fn.__globals__.get(
        name, user[name]) is user[name] for fn in found.values())}
    for name, fn in found.items():
        for read in sorted(global_reads(sources[name]) - defined):
            line = _spelled(read, fn.__globals__.get(read, _MISSING), fn)
            if line and line not in lines:
                lines.append(line)
    if not found and not lines:
        return ""
    if not found:
        return "\n".join([NAMES] + lines) + "\n"
    head = [MARK + " (your nested functions",
            "# and lambdas, the names they read from the enclosing function passed as",
            "# parameters; the adapters s2s wrote where a call passes a function or",
            "# keywords): s2s runs these ----"]
    listing = "\n\n\n".join(sources[name].strip("\n") for name in found) + "\n"
    return "\n".join(head + lines) + "\n\n\n" + _black(listing)


def _black(text: str) -> str:
    black = black_module()  # (imported on first use, one thread at a time)
    try:
        return black.format_str(text, mode=black.Mode())
    except Exception:  # (black's own classes: the text as written, which compiles)
        return text


_MISSING = object()


def _collect(text: str, namespace: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    made = {name for name, value in namespace.items() if made_by_s2s(value)}
    read = sorted(made & global_reads(text), key=lambda m: _first_use(text, m)) if made else []
    todo = [(name, namespace[name]) for name in read]
    found: dict[str, Any] = {}
    renames: dict[str, str] = {}
    by_id: dict[int, str] = {}
    while todo:
        name, fn = todo.pop(0)
        if id(fn) in by_id:
            continue
        own = name
        # (a name emitted code reads for another object: the listing's is a fresh one)
        while own in found or (own in namespace and namespace[own] is not fn):
            own += "_"
        if own != name:
            renames[name] = own
        by_id[id(fn)] = own
        found[own] = fn
        try:
            reads = global_reads(source_as(fn, own))
        except (OSError, TypeError, SyntaxError):
            continue
        todo += [(m, fn.__globals__[m]) for m in sorted(reads)
                 if made_by_s2s(fn.__globals__.get(m))]
    return found, renames


def _first_use(text: str, name: str) -> int:
    """Where ``name`` is first read in ``text`` (the listing follows that order)."""
    found = re.search(rf"\b{re.escape(name)}\(", text) or re.search(
        rf"\b{re.escape(name)}\b", text)
    return found.start() if found else len(text)


def source_as(fn: Any, name: str) -> str:
    """The function's source as a module-level ``def name`` (its name in emitted
    code, which may differ from the one it was written with: fnvalues' ``lifted_name``)."""
    text = textwrap.dedent(inspect.getsource(fn))
    node = syntax.parse(text).body[0]
    if not isinstance(node, ast.FunctionDef) or node.name == name:
        return text
    if node.name in fn.__code__.co_freevars:  # (recursive: it calls itself by name)
        return _rename(text, {node.name: name})
    return _rename(text, {node.name: name}, first_only=True)


def global_reads(text: str) -> set[str]:
    """Names ``text`` reads as globals (in any of its functions, each its own scope)
    that nothing at its top level binds; builtins included."""
    table = symtable.symtable(text, "<s2s-forwards>", "exec")
    bound = {s.get_name() for s in table.get_symbols()
             if s.is_assigned() or s.is_imported() or s.is_namespace()}
    reads: set[str] = set()

    def walk(t: symtable.SymbolTable) -> None:
        for s in t.get_symbols():
            if s.is_referenced() and (t.get_type() == "module" or s.is_global()):
                reads.add(s.get_name())
        for child in t.get_children():
            walk(child)

    walk(table)
    return reads - bound


def _rename(text: str, renames: dict[str, str], first_only: bool = False) -> str:
    """``text`` with each name token in ``renames`` (not an attribute) replaced
    (``first_only``: the first, a ``def``'s name)."""
    if not renames:
        return text
    out = []
    previous = None
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.NAME and tok.string in renames and not (
                previous is not None and previous.string == "."):
            tok = tok._replace(string=renames[tok.string])
            if first_only:
                renames = {}
        out.append(tok)
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok
    return tokenize.untokenize(out)


def _spelled(name: str, value: Any, fn: Any) -> str:
    """A line making ``name`` (which ``fn`` reads) defined for a reader of the
    listing: an import, or a comment saying what it is where it is not the user's."""
    if value is _MISSING:
        return ""
    if fn is not None and _lifted(fn) and fn.__globals__ is getattr(
            sys.modules.get(fn.__module__), "__dict__", None):
        return ""  # (a name of the user's module, read as their function reads it)
    if isinstance(value, types.ModuleType):
        module = value.__name__
        if "." in module:
            parent, _, leaf = module.rpartition(".")
            return f"from {parent} import {leaf}" + (f" as {name}" if name != leaf else "")
        return f"import {module}" + (f" as {name}" if name != module else "")
    own = getattr(value, "__name__", None)
    if (isinstance(value, np.ufunc) or getattr(value, "__module__", None) == "numpy") \
            and own and getattr(np, own, None) is value:
        return f"from numpy import {own}" + (f" as {name}" if name != own else "")
    module = sys.modules.get(getattr(value, "__module__", None) or "")
    if own and module is not None and getattr(module, own, None) is value:
        where = f"from {module.__name__} import {own}"
        return where + (f" as {name}" if name != own else "")
    return f"# {name}: {_short(value)}, bound where the code runs"


def _short(value: Any) -> str:
    """What ``value`` is, in words that do not change between runs (no address)."""
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        text = repr(value)
        return text if len(text) <= 40 and "\n" not in text else f"a {type(value).__name__}"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} ({value.dtype})"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
        return f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
    return f"a {type(value).__qualname__} object"
