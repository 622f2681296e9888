"""Free names on the JAX backend: the module names and closure cells the code of
``s2s.jit(..., backend="jax")`` reads are read at every call, as the NumPy backend
reads them (a mini-batch loop rebinds ``mod.XB = next_batch`` at each step).

``jax.jit`` would bake the value a trace saw into the compiled code.  So the trace
records each free value it reads (:func:`read`, called where ``jit_jax`` reads a name
for the code it runs: ``refresh`` and ``Translator``):

- a float or complex ``numpy.ndarray`` is *passed*: from then on every call reads the
  name and gives its current array to the jitted function as an argument (a new batch
  of the same shape and dtype runs the compiled code; another shape or dtype traces
  again, as an argument's does; an array written in place between calls is passed
  with its new values);
- a number, a NumPy scalar or an integer or boolean array (a count, an index, a mask:
  its values may decide shapes) is *guarded*: its bytes are part of the trace's static
  key, so another value traces again (and a value seen before reuses its trace).

A trace that meets a free value it was not given raises :class:`NeedFree`; the jit
then takes the names on (:class:`FreeInputs`) and calls again.  Where a trace given
free arrays fails (a module array whose values make a mask, a shape or a Python
``if``'s test), the jit guards them by their bytes instead (:meth:`FreeInputs.demote`:
traced as constants, traced again when a value changes, in place too).  Anything else a name
holds (a function, a list, an object) is taken as the trace saw it, as before.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Callable

import numpy as np

__all__ = ["NeedFree", "Reads", "FreeInputs", "READS", "read", "passed", "guard_key"]

_MISSING = object()


class NeedFree(Exception):
    """A trace read free values it was not given (``passed``/``guarded``: key ->
    getter)."""

    def __init__(self, passed: dict, guarded: dict) -> None:
        super().__init__("free names to read at every call")
        self.passed, self.guarded = passed, guarded


class Reads:
    """One trace's free values: ``traced`` (key -> the traced argument given for it),
    and the keys it read and was not given, with how to read them again."""

    __slots__ = ("traced", "guards", "passed", "guarded")

    def __init__(self, traced: dict, guards: frozenset) -> None:
        self.traced, self.guards = traced, guards
        self.passed: dict = {}
        self.guarded: dict = {}

    def missing(self) -> NeedFree | None:
        new_passed = {k: g for k, g in self.passed.items()}
        new_guarded = {k: g for k, g in self.guarded.items() if k not in self.guards}
        return NeedFree(new_passed, new_guarded) if new_passed or new_guarded else None


READS: ContextVar[Reads | None] = ContextVar("s2s_jax_free_reads", default=None)


def passed(value: Any) -> bool:
    """Whether a free value goes to the jitted function as an argument."""
    return type(value) is np.ndarray and value.dtype.kind in "fc"


def guard_key(value: Any, arrays: bool = False) -> Any:
    """A hashable key of a guarded value's bytes (None: not guarded); ``arrays``: a
    float array's too (one a trace could not take as an argument: ``demote``)."""
    if type(value) in (bool, int, float, complex) or isinstance(value, np.generic) or (
            type(value) is np.ndarray and (arrays or value.dtype.kind in "biu")):
        try:
            a = np.asarray(value)
        except (OverflowError, ValueError):  # (a Python int past int64)
            return ("int", value) if type(value) is int else None
        if a.dtype.kind not in "biufc":
            return None
        return (type(value).__name__, a.dtype.str, a.shape, a.tobytes())
    return None


def read(key: Any, getter: Callable[[], Any], value: Any) -> Any:
    """The value code traced now must use for the free name ``key`` that holds
    ``value`` (``getter`` reads it again): its traced argument where the trace was
    given one; else ``value``, recorded as one to pass or to guard."""
    reads = READS.get()
    if reads is None:
        return value
    found = reads.traced.get(key, _MISSING)
    if found is not _MISSING:
        return found
    if key in reads.guards or key[0] == "static":  # (guarded: its value as it is;
        if guard_key(value, True) is not None:  # a static one's decided the code)
            reads.guarded[key] = getter
    elif passed(value):
        reads.passed[key] = getter
    elif guard_key(value) is not None:
        reads.guarded[key] = getter
    return value


class FreeInputs:
    """The free names a jit reads at every call (in the order first met)."""

    def __init__(self) -> None:
        self.passed: dict = {}
        self.guarded: dict = {}
        self.demoted = False  # (every float array guarded by its bytes instead)
        self._guards: Any = None  # (the last call's guards and static key: inputs)
        self._token: Any = None

    def add(self, err: NeedFree) -> None:
        self._guards = self._token = None
        if self.demoted:
            self.guarded.update(err.passed)
        else:
            self.passed.update(err.passed)
        self.guarded.update(err.guarded)

    def demote(self) -> bool:
        """After a trace given free arrays failed (their values decide something the
        code needs concrete: a mask, a shape, a Python ``if``): guard them by their
        bytes from now on, as the trace's constants. False: nothing left to demote."""
        if not self.passed:
            return False
        self._guards = self._token = None
        self.guarded.update(self.passed)
        self.passed.clear()
        self.demoted = True
        return True

    def inputs(self) -> tuple[tuple, tuple]:
        """The arrays to pass now, and the static key: the passed names' keys (those
        holding a float array now) and each guarded name's bytes."""
        keys, values = [], []
        for key, getter in self.passed.items():
            try:
                value = getter()
            except (NameError, KeyError, ValueError):  # (unbound now: the trace says)
                continue
            if passed(value):
                keys.append(key)
                values.append(value)
        guards = []
        for key, getter in self.guarded.items():
            try:
                guards.append((key, guard_key(getter(), self.demoted or key[0] == "static")))
            except (NameError, KeyError, ValueError):
                guards.append((key, None))
        found = tuple(guards)
        if len(keys) == len(self.passed):  # (the usual call: the same static key object
            if found == self._guards:  # as the last one's, which JAX's dispatch finds
                return tuple(values), self._token  # 6 µs sooner than an equal new one)
            self._guards, self._token = found, (tuple(keys), found)
            return tuple(values), self._token
        return tuple(values), (tuple(keys), found)
