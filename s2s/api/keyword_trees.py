"""Pytree arguments passed by keyword or left at their defaults, passed by position.

Emitted code reads a NamedTuple, a dataclass or a registered object as the plain
dict of its fields, a structure known per call from the positional arguments
(``trees.plain_args``); a parameter given by keyword (``s2s.grad(f)(x, p=params)``)
or left at its default (``def step(w, cfg=OptConfig(...))``) was read as an array, and
``p.w`` refused.  A call is rewritten as Python binds it: the parameters up to the
last such one move into the positional arguments (a default read at each call, so a
default object changed in place is seen), which ``argnums`` does not count past
(``argnums`` negative: left as it was)."""

from __future__ import annotations

import inspect
import linecache
from typing import Any

from ..errors import Loc, TransformError
from ..frontend.synthesize import signature_text, synthesize
from .trees import is_node, loose_dataclass

_EMPTY = inspect.Parameter.empty


def parameters(fn: Any) -> tuple[tuple[tuple[str, Any], ...], bool]:
    """``((name, default), ...)`` of ``fn``'s leading positional-or-keyword
    parameters, and whether a default among them is a pytree object."""
    try:
        sig = inspect.signature(fn, follow_wrapped=False)
    except (TypeError, ValueError):
        return (), False
    found = []
    for p in sig.parameters.values():
        if p.kind is not p.POSITIONAL_OR_KEYWORD:
            break
        found.append((p.name, p.default))
    return tuple(found), any(is_object(d) for _, d in found)


def is_object(value: Any) -> bool:
    return value is not _EMPTY and (is_node(value) or loose_dataclass(value))


def as_positional(spec: tuple, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``(args, kwargs)`` with the parameters up to the last one that gets a pytree
    object by keyword or by its default passed by position (``spec``: ``parameters``'
    pair and the largest ``argnums``); unchanged where there is none, where a parameter
    before it gets nothing (Python's own error then), or where ``argnums`` names a
    position the call does not pass (JAX's error then: argnums count positionals)."""
    params, _, most = spec[:3]
    n = len(args)
    if most >= n:
        return args, kwargs
    if len(spec) > 3:  # (the function: its defaults as they are now)
        params = _live(spec[3], params)
    values = [kwargs[name] if name in kwargs else default for name, default in params[n:]]
    last = max((k for k, v in enumerate(values) if is_object(v)), default=None)
    if last is None or any(v is _EMPTY for v in values[:last + 1]):
        return args, kwargs
    moved = {name for name, _ in params[n:n + last + 1]}
    return args + tuple(values[:last + 1]), {k: v for k, v in kwargs.items()
                                              if k not in moved}


def _live(fn: Any, params: tuple) -> tuple:
    """``params`` with the defaults ``fn`` has now (``f.__defaults__`` replaced since
    the transform was made: Python binds the new object, and so does the call)."""
    fn = getattr(fn, "__func__", fn)
    fn = getattr(fn, "__s2s_variant_of__", fn)  # (a copy for its arguments' classes)
    code = getattr(fn, "__code__", None)
    defaults = getattr(fn, "__defaults__", None) or ()
    if code is None:
        return params
    start = code.co_argcount - len(defaults)
    live = tuple((name, defaults[k - start] if k >= start else _EMPTY)
                 for k, (name, _) in enumerate(params))
    for (name, now), (_, then) in zip(live, params):
        if is_object(then) and type(now) is not type(then):  # (its code: for `then`'s)
            raise TransformError(
                f"the default of `{name}` was replaced by a `{type(now).__name__}` object; "
                f"this transform was made for a `{type(then).__name__}` one", Loc(
                    code.co_filename, code.co_firstlineno, 1, linecache.getline(
                        code.co_filename, code.co_firstlineno).rstrip("\n")),
                f"make the transform again after replacing the default (or pass `{name}`)",
                fn.__name__)
    return live


def leaving_objects(fun: Any, nargs: int, keys: tuple[str, ...]) -> Any:
    """For a call of ``fun`` passing ``nargs`` positional arguments and keywords
    ``keys`` that leaves a parameter at a default that is a pytree object (``jvp`` of
    ``partial(f, p=params)``, of ``def step(w, cfg=OptConfig(...))``): a function
    passing what the call passes on to ``fun``, whose call of ``fun`` reads the
    default's fields as a callee's (``frontend/object_fields.py``); None where the
    call leaves no such default."""
    params, objects = parameters(fun)
    if not objects or not any(is_object(d) for name, d in params[nargs:] if name not in keys):
        return None
    if nargs > len(params) or not all(name.isidentifier() for name, _ in params):
        return None
    name = getattr(fun, "__name__", "f")
    name = name if name.isidentifier() else "f"
    given = [p for p, _ in params[:nargs]]
    kwonly = [k for k in keys if k not in given]
    passed = given + [f"{k}={k}" for k in kwonly]
    inner = f"{name}_given"  # (a partial's wrapper calls its function `name` too)
    text = (f"def {name}({signature_text(given, kwonly, set())}):\n"
            f"    return {inner}({', '.join(passed)})\n")
    return synthesize(text, name, {inner: fun}, f"defaults-{name}")


def by_keyword_objects(fn: Any) -> bool:
    """Does the plain function ``fn`` have a positional parameter whose default is a
    pytree object (a transform of it is made per call's arity: ``PerArity``)?"""
    return inspect.isfunction(fn) and parameters(fn)[1]
