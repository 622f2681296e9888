"""JAX's collectives over a named vmap axis: ``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``axis_index``, ``axis_size`` (``s2s.lax``).

Inside ``s2s.vmap(f, axis_name="batch")``, ``psum(x, "batch")`` is a reduction over
the batch axis: vmap spells it ``np.sum(x, axis=0)``, a value the same for every
example (``s2s/transforms/collectives.py``).  Called anywhere else, the functions
here raise JAX's ``NameError``: no vmap binds the name.

``psum`` and ``pmean`` are linear and their own transposes (the cotangent of every
example's input is the sum of every example's cotangent, as in JAX); ``all_gather``'s
transpose sums the gathered cotangents and keeps this example's row.  ``pmax`` and
``pmin`` have no derivative rule, as in JAX.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any, Iterator

import numpy as np

from .registry import JAX_SPELLINGS, call_spelling, deflinear, defprim, defvjp

_PROBING = threading.local()


@contextlib.contextmanager
def probing() -> Iterator[None]:
    """Within, the collectives return stand-ins with one example's ranks: vmap's probe
    runs the function (and the user's functions it calls) on one example."""
    before = getattr(_PROBING, "on", False)
    _PROBING.on = True
    try:
        yield
    finally:
        _PROBING.on = before


def _probed(what: str, *args: Any, **kwargs: Any) -> Any:
    """The stand-in while probing; JAX's error otherwise.  Over no axis names (an
    empty tuple) a collective is the identity, as in JAX."""
    if args[-1] == () and what in ("psum", "pmean", "pmax", "pmin", "axis_size"):
        return 1 if what == "axis_size" else args[0]
    if getattr(_PROBING, "on", False):
        return PROBE[what](*args, **kwargs)
    raise _unbound(what, args[-1])


def _unbound(what: str, axis_name: Any) -> NameError:
    """JAX's error, with the line that called: no vmap here binds ``axis_name``."""
    frame = sys._getframe(3)
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    return NameError(
        f"unbound axis name: {axis_name} ({what} at {where}). Instead: call it inside "
        f"s2s.vmap(..., axis_name={axis_name!r})")


def psum(x: Any, axis_name: Any) -> Any:
    """The sum of ``x`` over the examples of the vmap named ``axis_name``."""
    return _probed("psum", x, axis_name)


def pmean(x: Any, axis_name: Any) -> Any:
    """The mean of ``x`` over the examples of the vmap named ``axis_name``."""
    return _probed("pmean", x, axis_name)


def pmax(x: Any, axis_name: Any) -> Any:
    """The maximum of ``x`` over the examples of the vmap named ``axis_name``."""
    return _probed("pmax", x, axis_name)


def pmin(x: Any, axis_name: Any) -> Any:
    """The minimum of ``x`` over the examples of the vmap named ``axis_name``."""
    return _probed("pmin", x, axis_name)


def all_gather(x: Any, axis_name: Any, *, axis: int = 0) -> Any:
    """Every example's ``x``, stacked along ``axis``."""
    return _probed("all_gather", x, axis_name, axis=axis)


def axis_index(axis_name: Any) -> Any:
    """This example's position along the vmap named ``axis_name``."""
    return _probed("axis_index", axis_name)


def axis_size(axis_name: Any) -> Any:
    """The number of examples of the vmap named ``axis_name``."""
    return _probed("axis_size", axis_name)


IMPLS = {f.__name__: f for f in (psum, pmean, pmax, pmin, all_gather, axis_index,
                                 axis_size)}

# What vmap's rank probe runs (one example stands for the batch: only ranks matter).
PROBE = {
    "psum": lambda x, axis_name: x, "pmean": lambda x, axis_name: x,
    "pmax": lambda x, axis_name: x, "pmin": lambda x, axis_name: x,
    "all_gather": lambda x, axis_name, axis=0: np.expand_dims(x, axis),
    "axis_index": lambda axis_name: np.int64(0), "axis_size": lambda axis_name: 1,
}


def _defcollective(name: str, sig: str, nondiff: bool = False) -> None:
    prim = defprim(name, IMPLS[name], sig, family="collective",
                   diff=() if nondiff else ("x",), nondiff=nondiff, spelling=call_spelling(name),
                   note=f"s2s.lax.{name}: over the examples of a named vmap axis")
    prim.namespace.update(IMPLS)  # (emitted code calls them by name; rules read them)
    JAX_SPELLINGS[("jax.lax", name)] = name  # (jax.lax.psum written in the function)


_defcollective("psum", "(x, axis_name)")
_defcollective("pmean", "(x, axis_name)")
_defcollective("pmax", "(x, axis_name)")
_defcollective("pmin", "(x, axis_name)")
_defcollective("all_gather", "(x, axis_name, axis=0)")
_defcollective("axis_index", "(axis_name)", nondiff=True)
_defcollective("axis_size", "(axis_name)", nondiff=True)


@defvjp("psum")
def psum_vjp(g, ans, x, axis_name):
    return psum(g, axis_name)


@defvjp("pmean")
def pmean_vjp(g, ans, x, axis_name):
    return pmean(g, axis_name)


@defvjp("all_gather")
def all_gather_vjp(g, ans, x, axis_name, axis=0):
    if axis == 0:
        return psum(g, axis_name)[axis_index(axis_name)]
    return np.moveaxis(psum(g, axis_name), axis, 0)[axis_index(axis_name)]


deflinear("psum", "x")
deflinear("pmean", "x")
deflinear("all_gather", "x")
