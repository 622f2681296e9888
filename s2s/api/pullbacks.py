"""What ``s2s.vjp``'s pullback (``vjp_fn``) runs, fixed when ``vjp`` is called.

JAX's ``vjp`` traces the function once: its pullback computes with the primals,
closure values and module constants as they were at ``vjp()`` time.  s2s's
pullback runs emitted code that computes the forward pass again, so that code, the
primals it is given and the free names it reads are all taken at ``vjp()`` time:
the primals copied (the caller may write into its arrays, ``w[:] = 0``), the
emitted function generated for the free names' kinds then, and each free name's
object then (a closure variable rebound by a loop, a module constant rebound; an
object, dict or list copied all the way down: ``_kept``) held by the code's own
copy of its module namespace (``_own_code``: nothing another transform's call
shares is written, so a grad on another thread calling the same emitted callee
reads its own objects).  ``linearize``'s linear function (api/linear.py) and the
JAX backend's pullback (``own_namespace``) are fixed so too.

An array a free name holds is kept as that object, not copied: an array written
into in place after ``vjp()`` is read with its new contents, as JAX's pullback on a
CPU reads them (its constant shares the NumPy array's memory: ``X[:] = 0`` after
``jax.vjp(lambda w: jnp.sin(X @ w), w)`` gives zeros), and no data set is copied
at each step.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Callable

import numpy as np

from .arguments import _held_names
from .signatures import _Refreshed
from .trees import _copies


def _snapshot(fn: Callable) -> list[tuple[str, Any, list | None]]:
    """``(name, object, callee's snapshot or None)`` of each free name the emitted
    function ``fn`` reads (a callee emitted apart: its own free names too)."""
    taken: list[tuple[str, Any, list | None]] = []
    for name, var in fn.__s2s_free__:  # type: ignore[attr-defined]
        if type(var) is _Refreshed:
            taken.append((name, var.fn, _snapshot(var.fn)))
        else:
            taken.append((name, _kept(var.read()), None))
    return taken


_AS_IT_IS = (np.ndarray, np.generic, int, float, complex, bool, str, bytes, type(None),
             type, types.FunctionType, types.BuiltinFunctionType)


def _kept(value: Any, memo: dict | None = None) -> Any:
    """``value`` as the emitted code reads it at a later call as it would now: a
    module of the user's, a plain object (``cfg.scale``), a dict, list or tuple the
    code reads attributes or items of, copied all the way down (an attribute rebound
    later, however deep, is not seen: ``CFG.a.b.c.d["k"]``, ``cfgmod.DEEP.scale``); an
    array, a number, a function, a class, a library's module as it is.  ``memo``: the
    copies made so far by id (an object met twice, or in a cycle, copied once)."""
    kind = type(value)
    if kind in _AS_IT_IS or isinstance(value, _AS_IT_IS):
        return value
    memo = {} if memo is None else memo
    found = memo.get(id(value))
    if found is not None:  # (a tuple still being made, met through a cycle: as it is)
        return value if found[1] is None else found[1]
    memo[id(value)] = (value, None)  # (the value kept alive: its id stays its own)
    made = _kept_new(value, kind, memo)
    memo[id(value)] = (value, made)
    return made


def _kept_new(value: Any, kind: type, memo: dict) -> Any:
    if kind is tuple:
        return tuple(_kept(v, memo) for v in value)
    if kind is dict:
        made: Any = {}
        memo[id(value)] = (value, made)
        made.update((k, _kept(v, memo)) for k, v in value.items())
        return made
    if kind is list:
        made = []
        memo[id(value)] = (value, made)
        made.extend(_kept(v, memo) for v in value)
        return made
    if kind is types.ModuleType:
        if _library(value):
            return value
        made = types.ModuleType(value.__name__)
        memo[id(value)] = (value, made)
        made.__dict__.update((k, v if k.startswith("__") else _kept(v, memo))
                             for k, v in value.__dict__.items())
        return made
    own = getattr(value, "__dict__", None)
    if kind is types.SimpleNamespace:
        made = types.SimpleNamespace()
    elif type(own) is not dict or hasattr(kind, "__slots__") or kind.__module__ == "builtins":
        return value
    else:
        try:
            made = object.__new__(kind)  # (no __init__ nor __copy__ of the user's)
        except TypeError:  # (a subclass of a builtin type: as it is)
            return value
    memo[id(value)] = (value, made)
    made.__dict__.update((k, _kept(v, memo)) for k, v in own.items())
    return made


def _library(module: types.ModuleType) -> bool:
    """A module of Python's or of an installed package (``np``: not the user's
    settings; not copied)."""
    top = module.__name__.partition(".")[0]
    where = getattr(module, "__file__", None) or ""
    return top in sys.stdlib_module_names or "site-packages" in where or \
        "dist-packages" in where or top == "s2s"


class _Held:
    """A free name of a pullback's own code: reads the object it held at ``vjp()``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def read(self) -> Any:
        return self.value


def _own_code(fn: Callable, taken: list[tuple[str, Any, list | None]],
              made: dict[int, dict] | None = None) -> Callable:
    """A copy of the emitted function ``fn`` whose module namespace is its own: a copy
    of ``fn``'s, its free names holding the objects ``taken`` (an emitted callee's
    copy made so too), its sibling functions (defined by the same emitted module)
    bound to it.  Nothing shared is written: a grad of another function calling the
    same emitted callee, on another thread, reads its own objects meanwhile (setting
    them back into the shared namespace under a lock of the pullback's raced it)."""
    made = {} if made is None else made
    shared = fn.__globals__
    namespace = made.get(id(shared))
    if namespace is None:
        namespace = made[id(shared)] = dict(shared)
        for name, value, inner in taken:
            namespace[name] = _own_code(value, inner, made) if inner is not None else value
        for name in _siblings(fn):
            namespace[name] = _rebound(shared[name], namespace)
    _held_names(fn)  # (cached on fn: its copies share it, api/arguments.py's _foreign)
    copy = _rebound(fn, namespace)
    copy.__s2s_free__ = [(n, _Held(namespace[n])) for n, _, _ in taken]  # type: ignore
    return copy


def own_namespace(fn: Callable, made: dict[int, dict] | None = None) -> Callable:
    """A copy of the emitted function ``fn`` (prepared for JAX: its names translated
    now) on a copy of its namespace, as it is now: its sibling functions bound to it,
    an emitted callee it holds (another namespace) copied so too.  Later calls of
    other transforms set that namespace's names again; this copy keeps these."""
    made = {} if made is None else made
    shared = fn.__globals__
    namespace = made.get(id(shared))
    if namespace is None:
        namespace = made[id(shared)] = dict(shared)
        for name, value in shared.items():
            if type(value) is types.FunctionType and value.__globals__ is shared:
                namespace[name] = _rebound(value, namespace)
            elif type(value) is types.FunctionType and hasattr(value, "__s2s_numpy__"):
                namespace[name] = own_namespace(value, made)
    found = namespace.get(fn.__name__)
    if type(found) is types.FunctionType and found.__code__ is fn.__code__ and \
            found.__globals__ is namespace:
        return found
    return _rebound(fn, namespace)


def _rebound(fn: Callable, namespace: dict) -> Callable:
    copy = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    copy.__dict__.update(fn.__dict__)
    return copy


def _siblings(fn: Callable) -> tuple[str, ...]:
    """The names of the functions ``fn``'s emitted module defines besides ``fn``."""
    found = fn.__dict__.get("__s2s_siblings__")
    if found is None:
        namespace = fn.__globals__
        found = fn.__dict__["__s2s_siblings__"] = tuple(
            n for n, v in list(namespace.items()) if type(v) is types.FunctionType and
            v.__globals__ is namespace and v is not fn)
    return found


class Frozen:
    """The emitted VJP function of a transform ``t`` for ``primals`` (of structures
    ``kinds``, ``float_args`` the differentiated ones), with copies of the primals,
    the defaults and the free names' objects as they are now."""

    __slots__ = ("fn", "primals", "rest", "free")

    def __init__(self, t: Any, kinds: tuple, float_args: tuple, primals: tuple) -> None:
        t._refresh()  # (a free name that changed kind: normalized again, now)
        _, self.fn = t._generate(kinds, float_args, True, nargs=len(primals),
                                 inner_args=primals)
        self.free = _snapshot(self.fn)
        if self.free:  # (the code, its namespace and its callees' its own)
            self.fn = _own_code(self.fn, self.free)
        self.rest = tuple(t.ir.defaults[p] for p in t.ir.params[len(primals):])
        self.primals = _copies(primals)  # (never the caller's arrays: it may write)

    def call(self, cotangent: Any) -> Any:
        """The emitted code run on the kept primals, its free names holding the
        objects they held at ``vjp()`` (its own copy of the code: ``_own_code``)."""
        return self.fn(*self.primals, *self.rest, cotangent)


# ---- linearize's linear function (api/extras.py) ------------------------------------


def frozen_function(fun: Any) -> Any:
    """``fun`` with closure cells of its own holding what its cells hold now (a
    closure variable rebound later is not seen: a family member of ``fun``'s code,
    api/families.py, so no transform is made again); a bound method, bound to a
    copy of its object (``_kept``: an attribute rebound later is not seen; s2s
    transforms a method per class); ``fun`` itself where it has no closure or is
    neither."""
    if type(fun) is types.MethodType:
        obj = fun.__self__
        if isinstance(getattr(obj, "__dict__", None), dict) and \
                not hasattr(type(obj), "__slots__") and not isinstance(obj, type):
            try:
                made = object.__new__(type(obj))  # (no __init__ nor __copy__ of the user's)
            except TypeError:  # (a subclass of a builtin type: as it is)
                return fun
            memo: dict = {}
            made.__dict__.update({k: _kept(v, memo) for k, v in obj.__dict__.items()})
            return types.MethodType(frozen_function(fun.__func__), made)
        return fun
    if type(fun) is not types.FunctionType or not fun.__closure__:
        return fun
    try:
        cells = tuple(types.CellType(c.cell_contents) for c in fun.__closure__)
    except ValueError:  # (an empty cell: the call raises as the user's would)
        return fun
    made = types.FunctionType(fun.__code__, fun.__globals__, fun.__name__,
                              fun.__defaults__, cells)
    made.__kwdefaults__ = dict(fun.__kwdefaults__) if fun.__kwdefaults__ else None
    made.__qualname__, made.__module__ = fun.__qualname__, fun.__module__
    made.__dict__.update(fun.__dict__)
    return made
