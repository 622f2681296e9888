"""Hot paths generated per plan: one Python function that makes, in one frame, every
check a planned call makes (api/hotcalls.py's ``_plan_call``, api/treecalls.py's
``_tree_call``), then runs the code.

A plan holds what a specialized entry assumes of its arguments: their structure (the
containers' exact types, a dict's keys in order, the number of items), each array's
shape and dtype, each scalar's type, each integer's value.  ``hot_function`` writes
those facts out as straight-line tests of the arguments (the arrays' layouts in one
comparison, ``(type(a0), a0.dtype, a0.shape, ...) != L``: each item first by identity,
a dtype then by the key's equality), then the plan's guards inline (the rules'
generation, no background specializing failed, the free names' objects:
``signatures.check_expression``, the expression ``FreeSnapshot.same`` runs), then the
code, then the checks of its result that return it as it is (a fresh, writeable array
of its primal's dtype and shape; a dict of them; a scalar gradient as a new 0-d array);
any other result goes to the plan's own finishing (``finish``), as the dictionary path's
does.  Any test that fails returns ``MISS``: the caller's dictionary path runs, whose
key and guards decide again.  A structure the tests do not cover (a NamedTuple, a
registered class, ``None``) gets no generated function (None)."""

from __future__ import annotations

import cmath
from types import FunctionType
from typing import Any, Callable

import numpy as np

try:  # (np.count_nonzero's own function, without its Python frame)
    from numpy._core.multiarray import count_nonzero
except ImportError:  # pragma: no cover (NumPy 1.x)
    count_nonzero = np.count_nonzero

from ..primitives.registry import _GENERATION
from .signatures import check_expression, read_free_names

__all__ = ["MISS", "hot_function", "no_hot"]

MISS = object()  # (no plan, or a check failed: the checked path runs)

_NP_SCALARS = (np.float16, np.float32, np.float64, np.longdouble)
SCALAR_RESULTS = frozenset({float, *_NP_SCALARS})


def no_hot(args: tuple) -> Any:
    """The hot path of a transform with no plan run yet."""
    return MISS


class _Writer:
    def __init__(self) -> None:
        self.env: dict[str, Any] = {"MISS": MISS, "nd": np.ndarray, "GEN": _GENERATION,
                                    "SR": SCALAR_RESULTS, "asarray": np.asarray}
        self.lines: list[str] = []
        self.tests: list[str] = []
        # each array's type, dtype and shape: (expression, value), one comparison
        self.layouts: list[tuple[str, Any]] = []

    def const(self, value: Any) -> str:
        name = f"c{len(self.env)}"
        self.env[name] = value
        return name

    def flush(self) -> None:
        if self.tests:
            self.lines.append(f"    if not ({' and '.join(self.tests)}):")
            self.lines.append("        return MISS")
            self.tests = []

    def flush_layouts(self) -> None:
        """The arrays' layouts, one tuple compared with the expected one (a bytecode
        per attribute read, not a test and a jump each): a type compared by identity,
        a dtype by equality (the key's), a shape by value.  An argument that is not an
        array may have no ``dtype`` or one that raises: a miss too."""
        if self.layouts:
            exprs = ", ".join(e for e, _ in self.layouts)
            want = self.const(tuple(v for _, v in self.layouts))
            self.lines += ["    try:", f"        if ({exprs},) != {want}:",
                           "            return MISS", "    except Exception:",
                           "        return MISS"]
            self.layouts = []

    def structure(self, a: Any, name: str) -> bool:
        """Tests that ``name`` has ``a``'s structure, layouts and integer values (the
        facts of its tree key: treecalls._walk); False where none are written."""
        t = type(a)
        if t is np.ndarray:
            self.layouts += [(f"type({name})", t), (f"{name}.dtype", a.dtype),
                             (f"{name}.shape", a.shape)]
            return True
        if t is float or t in _NP_SCALARS:
            self.tests.append(f"type({name}) is {self.const(t)}")
            return True
        if t is int or t is bool:
            self.tests.append(f"type({name}) is {self.const(t)} and {name} == {a!r}")
            return True
        if t is dict or t is tuple or t is list:
            test = f"type({name}) is {self.const(t)} and len({name}) == {len(a)}"
            if t is dict:
                if not all(type(k) is str for k in a):
                    return False
                test += f" and tuple({name}) == {self.const(tuple(a))}"
            self.tests.append(test)
            if not a:
                return True
            self.flush()
            children = [f"{name}_{j}" for j in range(len(a))]
            values = a.values() if t is dict else a
            self.lines.append(f"    {', '.join(children)}, = {name}"
                              f"{'.values()' if t is dict else ''}")
            return all(self.structure(v, c) for v, c in zip(values, children))
        return False

    def as_it_is(self, p: Any) -> None:
        """Return ``r``, the gradient of the primal ``p``, where it needs no cast: an
        array of ``p``'s dtype and shape, writeable (a dict of them, in ``p``'s key
        order), or a new 0-d array of a scalar (``treecalls._fresh_like``)."""
        t = type(p)
        if t is np.ndarray:
            self.lines.append(f"    if type(r) is nd and (r.dtype, r.shape, r.flags.writeable)"
                              f" == {self.const((p.dtype, p.shape, True))}:")
            self.lines.append("        return r")
            if p.shape == ():
                self.lines.append("    if type(r) in SR:")
                self.lines.append(f"        return asarray(r, dtype={self.const(p.dtype)})")
        elif t is float or t in _NP_SCALARS:
            self.lines.append("    if type(r) in SR:")
            self.lines.append(f"        return asarray(r, dtype={self.const(np.dtype(t))})")
        elif t is dict and p and all(type(v) is np.ndarray for v in p.values()):
            names = [f"r_{j}" for j in range(len(p))]
            self.lines.append(f"    if type(r) is dict and len(r) == {len(p)} and "
                              f"tuple(r) == {self.const(tuple(p))}:")
            self.lines.append(f"        {', '.join(names)}, = r.values()")
            types = " and ".join(f"type({n}) is nd" for n in names)
            got = ", ".join(f"{n}.dtype, {n}.shape, {n}.flags.writeable" for n in names)
            want = self.const(tuple(x for v in p.values() for x in (v.dtype, v.shape, True)))
            self.lines.append(f"        if {types} and ({got}) == {want}:")
            self.lines.append("            return r")


# the transforms that call their function with their own call's arguments in a grad-like
# mode: api/transformed.py's class (by name: that module imports this one)
_GRAD_LIKE = {"s2s.api.transformed": "Transformed"}


def unread_defaults(owner: Any, passed: int) -> Any:
    """The function whose parameters' defaults no call of ``owner`` with ``passed``
    positional arguments (and no keywords: the hot paths' calls) reads: the user's
    function ``owner`` transforms (through grad-like transforms, which pass it the
    same arguments: ``grad(f)(x, y)`` calls ``f(x, y)``) where ``passed`` covers every
    parameter it has and it has no keyword-only ones; else None.  (Its defaults are
    then a fact of the signature, not a guard: a replaced ``f.__defaults__`` changes
    no such call.)"""
    fn = getattr(owner, "fn", None)
    while _GRAD_LIKE.get(getattr(type(fn), "__module__", None)) == type(fn).__qualname__ \
            and fn.mode in ("grad", "value_and_grad"):
        fn = fn.fn
    code = getattr(fn, "__code__", None)
    if type(fn) is not FunctionType or code is None or code.co_kwonlyargcount or \
            code.co_argcount > passed:
        return None
    return fn


def _free_reads(fn: Callable, w: _Writer) -> list[str]:
    """``read_free_names(fn)`` written out: a closure cell's contents read straight
    (``FreeVar.read`` of a cell), any other name by its variable's ``read()``."""
    names = w.const(fn.__globals__)
    lines = []
    for name, var in fn.__s2s_free__:  # type: ignore[attr-defined]
        cell = getattr(var, "cell", None) if type(var).__name__ == "FreeVar" else None
        got = f"{w.const(cell)}.cell_contents" if cell is not None else f"{w.const(var)}.read()"
        lines.append(f"    {names}[{name!r}] = {got}")
    return lines


def hot_function(owner: Any, plan: tuple, args: tuple, finish: Callable,
                 primal: int | None, guards: str | None = None, env: dict | None = None,
                 located: Callable | None = None,
                 any_array: bool = False,
                 pair: list | None = None, split: bool = False,
                 keep: tuple[int, ...] | None = None) -> Callable | None:
    """The generated hot path of ``plan`` (``_plan_call``'s or ``_tree_call``'s: its
    entry, code, free-names check, whether the code reads free names, the rules'
    generation at [0:5]), made from ``args``, a call's arguments that its key took:
    ``hot(args)`` is the result of the plan's code, or ``MISS``.  ``finish(args,
    result)``: the result made as the dictionary path makes it; ``primal``: the
    position of the one argument a result returned as it is may be the gradient of
    (None: every result goes to ``finish``).  ``owner``: the transform (its
    ``_spec_error``, read at each call).  ``guards``: another expression of what the
    plan needs besides its free names' objects (names bound in ``env``, ``owner``
    among them) in place of the rules' generation and ``_spec_error``; ``located``:
    where the code's ValueError or IndexError goes (``located(err)``: the caller's
    frame does not catch them); ``any_array``: a result that is an array of numbers is
    returned as it is (vmap's code that returns fresh arrays, nothing to cast); ``pair``:
    a JVP's two results are returned as they are where they are arrays of one shape and
    of the dtype ``pair[0]`` (pushforward.py's hot path, which sets it); ``split``:
    the function is ``hot(primals, tangents)`` of ``s2s.jvp``'s own arguments (two
    tuples of one array each, ``args`` their items), called straight from
    ``jvp``'s first lines (no argument tuple to build there); with ``keep``, the
    tuples hold several primals and as many tangents, and the code takes the primals
    and the tangents at ``keep`` only (``args``: those), the others tested to be all
    zero (a NaN is not) and to have their primal's layout, and both results finite
    (pushforward._jvp_kept's conditions)."""
    entry, fn, check, reads, generation = plan[:5]
    w = _Writer()
    names = [f"a{i}" for i in range(len(args))]
    zeros: list[str] = []
    if keep is not None:  # (jvp's primals and their tangents, some zero, in tuples)
        n = len(args) - len(keep)
        tangents = [f"t{i}" for i in range(n)]
        names = names[:n] + [tangents[i] for i in keep]
        zeros = [tangents[i] for i in range(n) if i not in keep]
        w.lines += ["    if type(p) is not tuple or type(t) is not tuple:", "        return MISS",
                    "    try:", f"        {', '.join(names[:n])}, = p",
                    f"        {', '.join(tangents)}, = t", "    except ValueError:",
                    "        return MISS"]
    elif split:  # (jvp's one primal and its tangent, in tuples: lists take jvp's own path)
        assert len(args) == 2
        w.lines += ["    if type(p) is not tuple or type(t) is not tuple:", "        return MISS",
                    "    try:", "        a0, = p", "        a1, = t", "    except ValueError:",
                    "        return MISS"]
    elif args:  # (another number of arguments: ValueError)
        w.lines += ["    try:", f"        {', '.join(names)}, = args", "    except ValueError:",
                    "        return MISS"]
    else:
        w.lines += ["    if args:", "        return MISS"]
    for a, name in zip(args, names):
        if not w.structure(a, name):
            return None
    for z in zeros:  # (a zero tangent: its primal's layout, then no entry not zero)
        of = args[int(z[1:])]
        w.layouts += [(f"type({z})", np.ndarray), (f"{z}.dtype", of.dtype),
                      (f"{z}.shape", of.shape)]
    w.flush()
    w.flush_layouts()
    if zeros:
        w.env.update(CNZ=count_nonzero, isfinite=cmath.isfinite, vdot=np.vdot)
        w.lines += [f"    if {' or '.join(f'CNZ({z})' for z in zeros)}:", "        return MISS"]
    free = "True"
    if check is not None:
        passed = len(args) - len(keep) if keep is not None else 1 if split else len(args)
        free = check_expression(entry.free if hasattr(entry, "free") else entry, w.env,
                                "g_", unread_defaults(owner, passed),
                                subscript=True) or f"{w.const(check)}()"
    w.env.update(env or {})
    w.env.update(owner=owner, fn=fn, finish=finish, read=read_free_names, located=located)
    if guards is None:
        guards = f"GEN[0] == {generation!r} and owner._spec_error is None"
    # (a module's name no longer bound: KeyError; an empty closure cell: ValueError)
    w.lines += ["    try:", f"        if not ({guards} and {free}):", "            return MISS",
                "    except (KeyError, ValueError):", "        return MISS"]
    if reads:
        w.lines += _free_reads(fn, w)
    call = f"r = fn({', '.join(names)})"
    if located is None:
        w.lines.append(f"    {call}")
    else:
        w.lines += ["    try:", f"        {call}", "    except (ValueError, IndexError, TypeError) as err:",
                    "        located(err)"]
    if primal is not None:
        w.as_it_is(args[primal])
    if any_array:
        w.lines += ["    if type(r) is nd and not r.dtype.hasobject:", "        return r"]
    if pair is not None:
        w.env["PASSED"] = pair
        finite = " and isfinite(vdot(o, od))" if zeros else ""
        w.lines += ["    o, od = r", "    if type(o) is nd and type(od) is nd and od.dtype is o.dtype "
                    f"is PASSED[0] and od.shape == o.shape{finite}:", "        return r"]
    given = f"({', '.join(names)})" if keep is not None else "(a0, a1)" if split else "args"
    w.lines.append(f"    return finish({given}, r)")
    source = f"def hot({'p, t' if split or keep is not None else 'args'}):\n" + "\n".join(w.lines) + "\n"
    exec(compile(source, "<s2s:hot_path>", "exec"), w.env)
    hot = w.env["hot"]
    hot.__s2s_source__ = source  # (what it checks, for a reader)
    return hot
