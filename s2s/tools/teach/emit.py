"""``s2s emit``: an emitted derivative as a standalone module that needs only NumPy.

The emitted text imports its helpers from ``s2s.runtime``; here their source (and the
private functions they call) is copied into the module instead.  Names the emitted
code reads from the user's module are copied too: numbers, strings, tuples and small
arrays as literals, the user's plain functions as their source (with what they read in
turn), standard-library modules as imports.  Anything else is refused, naming it.

A header says what the module is and how to regenerate it; one comment line,
``# s2s-meta: {...}``, is JSON that ``s2s check`` reads.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import json
import shlex
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import numpy as np

from ... import runtime, runtime_ode, runtime_scipy, syntax
from ...emit.code import black_module
from ...emit.forwards import emitted_part, global_reads, made_by_s2s, source_as
from ...frontend.synthesize import PARTIAL
from .common import Derivation, TeachError

_MAX_ARRAY = 10_000  # elements of a module constant written as a literal


def _runtime_defs() -> dict[str, str]:
    """Top-level function definitions of s2s/runtime.py (and of runtime_scipy.py and
    runtime_ode.py, whose names it imports), by name, as source."""
    return dict(_runtime_defs_once())


@functools.cache
def _runtime_defs_once() -> dict[str, str]:
    # (read once per process; each definition cut from the lines by its positions:
    # ast.get_source_segment splits the whole text again for each of the hundreds of
    # definitions, 6 s of every `s2s emit`)
    text = "\n\n".join(inspect.getsource(m) for m in (runtime, runtime_scipy, runtime_ode))
    lines = text.splitlines(keepends=True)
    out = {}
    for n in syntax.parse(text).body:
        if isinstance(n, ast.FunctionDef):
            first, last = n.lineno - 1, n.end_lineno - 1  # type: ignore[operator]
            if first == last:
                segment = lines[first].encode()[n.col_offset:n.end_col_offset].decode()
            else:
                segment = (lines[first].encode()[n.col_offset:].decode()
                           + "".join(lines[first + 1:last])
                           + lines[last].encode()[:n.end_col_offset].decode())
            out[n.name] = segment
    return out


def _loads(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def free_names(text: str) -> set[str]:
    """Names ``text`` reads as globals (each function its own scope: a local ``helper``
    of one function does not hide the module's ``helper`` another calls) that nothing
    at its top level binds and that are not builtins."""
    syntax.parse(text)  # (a SyntaxError as s2s reports it)
    return global_reads(text) - set(dir(builtins))


def _runtime_closure(names: set[str], defs: dict[str, str]) -> list[str]:
    """``names`` and the runtime functions they call, in runtime.py's order."""
    wanted: set[str] = set()
    todo = [n for n in names if n in defs]
    while todo:
        n = todo.pop()
        if n in wanted:
            continue
        wanted.add(n)
        todo += [m for m in _loads(syntax.parse(defs[n])) if m in defs and m not in wanted]
    return [n for n in defs if n in wanted]


class _Copier:
    """Resolves the free names of emitted code (and of copied user functions)."""

    def __init__(self, scopes: list[dict[str, Any]], defs: dict[str, str]) -> None:
        self.scopes = scopes
        self.defs = defs
        self.imports: dict[str, str] = {}  # name -> import line
        self.constants: dict[str, str] = {}  # name -> assignment line
        self.functions: dict[str, str] = {}  # name -> source (or an object's lines)
        self.runtime: set[str] = set()
        self.notes: list[str] = []
        self.copied: dict[str, Any] = {}  # name -> the object written under it
        self.objects: dict[int, str] = {}  # id(an object written) -> its name

    def lookup(self, name: str, scopes: list[dict[str, Any]]) -> Any:
        found = [s[name] for s in scopes if name in s]
        if not found:
            raise TeachError(
                f"the emitted code reads {name!r}, which s2s cannot find in the function's "
                "module or closure, so it cannot be copied into a standalone module"
            )
        return found[0]

    def resolve(self, names: set[str], scopes: list[dict[str, Any]]) -> None:
        for name in sorted(names):
            if name in self.imports or name in self.constants or name in self.functions:
                self._same(name, scopes)
                continue
            if name in self.defs and name in runtime.__all__:
                self.runtime.add(name)
                continue
            value = self.lookup(name, scopes)
            self.copied[name] = value
            self.copy(name, value)

    def _same(self, name: str, scopes: list[dict[str, Any]]) -> None:
        """A name copied already, read again (by a function of another module, a
        forward function s2s made): the same object, or a refusal."""
        found = [s[name] for s in scopes if name in s]
        if not found or name not in self.copied:
            return
        a, b = found[0], self.copied[name]
        if a is b or (isinstance(a, (int, float, complex, str, bool)) and type(a) is type(b)
                      and a == b):
            return
        raise TeachError(f"the emitted code reads two different objects named {name!r} "
                         "(from two modules, or a nested function and a module-level "
                         "one), which one standalone module cannot hold: rename one")

    def copy(self, name: str, value: Any) -> None:
        if made_by_s2s(value):
            self.copy_forward(name, value)
            return
        if _from_stdlib(value):
            own = value.__name__
            self.imports[name] = f"from {value.__module__} import {own}" + (
                f" as {name}" if name != own else "")
            return
        if isinstance(value, type) and not _from_library(value):
            self.copy_class(name, value)
            return
        if _user_object(value):
            self.copy_object(name, value)
            return
        if isinstance(value, types.ModuleType):
            top = value.__name__.split(".")[0]
            if top == "s2s":
                raise TeachError(f"the emitted code reads {name!r}, the s2s module "
                                 f"{value.__name__}: a standalone module cannot import s2s")
            if value is np:
                line = "import numpy as np" if name == "np" else f"import numpy as {name}"
            elif "." in value.__name__:
                parent, _, leaf = value.__name__.rpartition(".")
                line = f"from {parent} import {leaf}" + (f" as {name}" if name != leaf else "")
            else:
                line = f"import {value.__name__}" + (f" as {name}" if name != value.__name__ else "")
            if top not in ("numpy",) and top not in sys.stdlib_module_names:
                self.notes.append(f"it also imports {value.__name__} (read as {name!r})")
            self.imports[name] = line
        elif value is None or isinstance(value, (bool, int, float, complex, str)):
            self.constants[name] = f"{name} = {value!r}"
        elif isinstance(value, np.generic):
            self.constants[name] = f"{name} = np.{value.dtype.name}({value.item()!r})"
        elif isinstance(value, tuple) and _literal(value):
            self.constants[name] = f"{name} = {value!r}"
        elif isinstance(value, np.ndarray):
            if value.size > _MAX_ARRAY or value.dtype.kind not in "biuf":
                raise TeachError(
                    f"the emitted code reads {name!r}, an array of {value.size} "
                    f"{value.dtype} elements, too large (or not numeric) to write into the "
                    "module as a literal: pass it as an argument instead"
                )
            self.constants[name] = (
                f"{name} = np.array({value.tolist()!r}, dtype=np.{value.dtype.name})"
            )
        elif inspect.isfunction(value) and value.__name__ != "<lambda>":
            self.copy_function(name, value)
        elif callable(value) and getattr(value, "__module__", "") in ("numpy",) or (
                isinstance(value, np.ufunc)):
            self.imports[name] = f"from numpy import {value.__name__}" + (
                f" as {name}" if name != value.__name__ else "")
        else:
            raise TeachError(
                f"the emitted code reads {name!r}, a {type(value).__name__} from the "
                "function's module, which s2s cannot write into a standalone module "
                "(numbers, strings, tuples, small arrays, modules and plain functions can "
                "be copied): pass it as an argument, or emit without it"
            )

    def copy_forward(self, name: str, fn: Any) -> None:
        """A forward function s2s made (a lifted nested function or lambda, an
        adapter): its source as the emitted code shows it, under the name it calls."""
        src = source_as(fn, name)
        if PARTIAL in src:
            raise TeachError(f"the emitted code calls {name!r}, a nested function that "
                             "passes itself as a value: define it at module level")
        self.functions[name] = src
        self.resolve(free_names(src), [fn.__globals__])

    def copy_class(self, name: str, cls: type) -> None:
        """A class of the user's (of an object the code calls): its source."""
        try:
            src = textwrap.dedent(inspect.getsource(cls))
        except (OSError, TypeError):
            raise TeachError(f"the emitted code reads {name!r}, a class whose source "
                             "cannot be found, so it cannot be copied") from None
        module = sys.modules.get(cls.__module__)
        if module is None or getattr(module, cls.__name__, None) is not cls:
            raise TeachError(f"the emitted code reads {name!r}, a class not defined at "
                             "module level: s2s copies only module-level classes")
        if name != cls.__name__:
            src += f"\n\n{name} = {cls.__name__}\n"
        self.functions[name] = src
        self.resolve(free_names(src), [vars(module)])

    def copy_object(self, name: str, value: Any) -> None:
        """An object of a class of the user's (a callable object the code calls, the
        ``self`` its method reads): the class, and the object made again with the
        fields s2s read, ``__init__`` not run."""
        known = self.objects.get(id(value))
        if known is not None:
            self.functions[name] = f"{name} = {known}"
            return
        cls = type(value)
        fields = getattr(value, "__dict__", None)
        texts = {k: _literal_text(v) for k, v in (fields or {}).items()}
        if fields is None or None in texts.values() or not all(
                isinstance(k, str) for k in texts):
            raise TeachError(
                f"the emitted code reads {name!r}, a {cls.__name__} object whose fields are "
                "not all numbers, strings, tuples or small arrays, so it cannot be written "
                "into a standalone module: pass its values as arguments instead")
        self.resolve({cls.__name__}, [vars(sys.modules[cls.__module__])])
        self.objects[id(value)] = name
        items = ", ".join(f"{k!r}: {t}" for k, t in texts.items())
        self.functions[name] = (
            f"# {name}: the {cls.__name__} object as s2s read it (its fields; "
            "__init__ not run)\n"
            f"{name} = {cls.__name__}.__new__({cls.__name__})\n"
            f"{name}.__dict__.update({{{items}}})\n")

    def copy_function(self, name: str, fn: Any) -> None:
        try:
            src = textwrap.dedent(inspect.getsource(fn))
        except (OSError, TypeError):
            raise TeachError(f"the emitted code calls {name!r}, whose source cannot be "
                             "found, so it cannot be copied") from None
        tree = syntax.parse(src)
        node = tree.body[0]
        if not isinstance(node, ast.FunctionDef) or node.decorator_list:
            raise TeachError(f"the emitted code calls {name!r}, a decorated function: "
                             "s2s copies only plain functions into a standalone module")
        if fn.__code__.co_freevars:
            raise TeachError(f"the emitted code calls {name!r}, a closure over "
                             f"{', '.join(fn.__code__.co_freevars)}: s2s copies only "
                             "module-level functions into a standalone module")
        if node.name != name:
            src += f"\n\n{name} = {node.name}\n"
        self.functions[name] = src
        self.resolve(free_names(src), [fn.__globals__])


def _literal_text(value: Any) -> str | None:
    """Source for a field of an object s2s writes again, or None."""
    if isinstance(value, np.generic):
        return f"np.{value.dtype.name}({value.item()!r})"
    if _literal(value):
        return repr(value)
    if isinstance(value, np.ndarray) and value.size <= _MAX_ARRAY and (
            value.dtype.kind in "biuf"):
        return f"np.array({value.tolist()!r}, dtype=np.{value.dtype.name})"
    return None


def _from_library(value: Any) -> bool:
    """Is ``value`` (a class) defined by a library, not by the user's files?"""
    name = getattr(value, "__module__", None) or ""
    top = name.split(".")[0]
    if top in ("builtins", "numpy", "scipy", "jax", "s2s") or top in sys.stdlib_module_names:
        return True
    path = getattr(sys.modules.get(name), "__file__", None) or ""
    return "site-packages" in path or "dist-packages" in path


def _from_stdlib(value: Any) -> bool:
    """A function or class of the standard library, imported by its name."""
    module = getattr(value, "__module__", None) or ""
    return (inspect.isfunction(value) or isinstance(value, type)) and (
        module.split(".")[0] in sys.stdlib_module_names and module != "builtins"
        and getattr(sys.modules.get(module), getattr(value, "__name__", ""), None) is value)


def _user_object(value: Any) -> bool:
    """An object of a class of the user's (not a function, module or class)."""
    return not isinstance(value, (type, types.ModuleType, types.FunctionType)) and (
        not _from_library(type(value)))


def _literal(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_literal(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex, str))


def _scopes(fn: Any) -> list[dict[str, Any]]:
    closure = inspect.getclosurevars(fn)
    return [dict(closure.nonlocals), fn.__globals__]


def _wrapper(d: Derivation, entry: str) -> tuple[str, str]:
    """For Jacobians and Hessians: a function taking the user's arguments, building
    the basis of tangents the emitted batched code runs on, and laying the result out
    as JAX does (output axes first, then the argument's axes)."""
    kind = d.choice.kind
    argnums = d.choice.argnums
    if d.choice.vmapped or not isinstance(argnums, int):
        raise TeachError(f"s2s emit writes {kind} for one argument (an int --argnums), "
                         "not vmapped; use s2s show to read the code")
    params = list(inspect.signature(d.target.fn).parameters)[: len(d.args)]
    x = params[argnums]
    taken = {n.name for n in syntax.parse(d.text).body if isinstance(n, ast.FunctionDef)}
    name = f"{d.target.name}_{kind}"
    while name in taken:
        name += "_full"
    text = f'''
def {name}({", ".join(params)}):
    """The {kind} of {d.target.name} with respect to {x}, laid out as JAX does:
    the output's axes, then {x}'s axes.  Runs {entry} on all basis tangents at once."""
    n = np.size({x})
    basis = np.eye(n).reshape((n,) + np.shape({x}))
    columns = np.asarray({entry}({", ".join(params)}, basis))
    out_shape = np.shape(columns)[1:]
    return np.moveaxis(columns, 0, -1).reshape(out_shape + np.shape({x}))
'''
    return name, text


def regenerate_command(d: Derivation, output: str) -> str:
    parts = ["s2s", "emit", d.target.spec]
    flags = d.choice.flags()
    cmd = " ".join(shlex.quote(p) for p in parts)
    if flags:
        cmd += " " + flags
    return cmd + f" -o {shlex.quote(output)}"


def check_command(d: Derivation, output: str) -> str:
    cmd = f"s2s check {shlex.quote(output)} {shlex.quote(d.target.spec)}"
    flags = d.choice.flags()
    return cmd + (" " + flags if flags else "")


def _escape_line(line: str) -> str:
    """One line of a docstring's value as source text inside triple double quotes:
    backslashes and quotes escaped (nothing can end the literal or start an
    escape), every character that is not printable escaped (newlines, tabs, line
    separators: nothing can break the line or pass for a ``# s2s-meta:`` line), and
    leading and trailing spaces escaped (black strips them from docstrings)."""
    out = []
    for c in line:
        if c == "\\":
            out.append("\\\\")
        elif c == '"':
            out.append('\\"')
        elif c.isprintable():
            out.append(c)
        else:
            n = ord(c)
            out.append(f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000
                       else f"\\U{n:08x}")
    body = "".join(out)
    stripped = body.strip(" ")
    if stripped != body:
        lead = len(body) - len(body.lstrip(" "))
        trail = len(body) - len(body.rstrip(" "))
        body = "\\x20" * lead + stripped + "\\x20" * trail
    return body


def docstring_literal(lines: list[str]) -> tuple[str, str]:
    """A module docstring whose value is exactly ``lines`` joined by newlines (with
    a final one), whatever the lines hold: (its source, its value)."""
    value = "\n".join(lines) + "\n"
    return '"""' + "\n".join(_escape_line(ln) for ln in lines) + '\n"""', value


def standalone_module(d: Derivation, output: str = "derivative.py") -> str:
    """The module text ``s2s emit`` writes."""
    black = black_module()
    kind = d.choice.kind
    if kind == "jacrev":
        raise TeachError("s2s emit does not write jacrev (its emitted code needs the "
                         "output's shape from the API): emit --jacfwd, or --grad")
    defs = _runtime_defs()
    # the functions, with their comments: the text after the imports
    lines = emitted_part(d.text).splitlines()  # (forward functions: copied, see _Copier)
    first_def = next(i for i, ln in enumerate(lines) if ln.startswith("def "))
    body_text = "\n".join(lines[first_def:])
    entry = d.entry
    wrapper = ""
    if kind in ("hessian", "jacfwd"):
        entry_name, wrapper = _wrapper(d, entry)
    else:
        entry_name = entry
    made = {k: v for k, v in d.namespace.items() if made_by_s2s(v)}  # (sq, lam, adapters)
    # (last: what emitted code reads that s2s bound, `scaled_self` for a callable object)
    copier = _Copier([made] + _scopes(d.target.fn) + [d.namespace], defs)
    names = free_names(body_text + wrapper) - {"np"}
    copier.resolve(names, copier.scopes)
    # helpers of the user's callees may read names of the callees' modules
    helpers = _runtime_closure(copier.runtime, defs)
    needs_scipy = [h for h in helpers if "scipy" in defs[h]]
    if needs_scipy:
        copier.notes.append(f"{', '.join(needs_scipy)} import scipy when called")

    fn = d.target.fn
    lines_, first = inspect.getsourcelines(fn)
    try:
        shown = str(Path(d.target.file).resolve().relative_to(Path.cwd()))
    except ValueError:
        shown = d.target.file
    meta = {
        "function": fn.__name__,
        "qualname": fn.__qualname__,
        "file": shown,
        "line": first,
        "sha256": d.target.source_hash(),
        "transform": d.choice.as_dict(),
        "describe": d.choice.describe(fn.__name__),
        "entry": entry_name,
        "target": d.target.spec,
    }
    sig = inspect.signature(fn)
    # every line may hold user text (paths, the signature's defaults, in_axes): the
    # docstring is built so that no text can end it, escape out of it or break it
    header = [
        f"{d.choice.describe(fn.__name__)}, emitted by s2s as a standalone module.",
        "",
        f"Source function: {fn.__qualname__}{sig} in {shown}, line {first}",
        f"Source sha256:   {meta['sha256']}",
        f"Transform:       {meta['describe']}",
        f"Entry point:     {entry_name}",
        f"Regenerate:      {regenerate_command(d, output)}",
        f"Check an edit:   {check_command(d, output)}",
        "",
        "Needs only NumPy" + (" (" + "; ".join(copier.notes) + ")" if copier.notes else "")
        + ": the s2s.runtime helpers it calls are copied at the end.",
    ]
    if any(made_by_s2s(v) for v in copier.copied.values()):
        header.append("Nested functions and lambdas are module-level functions here, the "
                      "names they read from")
        header.append("the enclosing function passed as trailing parameters.")
    if d.choice.vmapped:
        header.append("Batched arguments take the batch axis first.")
    docstring, docstring_value = docstring_literal(header)
    parts = [docstring, f"# s2s-meta: {json.dumps(meta)}", "import numpy as np"]
    parts += [copier.imports[k] for k in sorted(copier.imports) if copier.imports[k]
              != "import numpy as np"]
    if copier.constants:
        parts.append("\n".join(copier.constants[k] for k in sorted(copier.constants)))
    chunks = ["\n".join(parts)]
    chunks += [copier.functions[k] for k in copier.functions]
    chunks.append(body_text)
    if wrapper:
        chunks.append(wrapper.strip("\n"))
    if helpers:
        chunks.append("# ---- helpers copied from s2s/runtime.py ----\n\n\n"
                      + "\n\n\n".join(defs[h] for h in helpers))
    text = "\n\n\n".join(c.strip("\n") for c in chunks) + "\n"
    try:
        text = black.format_str(text, mode=black.Mode())
        tree = syntax.parse(text)
        compile(tree, output, "exec")
    except (SyntaxError, ValueError, black.InvalidInput) as exc:  # (a bug of s2s's)
        raise TeachError(f"s2s wrote a module that does not compile ({type(exc).__name__}: "
                         f"{exc}); please report this with the command line") from None
    if ast.get_docstring(tree, clean=False) != docstring_value:
        raise TeachError("s2s wrote a module whose docstring does not read back as "
                         "written; please report this with the command line")
    return text


def read_meta(text: str) -> dict | None:
    for line in text.splitlines()[:60]:
        if line.startswith("# s2s-meta: "):
            return json.loads(line[len("# s2s-meta: "):])
    return None
