"""Call signatures and the code cached for each: what a later call must share with an
earlier one to go straight to its (specialized) code.

A transform keeps, per signature of its arguments (``call_signature``), a
``FastEntry``: the function to run, the module constants its code read when cached
(``FreeSnapshot``: a later call takes the entry only while each holds the same
object), and whether the signature's next call specializes the code.
"""

from __future__ import annotations

import os
import threading
import types
from typing import Any, Callable

import numpy as np

from ..emit import code as emitcode
from ..ir.names import UPSTREAM
from ..ir.nodes import Function, Let, walk
from ..primitives import registry
from ..transforms.module import shared_default
from ..transforms.replay import has_effects
from .contents import Contents, contents
from .trees import Fields, Record

# S2S_SPECIALIZE: "1" (the default) specializes on a thread started by a signature's
# second call; "sync" makes that call specialize before it returns (the test suite: a
# third call then always runs the specialized code); "0" turns specializing off
OPTIMIZE = os.environ.get("S2S_SPECIALIZE", "1") not in ("0", "")
IN_BACKGROUND = os.environ.get("S2S_SPECIALIZE", "1") != "sync"


class _Unsigned(Exception):
    pass


def leaf_signature(a: Any) -> Any:
    t = type(a)
    if t is np.ndarray:
        return (a.shape, a.dtype)
    if t is float:
        return "f"
    if t is int or t is bool:
        return (t, a)
    if isinstance(a, np.generic):
        return (a.dtype, a.item() if a.dtype.kind in "iub" else None)
    if t is tuple or t is list:
        return (t, tuple(leaf_signature(x) for x in a))
    if t is dict or t is Fields or t is Record:  # (the plain forms of nodes too)
        sig = []
        for x in a.values():
            sig.append((x.shape, x.dtype) if type(x) is np.ndarray else leaf_signature(x))
        return (t, tuple(a), tuple(sig))
    raise _Unsigned


def call_signature(args: tuple) -> Any:
    """The arguments' structure, shapes and dtypes, and the values of integer scalars
    (None for other argument types): what later calls must share to run the code
    specialized to the first of them.  (Shapes that values decide, as a boolean mask
    or an integer array's entries do, are not assumed: s2s/optimize/signature_facts.py.)"""
    out = []
    try:
        for a in args:
            t = type(a)
            if t is np.ndarray:  # the common cases, inline
                out.append((a.shape, a.dtype))
            elif t is float:
                out.append("f")
            else:
                fixed = _INEXACT_SCALARS.get(t)
                out.append(fixed if fixed is not None else leaf_signature(a))
    except _Unsigned:
        return None
    return tuple(out)


def flat_key(args: tuple) -> tuple | None:
    """The shapes and dtypes of ``args``, one flat tuple, where every one is a plain
    array (a NumPy scalar has a shape and a dtype too: None for it); the hot paths'
    key (cheaper to hash than ``call_signature``'s nested pairs)."""
    key: list[Any] = []
    for a in args:
        if type(a) is not np.ndarray:
            return None
        key.append(a.shape)
        key.append(a.dtype)
    return tuple(key)


# NumPy's inexact scalar types -> their leaf_signature (the same for every value)
_INEXACT_SCALARS = {t: (np.dtype(t), None) for t in (
    np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128)}


class FreeSnapshot:
    """The objects a function's free names held when a signature was cached: later
    calls take the fast path only while each name holds the same object (an array
    also keeps its shape; a list, dict or tuple of them its items: ``Contents``).

    A module name or closure cell that held a plain array passes too while it holds
    another plain array of the same shape and dtype (``like``): a mini-batch loop's
    closure over each step's batch.  Sound because nothing cached depends on an
    array's identity or values: the code reads each free name's current object at
    every call (``read_free_names``), and the specializer keeps of a free array only
    the facts its shape and dtype imply (signature_facts.free_level: SHAPE, as its
    contents may change in place anyway)."""

    def __init__(self, items: list[tuple[Any, Any, Any]], names: frozenset[str]) -> None:
        self.items = items
        self.names = names  # the free names checked
        # how each is read back cheaply (every call with the signature checks them),
        # grouped by how: a dict's key, a closure cell, a function's defaults (one
        # check of the defaults' tuples per function, however many parameters read
        # them), any other by its read(); then the arrays' shapes and dtypes
        # (a plain array's (shape, dtype) last: another such array passes too)
        self._scope: list[tuple[dict, str, Any, Any]] = []
        self._cells: list[tuple[Any, Any, Any]] = []
        defaults: dict[int, tuple[Any, Any, Any, list[tuple[Any, Any]]]] = {}
        self._others: list[tuple[Any, Any]] = []
        self._layouts: list[tuple[np.ndarray, tuple, np.dtype]] = []
        self._contents: list[tuple[Any, Contents]] = []  # (a container's items)
        for var, value, layout in items:
            how, where, key = _how_read(var)
            if how is _SCOPE:
                self._scope.append((where, key, value, _plain_layout(value)))
            elif how is _CELL:
                self._cells.append((where, value, _plain_layout(value)))
            elif how is _DEFAULTS:
                found = defaults.get(id(where))
                if found is None or found[1] is not key[0] or found[2] is not key[1]:
                    found = defaults[id(where)] = (where, key[0], key[1], [])
                found[3].append((var, value))
            else:
                self._others.append((var, value))
            if type(layout) is Contents:
                self._contents.append((value, layout))
            elif layout is not None:
                self._layouts.append((value, layout[0], layout[1]))
        self._defaults = list(defaults.values())
        # a name whose value decided the code (`range(N)` of a comprehension): the
        # value itself, which an array changed in place changes under one identity
        self._values = [(var, var.value_key()) for var, _, _ in items
                        if hasattr(var, "value_key")]
        # a class of the user's: its methods too (a constructor's, replaced, is code
        # the emitted code holds a copy of)
        self._classes = [(value, class_methods(value)) for _, value, _ in items
                         if isinstance(value, type) and class_methods(value)]

    @staticmethod
    def take(ir: Function) -> "FreeSnapshot | None":
        items = []
        for var in ir.free.values():
            if var.also:
                return None
            try:
                value = var.read()
            except (KeyError, ValueError):
                return None
            inside = None
            if isinstance(value, (list, dict, set)) or shared_default(value):
                # (a tuple of dicts too: changed in place, not rebound) its items then
                inside = contents(value)
                if inside is None:
                    return None
            items.append((var, value, (value.shape, value.dtype)
                          if isinstance(value, np.ndarray) else inside))
        return FreeSnapshot(items, frozenset(ir.free))

    def same(self) -> bool:
        """Does every free name hold the object it held (an array its layout)?  The
        first call compiles the checks into one expression (``_compiled_check``)
        that later calls run instead (an instance attribute: no method between)."""
        check = _compiled_check(self)
        self.same = check if check is not None else self._same  # type: ignore[method-assign]
        return self.same()

    def _same(self) -> bool:
        for where, key, value, layout in self._scope:  # a module's (or a namespace's) name
            now = where.get(key, _MISSING)
            if now is not value and (layout is None or not like(now, layout)):
                return False
        for cell, value, layout in self._cells:
            try:
                now = cell.cell_contents
            except ValueError:  # (an empty cell)
                return False
            if now is not value and (layout is None or not like(now, layout)):
                return False
        for fn, defaults, kwdefaults, reads in self._defaults:
            if fn.__defaults__ is not defaults or fn.__kwdefaults__ is not kwdefaults:
                # other tuples: each default read again (the same objects pass)
                if not _same_reads(reads):
                    return False
        if self._others and not _same_reads(self._others):
            return False
        if self._values and not _same_values(self._values):
            return False
        for value, shape, dtype in self._layouts:  # (an array reshaped in place)
            if value.shape != shape or value.dtype != dtype:
                return False
        for value, inside in self._contents:  # (a container changed in place)
            if not inside.same(value):
                return False
        return all(class_methods(cls) == methods for cls, methods in self._classes)


MAX_COMPILED_CHECKS = 100


def _compiled_check(snapshot: FreeSnapshot) -> Callable[[], bool] | None:
    """``snapshot``'s checks (``FreeSnapshot._same``) as one function of no arguments
    returning one ``and`` of them, the objects compared against bound in its globals:
    ``d0.get(k0, MISSING) is v0 and (f0.__defaults__ is t0 and ... or reads(r0))``;
    None past ``MAX_COMPILED_CHECKS`` checks (the loops serve)."""
    env: dict[str, Any] = {}
    expression = check_expression(snapshot, env, "")
    if expression is None:
        return None
    source = "def same():\n    return " + expression + "\n"
    exec(compile(source, "<s2s:free_names_check>", "exec"), env)
    return env["same"]


def check_expression(snapshot: FreeSnapshot, env: dict[str, Any], prefix: str,
                     unread: Any = None, subscript: bool = False) -> str | None:
    """``FreeSnapshot._same``'s checks as one Python expression, its names (each
    starting with ``prefix``) bound in ``env``; None past ``MAX_COMPILED_CHECKS``
    checks.  (``_compiled_check``'s, and the hot paths' inline guards: api/hotcode.py.)
    ``unread``: a function whose parameters' defaults the calls checked cannot read
    (each parameter is passed: hotcode.unread_defaults), its defaults not checked;
    ``subscript``: a plain dict's name read as ``d[k]`` (a missing one raises
    KeyError, which the caller catches) rather than ``d.get(k, MISSING)``, and a
    closure cell's contents straight (an empty one raises ValueError, caught too)."""
    p = prefix
    env.update({f"{p}MISSING": _MISSING, f"{p}reads": _same_reads,
                f"{p}contents": _contents, f"{p}methods": class_methods, f"{p}like": like})
    terms = []
    for i, (where, key, value, layout) in enumerate(snapshot._scope):
        env[f"{p}d{i}"], env[f"{p}k{i}"], env[f"{p}v{i}"] = where, key, value
        read = f"{p}d{i}[{p}k{i}]" if subscript and type(where) is dict \
            else f"{p}d{i}.get({p}k{i}, {p}MISSING)"
        terms.append(_same_or_like(read, f"{p}v{i}", layout, env, f"{p}dl{i}", p))
    for i, (cell, value, layout) in enumerate(snapshot._cells):
        env[f"{p}c{i}"], env[f"{p}w{i}"] = cell, value
        # (subscript: the caller catches an empty cell's ValueError too)
        read = f"{p}c{i}.cell_contents" if subscript else f"{p}contents({p}c{i})"
        terms.append(_same_or_like(read, f"{p}w{i}", layout, env, f"{p}cl{i}", p))
    for i, (fn, defaults, kwdefaults, reads) in enumerate(snapshot._defaults):
        if fn is unread and unread is not None:
            continue
        env[f"{p}f{i}"], env[f"{p}t{i}"], env[f"{p}u{i}"], env[f"{p}r{i}"] = (
            fn, defaults, kwdefaults, reads)
        # (other tuples: each default read again, the same objects pass)
        terms.append(f"({p}f{i}.__defaults__ is {p}t{i} and {p}f{i}.__kwdefaults__ is "
                     f"{p}u{i} or {p}reads({p}r{i}))")
    if snapshot._others:
        env[f"{p}others"] = snapshot._others
        terms.append(f"{p}reads({p}others)")
    if snapshot._values:
        env[f"{p}values"], env[f"{p}same_values"] = snapshot._values, _same_values
        terms.append(f"{p}same_values({p}values)")
    for i, (value, shape, dtype) in enumerate(snapshot._layouts):  # (reshaped in place)
        env[f"{p}a{i}"], env[f"{p}s{i}"], env[f"{p}y{i}"] = value, shape, dtype
        terms.append(f"{p}a{i}.shape == {p}s{i} and {p}a{i}.dtype == {p}y{i}")
    for i, (value, inside) in enumerate(snapshot._contents):  # (changed in place)
        env[f"{p}n{i}"], env[f"{p}h{i}"] = value, inside
        terms.append(f"{p}h{i}.same({p}n{i})")
    for i, (cls, methods) in enumerate(snapshot._classes):
        env[f"{p}m{i}"], env[f"{p}z{i}"] = cls, methods
        terms.append(f"{p}methods({p}m{i}) == {p}z{i}")
    if len(terms) > MAX_COMPILED_CHECKS:
        return None
    return " and ".join(terms) or "True"


def _plain_layout(value: Any) -> tuple | None:
    """A plain array's (shape, dtype): another plain array of them may stand for it
    (FreeSnapshot); None for anything else (the same object only)."""
    return (value.shape, value.dtype) if type(value) is np.ndarray else None


def like(value: Any, layout: tuple) -> bool:
    """Is ``value`` a plain array of ``layout``'s shape and dtype?"""
    return type(value) is np.ndarray and value.shape == layout[0] and \
        value.dtype == layout[1]


def _same_or_like(read: str, held: str, layout: Any, env: dict[str, Any], name: str,
                  p: str) -> str:
    """The check that ``read`` is ``held`` (or, for a plain array, like it)."""
    if layout is None:
        return f"{read} is {held}"
    env[name] = layout
    return f"({read} is {held} or {p}like({read}, {name}))"


def class_methods(cls: type) -> tuple:
    """The functions of a user's class and its bases (none for a library's)."""
    if (getattr(cls, "__module__", None) or "builtins").split(".")[0] in (
            "builtins", "numpy", "scipy", "jax", "s2s"):
        return ()
    try:
        return tuple(v for c in cls.__mro__[:-1] for v in vars(c).values()
                     if isinstance(v, types.FunctionType))
    except (AttributeError, TypeError):
        return ()


def _contents(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # (an empty cell)
        return _MISSING


def _same_reads(reads: list[tuple[Any, Any]]) -> bool:
    for var, value in reads:
        try:
            if var.read() is not value:
                return False
        except (KeyError, ValueError):
            return False
    return True


def _same_values(values: list[tuple[Any, Any]]) -> bool:
    for var, key in values:
        try:
            if var.value_key() != key:
                return False
        except (KeyError, ValueError):
            return False
    return True


_SCOPE, _CELL, _DEFAULTS, _READ = "scope", "cell", "defaults", "read"
_MISSING = object()


def _how_read(var: Any) -> tuple[str, Any, Any]:
    """Where ``var`` reads its value, for ``FreeSnapshot.same`` to read it without a
    call: a dict's key, a closure cell, or a function's defaults (the same tuple
    objects: the same defaults); else its ``read()``."""
    from ..frontend.resolve import DefaultVar, FreeVar  # (loaded: ``var`` is its)

    if type(var) is FreeVar:
        if var.cell is not None:
            return _CELL, var.cell, None
        if type(var.scope) is dict:
            # emitted code's namespace mirrors the user's names (``read`` reads them
            # there): checked where the user writes them, else a transform of emitted
            # code (jacrev's vmap of the VJP) ran its code specialized for the `K` of
            # `x[:K]` after `K` changed (NumPy's ValueError from emitted code)
            upstream = var.scope.get(UPSTREAM)
            if upstream is not None and var.name in upstream:
                return _how_read(upstream[var.name])
            return _SCOPE, var.scope, var.name
    if type(var) is DefaultVar:
        return _DEFAULTS, var.fn, (var.fn.__defaults__, var.fn.__kwdefaults__)
    return _READ, None, None


class FastEntry:
    def __init__(self, fn: Callable, argnums: tuple[int, ...], free: FreeSnapshot,
                 generation: int, text: str | None, pending: bool) -> None:
        self.fn = fn
        self.pending = pending  # specialize at the next call with this signature
        self.free_names = bool(getattr(fn, "__s2s_free__", True))
        self.single: int | None = None  # grad of one argument, no aux: its position
        self.fresh = False  # the code returns only arrays it made (specialize.py)
        self.argnums = argnums
        self.free = free
        self.generation = generation
        self.text = text
        self.job: threading.Thread | None = None  # specializing in the background
        # the s2s.jit objects whose calls ran it (their tokens: a set test by identity,
        # cheaper than hashing the signature again)
        self.jits: set[object] = set()
        # s2s.jvp's cast of the results to the inputs' dtype: (the function, its
        # dtypes_down.target, whether results need nothing done, the IR), decided at
        # the first call it runs (api/pushforward.py)
        self.down: tuple[Any, Any, bool, Any] | None = None

    def valid(self) -> bool:
        return self.generation == registry.generation() and (
            not self.free.items or self.free.same())


def optimizer_bug(exc: Exception, owner: Any = None) -> None:
    """The specializer failed where the emitted code runs: the generic code serves the
    call; under the test suite (S2S_CHECK_EMITTED=1) it is an error to report (on a
    background thread: kept by ``owner`` and raised by its next call)."""
    if emitcode.CHECK_INVARIANTS:
        error = RuntimeError(f"s2s.specialize failed: {type(exc).__name__}: {exc}")
        error.__cause__ = exc
        if owner is None:
            raise error
        owner._spec_error = error


def read_free_names(fn: Callable) -> None:
    """Give emitted code the current values of the module constants it reads."""
    namespace = fn.__globals__
    for name, var in fn.__s2s_free__:  # type: ignore[attr-defined]
        namespace[name] = var.read()


def emitted_callees(compiled: Callable, free: dict, namespace: dict) -> list:
    """``(name, reader)`` of each emitted function the code ``compiled`` calls by name
    (a transform written in the body: ``s2s.grad(scaled)(y)``), whose namespace holds
    the module names it reads: ``read_free_names`` of ``compiled`` gives them their
    values too (its code kept the ``SCALE`` of the first call before)."""
    return [(n, _Refreshed(v)) for n, v in namespace.items() if n not in free and getattr(
        v, "__s2s_free__", None) and getattr(v, "__globals__", None) is not
        compiled.__globals__]


class _Refreshed:
    """An emitted callee as a free name of its caller's code: reading it gives the
    callee's own free names their current values."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn

    def read(self) -> Callable:
        read_free_names(self.fn)
        return self.fn


def calls_with_effects(ir: Function) -> bool:
    """Does the function draw random numbers, or call one that holds a kept statement
    (a print, an assert) or a draw?
    Its emitted code is not specialized: the specializer's passes take a call's value
    for the call's only effect, and would drop a call whose value the gradient does not
    read, and its print with it; and its probe run would draw a second time."""
    return any(isinstance(s, Let) and (s.prim == "draw" or s.prim == "call" and has_effects(
        s.params.get("callee"))) for s in walk(ir.body))
