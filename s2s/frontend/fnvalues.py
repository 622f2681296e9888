"""What a function value is while s2s lowers code that uses it (``FnValue``), and the
adapters emitted code calls where a callee was normalized for one call's plan
(``Plan``): ``apply(np.tanh, x)`` runs ``apply_tanh(x)``, a ``def`` s2s writes that
calls ``apply(tanh, x)``.  The lowering itself is ``functions.py``'s.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import re
import sys
import types
from dataclasses import dataclass, field, replace
from keyword import iskeyword
from typing import Any, Callable

from ..emit.forwards import LIFTED_FILES
from ..ir.nodes import Atom, Var
from .object_fields import object_fields
from .resolve import is_literal
from .synthesize import BOUND, PARTIAL, ItemFunctions, synthesize


@dataclass(frozen=True)
class FnValue:
    """A function as s2s knows it while lowering: ``obj`` called with ``head`` before
    the call's positional arguments and ``keywords`` (a partial's), and ``captured``
    (name, value) passed by name (a lifted function's free names); ``choice`` is
    ``(test, a, b)`` for ``a if test else b``.  Values are atoms or FnValues."""

    obj: Any
    text: str
    head: tuple = ()
    keywords: tuple = ()
    captured: tuple = ()
    spelled: bool = False  # `text` names the object in emitted code (a global)
    choice: tuple | None = None

    def texts(self) -> list[str]:
        """How emitted code names this value and the function values it holds."""
        inner = [t for v in self._values() if isinstance(v, FnValue) for t in v.texts()]
        return inner if self.choice is not None else [self.text, *inner]

    def leaves(self) -> list[Atom]:
        """The Var atoms it carries, in order (the data a callee given it receives)."""
        out: list[Atom] = []
        for value in self._values():
            if isinstance(value, FnValue):
                out += value.leaves()
            elif isinstance(value, Var):
                out.append(value)
        return out

    def _values(self) -> list[Any]:
        if self.choice is not None:
            return list(self.choice)
        return [*self.head, *(v for _, v in self.keywords), *(v for _, v in self.captured)]

    def rebuilt(self, atoms: Any) -> "FnValue":
        """The same function value with its Var atoms taken from ``atoms`` in order."""
        def one(value: Any) -> Any:
            if isinstance(value, FnValue):
                return value.rebuilt(atoms)
            return next(atoms) if isinstance(value, Var) else value

        if self.choice is not None:
            return replace(self, choice=tuple(one(v) for v in self.choice))
        return replace(self, head=tuple(one(v) for v in self.head),
                       keywords=tuple((k, one(v)) for k, v in self.keywords),
                       captured=tuple((k, one(v)) for k, v in self.captured))

    def key(self) -> tuple:
        """What a callee normalized for this value depends on (not the atoms' names)."""
        def one(value: Any) -> Any:
            if isinstance(value, FnValue):
                return value.key()
            return "·" if isinstance(value, Var) else ("const", value.text)

        if self.choice is not None:
            return ("choice",) + tuple(one(v) for v in self.choice)
        return (id(self.obj), tuple(one(v) for v in self.head),
                tuple((k, one(v)) for k, v in self.keywords),
                tuple((k, one(v)) for k, v in self.captured))

    def runtime(self, values: Any) -> Any:
        """The Python callable this value is when emitted code runs, its Var atoms'
        values taken from ``values`` in order (for the adapter, see ``Plan``)."""
        def one(value: Any) -> Any:
            if isinstance(value, FnValue):
                return value.runtime(values)
            return next(values) if isinstance(value, Var) else value.value

        if self.choice is not None:
            test, a, b = (one(v) for v in self.choice)
            return a if test else b
        head = [one(v) for v in self.head]
        keywords = {k: one(v) for k, v in (*self.keywords, *self.captured)}
        return functools.partial(self.obj, *head, **keywords) if head or keywords \
            else self.obj


@dataclass(frozen=True)
class FnSeq:
    """A tuple or list of function values passed as one argument (``chain((np.sin,
    np.tanh), x)``, a list the function filled with ``fs.append(lambda ...)``) or
    through a ``*fns`` parameter: the callee binds it as a container of functions
    (``fncontainers.py``), which a loop or comprehension over it unrolls."""

    items: tuple
    kind: type = tuple

    def texts(self) -> list[str]:
        return [t for fv in self.items for t in fv.texts()]

    def leaves(self) -> list[Atom]:
        return [a for fv in self.items for a in fv.leaves()]

    def rebuilt(self, atoms: Any) -> "FnSeq":
        return replace(self, items=tuple(fv.rebuilt(atoms) for fv in self.items))

    def key(self) -> tuple:
        return (self.kind.__name__,) + tuple(fv.key() for fv in self.items)

    def runtime(self, values: Any) -> Any:
        return self.kind(fv.runtime(values) for fv in self.items)


class Unbound:
    """A captured name not yet bound where the function is made: read at the call
    (``fallback``: its value after the loop that carried it out, if it is not bound
    again there)."""

    def __init__(self, name: str, fallback: Any = None) -> None:
        self.name, self.fallback = name, fallback


@dataclass
class Plan:
    """How a call passes its values to a callee normalized for it: per parameter of
    the callee, ``(kind, name, detail)`` with kind ``arg`` (one atom), ``fn`` (a
    function value: its atoms), ``star`` (``*name``: detail atoms), ``kw``
    (``**name``: detail keys), ``frozen`` (a scipy.stats distribution frozen in the
    caller: detail ``(dist, how many parameters)``, its parameters' atoms), ``fns``
    (a tuple or list of functions, detail a ``FnSeq``), ``fnstar`` (``*name`` given
    functions only: a ``FnSeq``).  ``params`` are the IR's parameters in order.
    ``roots``: the objects the caller's names for its function values denote (``f_fn``,
    a parameter's function), which the callee's code calls by those names."""

    entries: list[tuple[str, str, Any]] = field(default_factory=list)
    params: list[str] = field(default_factory=list)
    roots: dict[str, Any] = field(default_factory=dict)

    def key(self) -> tuple:
        return tuple((kind, name, detail.key() if isinstance(detail, (FnValue, FnSeq)) or (
            kind == "items") else detail) for kind, name, detail in self.entries) + tuple(
            sorted((root, id(obj)) for root, obj in self.roots.items()))

    def passes_as_is(self, fn: Any) -> bool:
        """Does the call pass each value to a positional parameter, in order (so that
        emitted code can call ``fn`` itself, with the IR's parameters)?"""
        sig = inspect.signature(fn, follow_wrapped=False).parameters
        return all(kind in ("arg", "default") and sig[name].kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            for kind, name, _ in self.entries)

    def adapter(self, fn: Any, name: str) -> Callable:
        """``def name(<the IR's parameters>)`` calling ``fn`` as the user's call did,
        with a source (emitted forward code calls it where it does not inline the
        callee, and a transform of emitted code reads it): ``apply(np.tanh, x)`` is
        ``def apply_2(x): return apply(tanh, x)``."""
        namespace: dict[str, Any] = {"functools": functools}
        params = iter(self.params)
        sig = inspect.signature(fn, follow_wrapped=False)
        args: list[str] = []
        by_name = False  # (a parameter left out before: the later ones by keyword)
        for kind, pname, detail in self.entries:
            if kind == "default" and object_fields(sig.parameters[pname].default) is not None:
                next(params)  # (its fields' view: Python binds the object itself)
                by_name = True
                continue
            if kind == "fn":
                text = _value_text(detail, params, namespace)
            elif kind == "fns":  # (a tuple or list of functions: written as one)
                texts = [_value_text(fv, params, namespace) for fv in detail.items]
                text = f"[{', '.join(texts)}]" if detail.kind is list else \
                    f"({', '.join(texts)}{',' if len(texts) == 1 else ''})"
            elif kind == "fnstar":  # (`compose(x, np.sin, relu)`: each passed as written)
                args += [_value_text(fv, params, namespace) for fv in detail.items]
                continue
            elif kind == "star":
                args += [next(params) for _ in range(detail)]
                continue
            elif kind == "kw":
                args += [f"{k}={next(params)}" for k in detail]
                continue
            elif kind == "frozen":  # (scipy.stats.<dist>(*its parameters))
                made = _bind(namespace, getattr(sys.modules["scipy.stats"], detail[0]),
                             detail[0])
                text = f"{made}({', '.join(next(params) for _ in range(detail[1]))})"
            else:
                text = next(params)
            keyword = sig.parameters[pname].kind is inspect.Parameter.KEYWORD_ONLY
            args.append(f"{pname}={text}" if keyword or by_name else text)
        target = fn.__self__ if isinstance(fn, types.MethodType) and (
            fn.__name__ == "__call__") else fn  # (a callable object: called as itself)
        stem_ = re.sub(r"\W+", "_", getattr(fn, "__name__", "fn")).strip("_") or "fn"
        callee = _bind(namespace, target, f"{stem_}_fn" if iskeyword(stem_)
                       else stem_)  # (a lambda's `<lambda>`: `lambda_fn`)
        source = (f"def {name}({', '.join(self.params)}):\n"
                  f"    return {callee}({', '.join(args)})\n")
        made = synthesize(source, name, namespace, f"adapter-{name}")
        held = {pname: ItemFunctions({k: fv.runtime(iter(())) for k, fv in detail.functions})
                for kind, pname, detail in self.entries if kind == "items"}
        if held:  # (its `cfg` holds functions: bound when emitted code is read again)
            setattr(made, BOUND, held)
        made.__s2s_structured__ = frozenset(  # type: ignore[attr-defined]
            pname for kind, pname, detail in self.entries
            if kind == "arg" and detail is not None and len(detail) > 2)  # (typetests.py)
        return made


# adapters by (function, plan): one object and one name each, process-wide, so the
# namespaces of callees merged into one emitted module never bind a name twice
_ADAPTERS: dict[tuple, tuple[str, Callable]] = {}
_ADAPTER_NAMES: set[str] = set()


def _adapter(fn: Any, plan: Plan, base: str) -> tuple[str, Callable]:
    if lifted(fn) and not _recursive(fn) and plan.passes_as_is(fn):
        # (`sq(x)` calls the nested `def sq` itself: emitted code shows its source)
        return lifted_name(fn), fn
    key = (id(fn), plan.key(), tuple(plan.params))
    hit = _ADAPTERS.get(key)
    if hit is not None and hit[1].__s2s_adapts__ is fn:  # type: ignore[attr-defined]
        return hit
    suffix = "_".join(_value_name(d) for kind, _, d in plan.entries if kind == "fn")
    name = f"{base}_{suffix}" if suffix else f"{base}_call"
    name, i = (name, 2) if name not in _ADAPTER_NAMES else (f"{name}_2", 3)
    while name in _ADAPTER_NAMES:
        name, i = f"{name.rsplit('_', 1)[0]}_{i}", i + 1
    _ADAPTER_NAMES.add(name)
    adapter = plan.adapter(fn, name)
    adapter.__s2s_adapts__ = fn  # type: ignore[attr-defined]
    _ADAPTERS[key] = (name, adapter)
    return name, adapter


def lifted(obj: Any) -> bool:
    """Is ``obj`` a nested ``def`` or ``lambda`` s2s lifted to module level (compiled
    from the text ``functions.py``'s ``lift`` registered)?"""
    return isinstance(obj, types.FunctionType) and obj.__code__.co_filename.startswith(
        LIFTED_FILES)


def lifted_name(fn: Any) -> str:
    """The one name a lifted function has in emitted code and adapters, process-wide
    (its own where free: ``sq``, ``lam``; never a name of its module or a builtin)."""
    hit = _BOUND.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    taken = {name for _, name in _BOUND.values()} | _ADAPTER_NAMES
    base = fn.__name__
    name, i = base, 2
    while name in taken or name in fn.__globals__ or hasattr(builtins, name):
        name, i = f"{base}_{i}", i + 1
    _BOUND[id(fn)] = (fn, name)
    return name


def _recursive(fn: Any) -> bool:
    """A recursive nested function (made in a maker: see ``synthesize``)?"""
    return PARTIAL in getattr(getattr(fn, "__code__", None), "co_freevars", ())


def _value_name(fv: "FnValue") -> str:
    if fv.choice is not None:
        return "choice"
    name = getattr(getattr(fv.obj, "__func__", fv.obj), "__name__", "fn")
    return name if name.isidentifier() and len(name) < 16 else "fn"


_BOUND: dict[int, tuple[Any, str]] = {}  # id(object) -> (it, its name in adapters)


def _bind(namespace: dict[str, Any], obj: Any, base: str) -> str:
    """A name for ``obj`` in an adapter's namespace: one name per object, process-wide
    (emitted code that calls two adapters puts their names in one module)."""
    if lifted(obj) and not _recursive(obj):
        namespace[lifted_name(obj)] = obj
        return lifted_name(obj)
    hit = _BOUND.get(id(obj))
    if hit is None or hit[0] is not obj:
        taken = {name for _, name in _BOUND.values()}
        name, i = base, 2
        while name in taken:
            name, i = f"{base}_{i}", i + 1
        hit = _BOUND[id(obj)] = (obj, name)
    namespace[hit[1]] = obj
    return hit[1]


def _value_text(fv: "FnValue", params: Any, namespace: dict[str, Any]) -> str:
    """Source for a function value whose atoms are the adapter's parameters."""
    def one(value: Any) -> str:
        if isinstance(value, FnValue):
            return _value_text(value, params, namespace)
        if isinstance(value, Var):
            return next(params)
        return value.text if is_literal(value.value) else _bind(namespace, value.value, "value")

    if fv.choice is not None:
        test, a, b = (one(v) for v in fv.choice)
        return f"({a} if {test} else {b})"
    target = fv.obj
    if isinstance(target, types.MethodType) and target.__name__ == "__call__":
        target = target.__self__  # a callable object: called as itself
    base = getattr(getattr(target, "__func__", target), "__name__", "fn")
    if PARTIAL in getattr(getattr(target, "__code__", None), "co_freevars", ()):
        base += "_closure"  # (a recursive closure's own IR binds its name to itself)
    obj = _bind(namespace, target, base if base.isidentifier() else "fn")
    parts = [one(v) for v in fv.head] + [f"{k}={one(v)}" for k, v in (*fv.keywords,
                                                                       *fv.captured)]
    return f"functools.partial({obj}, {', '.join(parts)})" if parts else obj


def spelled_here(n: Any, fv: FnValue) -> FnValue:
    """A function value a caller passed (a plan's): spelled by the text it had there
    only where that text names the same object in this function too.  (A global of
    another module, or a name the caller's emitted code bound, ``lam`` in an adapter,
    is called here through ``_planned_call``, which binds the name it calls it by.)"""
    def one(value: Any) -> Any:
        return spelled_here(n, value) if isinstance(value, FnValue) else value

    if fv.choice is not None:
        return replace(fv, choice=tuple(one(v) for v in fv.choice))
    fv = replace(fv, head=tuple(one(v) for v in fv.head),
                 keywords=tuple((k, one(v)) for k, v in fv.keywords),
                 captured=tuple((k, one(v)) for k, v in fv.captured))
    return fv if not fv.spelled or _names_here(n, fv.text, fv.obj) else replace(
        fv, spelled=False)


def _names_here(n: Any, text: str, obj: Any) -> bool:
    """Does ``text`` (``relu``, ``np.tanh``, ``net.loss``) read ``obj`` in the
    function ``n`` normalizes?"""
    parts = text.split(".")
    root = parts[0]
    if not all(p.isidentifier() for p in parts) or root in n.local_names:
        return False
    if root in n.resolver.closure:
        try:
            value = n.resolver.closure[root].cell_contents
        except ValueError:  # (an empty cell)
            return False
    elif root in n.fn.__globals__:
        value = n.fn.__globals__[root]
    else:
        value = getattr(builtins, root, _MISSING)
    for part in parts[1:]:
        value = getattr(value, part, _MISSING)
    if isinstance(obj, types.MethodType) and obj.__name__ == "__call__" and (
            value is obj.__self__):  # (a callable object, named as itself)
        return True
    return value is obj or isinstance(value, types.MethodType) and value == obj


_MISSING = object()
