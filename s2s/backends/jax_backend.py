"""The JAX backend: emitted NumPy code run by ``jax.numpy`` and compiled by XLA.

The emitted module's text goes through four passes (:meth:`JaxBackend.module_text`),
each visible in ``s2s.source(jitted)``:

1. ``import numpy as np`` becomes ``import s2s.backends.jax_numpy as np``
   (``jax.numpy``; host constants stay NumPy's, see that module);
2. ``from s2s.runtime import ...`` becomes ``from s2s.backends.jax_runtime import ...``
   (the same helpers, their source run on ``jax.numpy``);
3. in-place writes become functional updates (``y = y.at[i].set(v)``; outside loops
   ``y[1:] += v`` becomes ``y = y + np.zeros_like(y).at[1:].set(v)``, which XLA fuses;
   :mod:`s2s.backends.lower`); then a divisor's derivative ``-g * q / d`` of a
   quotient ``q = n / d`` reads the dividend, ``-g / d * n / d``, so that XLA fuses the
   division into its consumer as in JAX's own program (:mod:`s2s.backends.quotients`).

Names the emitted code reads from the user's module (a helper function the forward
pass calls, a constant) are translated too (:mod:`s2s.api.jit_jax`, which runs s2s's
transforms and user functions on this backend): a user function runs its own code with
its module's ``numpy`` rebound (:func:`lowered_user_code` here), a call to an s2s
transform inside it runs that transform's emitted code here.

A fourth pass lowers the emitted code's ``if``/``for``/``while`` to ``lax.cond``,
``lax.fori_loop``/``lax.scan`` and ``lax.while_loop`` (:mod:`s2s.backends.control`,
run by :mod:`s2s.backends.jax_control`), so tests and loop bounds may be traced.
Loops with ``break``/``continue`` are rewritten with flags first
(:mod:`s2s.backends.breaks`); a user function run by ``s2s.jit(f)`` directly has its
own control flow lowered the same way when all of it lowers.  What cannot be lowered
(a ``return`` inside an ``if``, ``float()`` of an array, a boolean mask) raises
:class:`~s2s.backends.TracedValueError` quoting the line when the value is traced.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import os
import re
import sys
import sysconfig
import textwrap
import types
import weakref
from typing import Any, Callable

import jax
import numpy as np

from .. import syntax
from ..emit import code as emitcode
from ..emit.code import compile_module
from ..errors import Loc
from ..frontend.typetests import decide_in_ast
from . import jax_control
from .base import Backend, TracedValueError
from .breaks import range_of
from .control import STAYS, lower_control
from .lower import lower_inplace
from .quotients import lower_quotients

NUMPY_IMPORT = "import s2s.backends.jax_numpy as np"
RUNTIME_IMPORT = "from s2s.backends.jax_runtime import "

_TRACED_ERRORS = (
    jax.errors.ConcretizationTypeError,  # TracerBoolConversionError among them
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
    jax.errors.NonConcreteBooleanIndexError,
)


class NeedExample(Exception):
    """A vmapped function met a new signature while JAX traces it: its code must be
    generated from a concrete first example (the rank probe), before tracing.
    ``paths``: the ``(test, taken)`` of the ``if``s where the code made so far for
    this signature raised ``OtherPath`` (made per path: see s2s.vmap)."""

    def __init__(self, paths: tuple = ()) -> None:
        super().__init__(paths)
        self.paths = paths


def enable_x64() -> None:
    jax.config.update("jax_enable_x64", True)


def x64_default() -> bool:
    """On unless ``S2S_JAX_X64=0`` (NumPy computes in float64; so does s2s on JAX)."""
    return os.environ.get("S2S_JAX_X64", "1").lower() not in ("0", "false", "no")


class JaxBackend(Backend):
    name = "jax"
    jits = True

    def __init__(self) -> None:
        self._prepared: "weakref.WeakKeyDictionary[Callable, Callable]" = (
            weakref.WeakKeyDictionary()
        )

    # ---- text and compilation ------------------------------------------------------

    def module_text(self, text: str) -> str:
        """The emitted module's text as it runs on JAX (see the module docstring)."""
        text = re.sub(r"^import numpy as np$", NUMPY_IMPORT, text, flags=re.M)
        text = re.sub(r"^from s2s\.runtime import ", RUNTIME_IMPORT, text, flags=re.M)
        lowered = lower_quotients(lower_inplace(text, fuse_slices=True))
        controlled = lower_control(lowered)
        if controlled != lowered:
            black = emitcode.black_module()  # (lowered control flow: black lays it out)
            return black.format_str(controlled, mode=black.Mode())
        return _wrap_long_lines(lowered)

    def prepare(self, fn: Callable, text: str | None = None) -> Callable:
        """The emitted function ``fn`` (NumPy) compiled from its text on JAX."""
        found = self._prepared.get(fn)
        if found is not None:
            return found
        if text is None:
            text = "".join(linecache.getlines(fn.__code__.co_filename))
        jax_text = self.module_text(text)
        defined = _top_level_names(jax_text)
        names = [k for k in fn.__globals__ if not k.startswith("__") and k not in defined]
        namespace: dict[str, Any] = {"__name__": "s2s_emitted_jax"}
        for name in _default_names(jax_text):  # (read when the defs run: an array a
            if name in fn.__globals__:  # partial binds, `def f(y, *, w=w_default)`)
                namespace[name] = fn.__globals__[name]
        compile_module(jax_text, namespace, f"{fn.__name__}_jax")
        jfn = namespace[fn.__name__]
        jfn.__s2s_numpy__ = (fn, names)  # type: ignore[attr-defined]
        jfn.__s2s_text__ = jax_text  # type: ignore[attr-defined]
        self._prepared[fn] = jfn
        return jfn

    # ---- running ---------------------------------------------------------------------

    def run(self, jfn: Callable, args: tuple, kwargs: dict) -> Any:
        """Call code prepared for JAX; Python control flow on a traced value raises
        :class:`TracedValueError` naming the line."""
        try:
            return jfn(*args, **kwargs)
        except _TRACED_ERRORS as err:
            raise traced_value_error(err) from err
        except (TypeError, IndexError) as err:
            if _shape_of_a_tracer(err):  # (np.ones(k), x.reshape(k, -1), x[:k] of a
                raise traced_value_error(err) from err  # traced k: JAX's own errors)
            raise

    def source_of(self, jfn: Callable) -> str:
        return jfn.__s2s_text__  # type: ignore[attr-defined]


def _default_names(text: str) -> set[str]:
    """The names the top-level functions' default values read (bound to arrays)."""
    names: set[str] = set()
    for node in syntax.parse(text).body:
        if isinstance(node, ast.FunctionDef):
            for value in [*node.args.defaults, *node.args.kw_defaults]:
                if value is not None:
                    names |= {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    return names


def _top_level_names(text: str) -> set[str]:
    names: set[str] = set()
    for node in syntax.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


# ---- the error for Python control flow on traced values ------------------------------

SITE_DIRS = tuple(
    p + os.sep for p in {sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")}
)
_LIBRARY_DIRS = SITE_DIRS + tuple(
    os.path.dirname(os.path.abspath(m.__file__)) + os.sep
    for m in (jax, np, sys.modules["s2s"])
)


def _shape_of_a_tracer(err: Exception) -> bool:
    """Whether ``err`` is JAX refusing a traced value as a shape or a slice's bound
    (a TypeError or IndexError, not one of the ConcretizationTypeErrors)."""
    text = str(err)
    return "Tracer" in text and text.startswith(
        ("Shapes must be 1D sequences of concrete values", "Slice entries must be static",
         "unsupported format string passed to"))  # (f"{v:.4f}" of a traced v)


def traced_value_error(err: Exception) -> TracedValueError:
    """Where the emitted (or user) code needed a Python value JAX only traces."""
    frames = []
    tb = err.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    emitted = [f for f in frames if f[0].startswith("<s2s:") and "runtime_jax" not in f[0]]
    user = [f for f in frames if not f[0].startswith(("<", *_LIBRARY_DIRS))]
    where = (emitted or user or [None])[-1]
    loc, construct = None, "a Python conversion (bool, int, float, range)"
    if isinstance(err, jax.errors.NonConcreteBooleanIndexError):
        construct = "indexing with a boolean mask (its result's shape depends)"
    elif str(err).startswith("unsupported format string"):
        construct = "a format spec (`f\"{v:.4f}\"`: a number's digits)"
    elif _shape_of_a_tracer(err):
        construct = ("a shape (np.ones(k), x.reshape(k, -1))" if isinstance(err, TypeError)
                     else "a slice's bound (x[:k])")
    if where is not None:
        filename, line = where
        text = linecache.getline(filename, line).rstrip("\n")
        stripped = text.lstrip()
        loc = Loc(filename, line, len(text) - len(stripped) + 1, text)
        translated = _TRANSLATED.get(filename)
        user = _user_line(translated, stripped) if translated is not None else None
        if user is not None:  # (your function's own code, lowered: your line)
            loc, stripped = user, user.text.lstrip()
        for word, what in (("if ", "Python `if`"), ("elif ", "Python `elif`"),
                           ("while ", "Python `while`"), ("for ", "Python `for`")):
            if stripped.startswith(word):
                construct = what
                break
        else:
            if re.search(r"\b(and|or|not)\b", stripped) and isinstance(
                    err, jax.errors.ConcretizationTypeError):
                construct = "Python `and`/`or`/`not`"
    kind = type(err).__name__
    hint = ("run it on the NumPy backend (s2s.jit(f, backend='numpy')), or pass the "
            "value as a static argument (static_argnums=/static_argnames=); the JAX "
            "backend lowers an emitted if/for/while to lax.cond/fori_loop/scan/while_loop "
            "unless it is marked '# stays Python: <reason>'")
    if construct.startswith("a format spec"):  # (a kept print runs while JAX traces)
        hint = ("print the value without a format spec (`print(v)` shows JAX's tracer, "
                "as under jax.jit), use jax.debug.print, or run it on the NumPy backend "
                "(s2s.jit(f, backend='numpy'))")
    return TracedValueError(
        f"{construct} on a value JAX traces ({kind}): under jax.jit it is known only "
        "when the compiled code runs", loc, hint=hint)


# the file name of a user function's lowered code -> the function (its error's line)
_TRANSLATED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_LAX_TEST = re.compile(r"lax\.cond\((.+?), if_true\b")


def _user_line(fn: Any, emitted: str) -> Loc | None:
    """The user's statement an emitted line of ``fn``'s lowered code came from: the
    ``if`` whose test a ``lax.cond(test, ...)`` evaluates, or the statement the line
    repeats as written; None where none matches."""
    try:
        lines, first = inspect.getsourcelines(fn)
        tree = syntax.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    cond = _LAX_TEST.search(emitted)
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.While)):
            spelled = ast.unparse(node.test)
            found = spelled == cond.group(1) if cond else \
                emitted.startswith(("if ", "elif ", "while ")) and spelled in emitted
        elif isinstance(node, ast.stmt) and not isinstance(node, (
                ast.FunctionDef, ast.For, ast.With, ast.Try)):
            found = ast.unparse(node) == emitted.rstrip(":")
        else:
            continue
        if found and 0 < node.lineno <= len(lines):
            text = lines[node.lineno - 1].rstrip("\n")
            return Loc(inspect.getsourcefile(fn) or "<unknown>", first + node.lineno - 1,
                       len(text) - len(text.lstrip()) + 1, text)
    return None


def _wrap_long_lines(text: str) -> str:
    """Black's layout of ``text``, a black-formatted module in which lowering rewrote
    some statements on one line each (``y = y + np.zeros_like(y).at[1:].set(v)``):
    each such line longer than black's 88 columns is formatted on its own, at the
    width its indentation leaves.  Black on the whole module gives the same text
    (checked under the test suite) in a tenth of the time or less: it was most of
    the transform's part of a first call (35 ms of mlp2's gradient)."""
    lines = text.splitlines(keepends=True)
    long = [k for k, line in enumerate(lines)
            if len(line.rstrip("\n")) > 88 and not line.lstrip().startswith("#")]
    if not long:
        return text
    black = emitcode.black_module()
    for k in reversed(long):
        line = lines[k]
        indent = line[: len(line) - len(line.lstrip())]
        body = black.format_str(line.strip() + "\n",
                                mode=black.Mode(line_length=88 - len(indent)))
        lines[k] = "".join(indent + part if part.strip() else part
                           for part in body.splitlines(keepends=True))
    out = "".join(lines)
    if emitcode.CHECK_INVARIANTS:
        whole = black.format_str(text, mode=black.Mode())
        if out != whole:
            raise emitcode.EmitError(
                f"line-by-line wrapping differs from black:\n{out}\n---\n{whole}")
    return out


def lowered_user_code(fn: types.FunctionType, namespace: dict) -> Any:
    """``(code, text)``: a user function's own code with its control flow lowered to
    ``lax`` (and its in-place writes made functional), as emitted code is; None when
    that changes nothing, a statement stays Python (a ``return`` inside an ``if``) or
    its source cannot be read: the code then runs as it is, and Python control flow
    on a traced value raises TracedValueError quoting the user's own line."""
    if fn.__code__.co_name == "<lambda>":
        return None
    try:
        tree = syntax.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    node = tree.body[0]
    node.decorator_list = []
    # (the function object gets fn's defaults: the text's, `cfg=DEFAULT_CFG`, would be
    # evaluated where the lowered code compiles, without the module's names)
    node.args.defaults = [ast.Constant(None) for _ in node.args.defaults]
    node.args.kw_defaults = [d if d is None else ast.Constant(None)
                             for d in node.args.kw_defaults]
    decided = decide_in_ast(node, fn)  # (`isinstance(scale, int)`: this call's type's)
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    node.body = _returns_out_of_loops(node.body, names)
    _index_after_loops(node, names)
    node.body = _one_return(node.body, names)
    for n in ast.walk(node):  # `elif` as `else:` then `if` (the pass lowers that)
        if isinstance(n, ast.If) and len(n.orelse) == 1 and isinstance(n.orelse[0], ast.If):
            n.orelse.append(ast.Pass())
    text = ast.unparse(node) + "\n"
    lax_name = "lax" if namespace.get("lax", jax_control) is jax_control else "s2s_lax"
    # writes into arrays the function made become functional updates; a write into
    # an argument (which may be a list or dict) keeps the code as written
    params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    writes_args = any(
        isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, ast.Store)
        and _root_name(n) in params for n in ast.walk(node))
    try:
        lowered = lower_control(text if writes_args else lower_inplace(text), lax_name,
                                user_code=True)
    except Exception:  # noqa: BLE001 - code the passes do not read runs as it is
        return None
    if (lowered == text and not decided) or STAYS in lowered:
        return None  # all or nothing: an error then quotes the user's own line
    freevars = fn.__code__.co_freevars
    module = lowered
    if freevars:  # a factory taking the closure's names, so they stay free variables
        body = "".join("    " + line if line.strip() else line
                       for line in lowered.splitlines(keepends=True)
                       if not line.startswith("import "))
        module = (f"import s2s.backends.jax_control as {lax_name}\n\n\n"
                  f"def __s2s_closure__({', '.join(freevars)}):\n"
                  f"{body}    return {fn.__name__}\n")
    scratch: dict[str, Any] = {"__name__": getattr(fn, "__module__", None) or "s2s_user"}
    try:
        compile_module(module, scratch, f"{fn.__name__}_jax")
    except SyntaxError:
        return None
    code = scratch[fn.__name__].__code__ if not freevars else next(
        c for c in scratch["__s2s_closure__"].__code__.co_consts
        if isinstance(c, types.CodeType) and c.co_name == fn.__name__)
    namespace[lax_name] = jax_control
    _TRANSLATED[code.co_filename] = fn
    return code, lowered


def _always_returns(stmts: list[ast.stmt]) -> bool:
    """Whether every path through ``stmts`` ends in a ``return`` at its end."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return isinstance(last, ast.Return)


def _hoisted(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``if c: return a`` then ``rest``: ``rest`` moved into the ``else`` branch (the
    only path that reaches it), so that each path ends in its own ``return``."""
    out: list[ast.stmt] = []
    for i, st in enumerate(stmts):
        out.append(st)
        if not isinstance(st, ast.If):
            continue
        st.body, st.orelse = _hoisted(st.body), _hoisted(st.orelse)
        rest = stmts[i + 1:]
        if rest and _always_returns(st.body) and not _always_returns(st.orelse):
            st.orelse = _hoisted(st.orelse + rest)
            return out
        if rest and _always_returns(st.orelse) and not _always_returns(st.body):
            st.body = _hoisted(st.body + rest)
            return out
    return out


def _assigned(stmts: list[ast.stmt], name: str) -> list[ast.stmt]:
    """Each path's final ``return value`` as ``name = value``."""
    last = stmts[-1]
    if isinstance(last, ast.If):
        last.body, last.orelse = _assigned(last.body, name), _assigned(last.orelse, name)
        return stmts
    value = last.value if isinstance(last, ast.Return) and last.value is not None \
        else ast.Constant(None)
    return stmts[:-1] + [ast.copy_location(
        ast.Assign([ast.Name(name, ast.Store())], value), last)]


def _one_return(body: list[ast.stmt], names: set[str]) -> list[ast.stmt]:
    """A function body whose ``return`` statements inside ``if`` branches (an early
    return, ``if``/``else`` each returning) become one ``return`` at the end, so that
    the ``if`` can be lowered to ``lax.cond``: what follows an ``if`` that returns goes
    into its other branch, and each path binds the value it returned.  A ``return``
    inside a loop is left as it is (the function then runs as written)."""
    body = _hoisted(body)
    if not body or not isinstance(body[-1], ast.If) or not _always_returns(body):
        return body
    name = _fresh_name("returned", names)
    return _assigned(body, name) + [ast.Return(ast.Name(name, ast.Load()))]


def _fresh_name(base: str, names: set[str]) -> str:
    name = base
    while name in names:
        name += "_"
    names.add(name)
    return name


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _owned_nodes(node: ast.AST):
    """Nodes inside ``node`` that are not inside a nested function or class."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, _SCOPES):
            yield from _owned_nodes(child)


def _returns_out_of_loops(body: list[ast.stmt], names: set[str]) -> list[ast.stmt]:
    """Each loop of the function's own blocks that holds a ``return``, rewritten so
    that the ``return`` leaves by ``break`` and is taken after the loop::

        for i in range(n):                  returning = False
            if x[i] > t:                    for i in range(n):
                return x * i       ->           if x[i] > t:
        return x                                    returning = True
                                                    break
                                            if returning:
                                                return x * i
                                            return x

    ``break`` leaves every name as it was at the ``return``, so the value is the same;
    the loop then lowers as a loop that breaks, and the ``if`` as any early return.  A
    ``return`` in a nested loop breaks out of each loop in turn.  Several returns in
    one loop are numbered (``returning = 2``).  A loop with an ``else:`` is left
    alone (it then runs as written)."""
    out: list[ast.stmt] = []
    for st in body:
        if isinstance(st, ast.If):
            st.body = _returns_out_of_loops(st.body, names)
            st.orelse = _returns_out_of_loops(st.orelse, names)
        if not isinstance(st, (ast.For, ast.While)) or not any(
                isinstance(n, ast.Return) for n in _owned_nodes(st)) or any(
                isinstance(n, (ast.For, ast.While)) and n.orelse
                for n in [st, *_owned_nodes(st)]):
            out.append(st)
            continue
        flag = _fresh_name("returning", names)
        returns: list[ast.Return] = []
        marks: list[ast.Assign] = []
        _break_out(st, flag, returns, marks)
        several = len(returns) > 1
        if not several:
            marks[0].value = ast.Constant(True)
        out.append(ast.copy_location(ast.Assign(
            [ast.Name(flag, ast.Store())], ast.Constant(0 if several else False)), st))
        out.append(st)
        tail: list[ast.stmt] = []
        for k, ret in reversed(list(enumerate(returns, 1))):
            test: ast.expr = ast.Name(flag, ast.Load())
            if several:
                test = ast.Compare(test, [ast.Eq()], [ast.Constant(k)])
            value = ret.value if ret.value is not None else ast.Constant(None)
            tail = [ast.copy_location(ast.If(
                test, [ast.copy_location(ast.Return(value), ret)], tail), ret)]
        out += tail
    return out


def _break_out(loop: ast.For | ast.While, flag: str, returns: list[ast.Return],
               marks: list[ast.Assign]) -> None:
    """In ``loop`` (and the loops inside it), each ``return`` becomes ``flag = k`` then
    ``break``, and each inner loop holding one is followed by ``if flag: break``."""

    def block(stmts: list[ast.stmt]) -> list[ast.stmt]:
        new: list[ast.stmt] = []
        for st in stmts:
            if isinstance(st, ast.Return):
                returns.append(st)
                marks.append(ast.copy_location(ast.Assign(
                    [ast.Name(flag, ast.Store())], ast.Constant(len(returns))), st))
                new += [marks[-1], ast.copy_location(ast.Break(), st)]
                continue
            holds = any(isinstance(n, ast.Return) for n in _owned_nodes(st))
            if holds:
                for field in ("body", "orelse", "finalbody"):
                    if isinstance(getattr(st, field, None), list):
                        setattr(st, field, block(getattr(st, field)))
                for handler in getattr(st, "handlers", []):
                    handler.body = block(handler.body)
            new.append(st)
            if holds and isinstance(st, (ast.For, ast.While)):
                new.append(ast.copy_location(ast.If(
                    ast.Name(flag, ast.Load()), [ast.Break()], []), st))
        return new

    loop.body = block(loop.body)


def _index_after_loops(fn: ast.FunctionDef, names: set[str]) -> None:
    """A ``for i in range(...)`` loop whose index is read after it keeps a copy of the
    index: ``i_last = i`` first in its body and ``i = i_last`` after it, so the loop can
    be lowered (a lowered loop's index lives inside its body function).  ``i_last``
    starts as ``i``; where ``i`` is not bound before the loop, it is first bound to the
    range's start (to 0 before an enclosing loop, for a loop inside another).  That
    value is seen only where Python would raise NameError: after a loop that never
    ran."""
    done: set[int] = set()

    def visit(stmts: list[ast.stmt], bound: set[str], after: list[list[ast.stmt]],
              outer: tuple[list[ast.stmt], ast.stmt] | None) -> bool:
        for k, st in enumerate(stmts):
            rest = [stmts[k + 1:], *after]
            here = bound | _bound_in(stmts[:k])
            for field in ("body", "orelse"):
                inner = getattr(st, field, None)
                if isinstance(inner, list) and not isinstance(st, _SCOPES):
                    loop = isinstance(st, (ast.For, ast.While))
                    if visit(inner, here, rest, outer or ((stmts, st) if loop else None)):
                        return True
            if id(st) in done or not (
                    isinstance(st, ast.For) and isinstance(st.target, ast.Name)
                    and _range_start(st.iter) is not None):
                continue
            done.add(id(st))
            i = st.target.id
            if not any(isinstance(n, ast.Name) and n.id == i and isinstance(
                    n.ctx, ast.Load) for block in rest for s in block
                    for n in [s, *_owned_nodes(s)]):
                continue
            last = _fresh_name(f"{i}_last", names)
            if i not in here:
                block, anchor = outer or (stmts, st)
                start = _range_start(st.iter) if outer is None else ast.Constant(0)
                block.insert(block.index(anchor), ast.copy_location(
                    ast.Assign([ast.Name(i, ast.Store())], start), anchor))
            st.body.insert(0, ast.copy_location(ast.Assign(
                [ast.Name(last, ast.Store())], ast.Name(i, ast.Load())), st.body[0]))
            k_new = stmts.index(st)
            stmts[k_new:k_new + 1] = [
                ast.copy_location(ast.Assign(
                    [ast.Name(last, ast.Store())], ast.Name(i, ast.Load())), st),
                st,
                ast.copy_location(ast.Assign(
                    [ast.Name(i, ast.Store())], ast.Name(last, ast.Load())), st)]
            return True  # the blocks changed: read them again from the top
        return False

    args = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    while visit(fn.body, args, [], None):
        pass


def _bound_in(stmts: list[ast.stmt]) -> set[str]:
    return {n.id for s in stmts for n in [s, *_owned_nodes(s)]
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _range_start(it: ast.expr) -> ast.expr | None:
    """Where ``range(...)`` (or ``reversed(range(...))``) starts counting (0 when not
    given); None for other iterables.  (Only a loop that never ran leaves its index
    at this value, so a reversed range's other end would do as well.)"""
    bounds = range_of(it)
    if bounds is None:
        return None
    start = bounds[0][0]
    return start if start is not None else ast.Constant(0)


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


