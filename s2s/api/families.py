"""Functions made again with the same code (a lambda or nested ``def`` written in a
training loop, ``s2s.jvp(lambda w: g(w, x, y), (w,), (v,))``): one transform for all.

Each new function object would otherwise be parsed, normalized, emitted, formatted
and specialized again (84 ms a call for a Hessian-vector product).  Functions with
the same code object, the same module, the same defaults (spelled, with their
types: they are constants of the IR) and closure values with the same
``FreeVar.fingerprint`` (the facts about a free name the IR is built from: a
function's identity, a value's kind and rank) share one *canonical* function, a
copy of the first one with closure cells of its own.  A call copies the new
function's cell contents into those cells and runs the canonical function's
transform: exactly what happens when a closure variable of one function is
rebound between calls, which each transform already re-reads (values per call;
a changed fingerprint normalizes again; the specialized code is guarded by the
identity of what each cell holds: api/signatures.py ``FreeSnapshot``).
"""

from __future__ import annotations

import threading
import types
import weakref
from typing import Any, Callable

import numpy as np

from ..caches import LRU
from ..ir.kinds import LEAF

# (code, module, defaults, cells' fingerprints) -> (canonical function, its lock);
# the most recently used only: 1,000 lambdas of one line are one entry
# (the first function seen of a key: a weak reference to it)
_FAMILIES: LRU[Any, Any] = LRU(64)
# a function -> the canonical function its latest call ran as (s2s.source(f, "jvp"))
RAN_AS: "weakref.WeakKeyDictionary[Any, Callable]" = weakref.WeakKeyDictionary()
_SCALARS = (int, float, complex, bool, str, bytes, type(None))


def _default_key(value: Any) -> Any:
    """A default's key (a constant of the IR): its type and spelling (``1``, ``1.0``,
    ``True`` and ``-0.0`` differ); None where it is not a plain scalar."""
    if type(value) in _SCALARS:
        return (type(value), repr(value))
    if type(value) is tuple:
        items = tuple(_default_key(v) for v in value)
        return None if None in items else (tuple, items)
    return None


def family(fun: Any) -> tuple[Callable, threading.RLock, list] | None:
    """The canonical function ``fun``'s calls run as (and the lock its cells are
    swapped under), or None where ``fun`` is not a plain function made again (it has
    attributes, an empty cell, refers to itself, a default that is not a scalar)."""
    if type(fun) is not types.FunctionType or fun.__dict__:
        return None
    code = fun.__code__
    cells = fun.__closure__ or ()
    last = _LAST
    if last[0] is code and fun.__defaults__ is None and fun.__kwdefaults__ is None and \
            fun.__globals__ is last[1] and fun.__name__ == last[2] and \
            fun.__qualname__ == last[3]:
        found = _same_prints(fun, cells, last)
        if found is not None:
            RAN_AS[fun] = found[0]
            return found
    given = fun.__defaults__
    defaults = tuple(_default_key(d) for d in given) if given else ()
    kw = fun.__kwdefaults__
    kwdefaults = tuple(sorted((k, _default_key(v)) for k, v in kw.items())) if kw else ()
    if None in defaults or any(v is None for _, v in kwdefaults):
        return None
    prints = []
    for name, cell in zip(code.co_freevars, cells):
        try:
            value = cell.cell_contents
        except ValueError:  # (an empty cell)
            return None
        if type(value) is np.ndarray:  # (FreeVar.fingerprint of an array, inline)
            prints.append(("data", LEAF, value.ndim, ()))
            continue
        if value is fun or getattr(value, "__code__", None) is code:
            return None  # (recursion: the IR names the function itself)
        prints.append(_free_var()(name, cell).fingerprint())
    key = (code, id(fun.__globals__), fun.__name__, fun.__qualname__, defaults, kwdefaults,
           tuple(prints))
    try:
        found = _FAMILIES.get(key)
    except TypeError:  # (a fingerprint that does not hash)
        return None
    if type(found) is tuple:
        if found[0] is fun:  # (the canonical function itself)
            return None
        _remember(fun, cells, found, given is None and kw is None)
        RAN_AS[fun] = found[0]
        return found
    RAN_AS.pop(fun, None)
    if found is None or found() is fun:
        # the first function of its code (a module's function is only ever that)
        # runs as itself; the code made again runs as a canonical copy
        _FAMILIES[key] = weakref.ref(fun)
        return None
    canon = types.FunctionType(code, fun.__globals__, fun.__name__, fun.__defaults__,
                               tuple(types.CellType(c.cell_contents) for c in cells) or None)
    canon.__kwdefaults__ = dict(kw) if kw else None
    canon.__qualname__ = fun.__qualname__
    canon.__module__ = fun.__module__
    # (the ids in the key stay ids of those objects: the entry holds them)
    found = (canon, threading.RLock(), [c.cell_contents for c in cells])
    _FAMILIES[key] = found
    _remember(fun, cells, found, given is None and kw is None)
    return found


# the latest family found by its key, for ``family``'s test without one: (code, module
# dict, name, qualified name, per cell its array's number of axes or (the object
# itself,), the family); a function with defaults is looked up by its key
_LAST: tuple = (None,) * 6
# values whose fingerprint (FreeVar.fingerprint) the object's identity fixes: immutable
# scalars, and functions and library objects (``("object", id, ())``)
_BY_IDENTITY = frozenset({int, float, complex, bool, str, bytes, type(None),
                          types.FunctionType, types.BuiltinFunctionType, np.ufunc,
                          np.float64, np.float32, np.int64, np.int32, np.bool_})


def _identity_fixes(value: Any) -> bool:
    t = type(value)
    if t in _BY_IDENTITY:
        return t is not types.FunctionType or not value.__dict__
    module = getattr(t, "__module__", "") or ""  # (s2s's transforms: no functions held)
    return module.startswith("s2s.") and callable(value) and not isinstance(value, type)


def _remember(fun: Any, cells: tuple, found: tuple, plain: bool) -> None:
    """Keep ``found`` as the latest family (``_LAST``) where ``fun`` has no defaults
    and each cell holds an array or a value its identity fingerprints."""
    global _LAST
    checks: list = []
    for cell in cells:
        value = cell.cell_contents
        if type(value) is np.ndarray:
            checks.append(value.ndim)
        elif _identity_fixes(value):
            checks.append((value,))
        else:
            return
    if plain:
        _LAST = (fun.__code__, fun.__globals__, fun.__name__, fun.__qualname__,
                 tuple(checks), found)


def _same_prints(fun: Any, cells: tuple, last: tuple) -> Any:
    """``last``'s family where ``fun``'s cells hold what gives the fingerprints of its
    key (an array of the number of axes, the same object), else None (its key then)."""
    checks = last[4]
    if len(cells) != len(checks):
        return None
    for cell, want in zip(cells, checks):
        try:
            value = cell.cell_contents
        except ValueError:  # (an empty cell)
            return None
        if type(want) is int:
            if type(value) is not np.ndarray or value.ndim != want:
                return None
        elif value is not want[0] or type(value) is types.FunctionType and (
                value.__code__ is fun.__code__ or value.__dict__):
            return None
    found = last[5]
    return None if found[0] is fun else found


def _free_var() -> type:
    """frontend.resolve's FreeVar, imported on first use (libcst: the api imports no
    frontend module at its own import, tests/test_architecture)."""
    global _FREE_VAR
    if _FREE_VAR is None:
        from ..frontend.resolve import FreeVar

        _FREE_VAR = FreeVar
    return _FREE_VAR


_FREE_VAR: Any = None


def ran_as(fun: Any) -> Callable | None:
    """The canonical function ``fun``'s latest jvp ran as (None: itself); a member the
    jvp's family path ran (``runner``, which records nothing) finds its family again."""
    try:
        got = RAN_AS.get(fun)
    except TypeError:  # (not weak-referenceable)
        return None
    if got is None and type(fun) is types.FunctionType and fun.__code__ is _LAST[0]:
        found = family(fun)
        return None if found is None else found[0]
    return got


def runner(found: tuple[Callable, threading.RLock, list], owner: Any,
           miss: Any) -> Callable | None:
    """``run(fun, p, t)``: ``owner.last_hot(p, t)`` with the canonical function's cells
    holding the cell contents of ``fun``, a member of ``found``, the latest family
    (``_LAST``, whose test of a function without its key, ``family``'s first, it makes
    inline); ``miss`` where ``fun`` is not such a member, or what ``last_hot`` gives.
    As ``run_as`` of ``family(fun)``, in one generated frame (a closure's
    Hessian-vector product, ``s2s.jvp(lambda w: g(w, x, y), (w,), (v,))``, makes a new
    lambda at every call: finding its family and swapping its cells took three frames,
    a lock's context manager and loops, about 6 us).  None where ``found`` is not the
    latest family or a cell's test cannot pass."""
    last = _LAST
    if last[5] is not found:
        return None
    canon, lock, _ = found
    mine = canon.__closure__ or ()
    env: dict[str, Any] = {"CODE": last[0], "MODULE": last[1], "NAME": last[2],
                           "QUALNAME": last[3], "MISS": miss, "nd": np.ndarray,
                           "owner": owner, "lock": lock, "CANON": canon}
    lines = ["def run(fun, p, t):",
             "    if fun.__code__ is not CODE or fun.__globals__ is not MODULE or "
             "fun.__defaults__ is not None or fun.__kwdefaults__ is not None or "
             "fun.__name__ != NAME or fun.__qualname__ != QUALNAME or fun.__dict__ or "
             "fun is CANON:",
             "        return MISS"]
    n = len(last[4])
    if n != len(mine):
        return None
    tests = []
    for i, want in enumerate(last[4]):  # (_same_prints's tests)
        env[f"m{i}"] = mine[i]
        if type(want) is int:
            tests.append(f"type(v{i}) is nd and v{i}.ndim == {want}")
            continue
        env[f"W{i}"] = value = want[0]
        if type(value) is types.FunctionType:
            if value.__code__ is last[0]:
                return None
            tests.append(f"v{i} is W{i} and not W{i}.__dict__")
        else:
            tests.append(f"v{i} is W{i}")
    v = [f"v{i}" for i in range(n)]
    m = [f"m{i}.cell_contents" for i in range(n)]
    if n:
        lines += ["    try:", f"        {', '.join(f'c{i}' for i in range(n))}, = fun.__closure__",
                  f"        {', '.join(v)}, = {', '.join(f'c{i}.cell_contents' for i in range(n))},",
                  "    except (TypeError, ValueError):", "        return MISS",
                  f"    if not ({' and '.join(tests)}):", "        return MISS",
                  "    with lock:", f"        {', '.join(f's{i}' for i in range(n))}, = {', '.join(m)},",
                  f"        {', '.join(m)}, = {', '.join(v)},", "        try:",
                  "            return owner.last_hot(p, t)", "        finally:",
                  f"            {', '.join(m)}, = {', '.join(f's{i}' for i in range(n))},"]
    else:
        lines += ["    if fun.__closure__ is not None:", "        return MISS",
                  "    return owner.last_hot(p, t)"]
    exec(compile("\n".join(lines) + "\n", "<s2s:family_path>", "exec"), env)
    return env["run"]


def run_as(found: tuple[Callable, threading.RLock, list], fun: Callable,
           call: Callable[[Callable], Any]) -> Any:
    """``call(canon)`` with the canonical function's cells holding ``fun``'s values
    (restored after: a call of the same family inside it, or on another thread,
    sees its own)."""
    canon, lock, _ = found
    mine = canon.__closure__ or ()
    with lock:
        saved = [c.cell_contents for c in mine]
        try:
            for c, given in zip(mine, fun.__closure__ or ()):
                c.cell_contents = given.cell_contents
            return call(canon)
        finally:
            for c, old in zip(mine, saved):
                c.cell_contents = old
