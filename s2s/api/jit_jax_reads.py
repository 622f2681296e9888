"""Where the free names the JAX backend reads at every call live (api/jit_jax_free.py):
one key per name for every trace, and a getter a call reads it again with (a C call
where the name is a cell's or a plain namespace's)."""

from __future__ import annotations

import functools
import operator
from typing import Any, Callable

import numpy as np

from ..frontend.resolve import UPSTREAM, DefaultVar, FreeVar
from ..frontend.static import ReadVar, StaticVar
from ..ir.names import PRIVATE
from . import jit_jax_free

__all__ = ["READ_VARS", "var_key", "var_getter", "module_getter", "cell_getter",
           "read_ir_names", "private"]

READ_VARS = (FreeVar, ReadVar, StaticVar)  # (free names a call reads: jit_jax_free)


def var_key(var: FreeVar) -> tuple:
    """Where a free name lives (its cell, or its namespace and name): one key of it
    for every trace; a StaticVar's (a value that decided the code: ``len(TABLE)``)
    is guarded whatever it holds (jit_jax_free.read)."""
    if isinstance(var, DefaultVar):
        return ("var", "default", id(var.fn), var.param)
    kind = "static" if type(var) is StaticVar else "var"
    if var.cell is not None:
        return (kind, "cell", id(var.cell))
    return (kind, "scope", id(var.scope), var.name)


def var_getter(var: FreeVar) -> Callable[[], Any]:
    """How a call reads the free name again (a C call where the name is a cell's or a
    plain namespace's)."""
    if type(var) is not FreeVar:
        return var.read
    if var.cell is not None:
        return cell_getter(var.cell)
    if var.scope is not None and UPSTREAM not in var.scope:
        return module_getter(var.scope, var.name)
    return var.read


def module_getter(module_globals: dict, name: str) -> Callable[[], Any]:
    return functools.partial(operator.getitem, module_globals, name)


def cell_getter(cell: Any) -> Callable[[], Any]:
    return functools.partial(_CELL_CONTENTS, cell)


_CELL_CONTENTS = operator.attrgetter("cell_contents")


def private(var: Any) -> bool:
    """A name of a namespace s2s made and no one rebinds (a partial's wrapper, made in
    a trace too: ``s2s.grad(partial(g, w=np.cos(x)))``, its values the trace's own):
    not a free name to read at every call (what the partial came from is one)."""
    return var.cell is None and var.scope is not None and PRIVATE in var.scope


def read_ir_names(ir: Any) -> None:
    """The free names of a transform's IR, read as the trace's free values
    (jit_jax_free.read): the emitted code does not read a callee it inlined
    (``ACT(x)`` of a module name ``ACT``), whose rebinding makes the NumPy backend
    normalize again; guarded by identity, the jit traces again too."""
    for var in getattr(ir, "free", {}).values():
        if type(var) in READ_VARS and not private(var):
            try:
                value = var.read()
            except (NameError, KeyError, ValueError, AttributeError):
                continue
            jit_jax_free.read(var_key(var), var_getter(var), value)


def defaults(fn: Any, translated: Callable[[Any], Any]) -> tuple[Any, Any]:
    """A user function's ``__defaults__`` and ``__kwdefaults__`` for its copy on JAX,
    each ``translated``; an array a free value read at every call (passed: written in
    place, its new values are used; an integer one guarded by its bytes), as a module
    array is (it was the trace's constant: stale after ``W0[:] = ...``)."""
    def one(where: int | str, value: Any) -> Any:
        if type(value) is np.ndarray:
            value = jit_jax_free.read(("var", "default", id(fn), where),
                                      functools.partial(_default_at, fn, where), value)
        return translated(value)

    given, kw = fn.__defaults__, fn.__kwdefaults__
    return (None if given is None else tuple(one(i, d) for i, d in enumerate(given)),
            None if kw is None else {k: one(k, d) for k, d in kw.items()})


def _default_at(fn: Any, where: int | str) -> Any:
    if type(where) is str:
        return (fn.__kwdefaults__ or {})[where]
    return fn.__defaults__[where]


def held(namespace: dict, name: str, value: Any) -> Any:
    """An array the emitted module binds itself (``helper_w = W0``: a callee's default
    passed on), as the code traced now reads it: a free value read at every call."""
    return jit_jax_free.read(("var", "scope", id(namespace), name),
                             module_getter(namespace, name), value)
