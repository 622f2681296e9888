"""Free names on the JAX backend: the module names and closure cells the code of
``s2s.jit(..., backend="jax")`` reads are read at every call, as the NumPy backend
reads them (a mini-batch loop rebinds ``mod.XB = next_batch`` at each step; a training
loop replaces ``LAYERS[0] = new``, sets ``cfg.scale = 2.0``, rebinds ``PARAMS["w"]``).

``jax.jit`` would bake the value a trace saw into the compiled code.  So the trace
records each free value it reads (:func:`read`, called where ``jit_jax`` reads a name
for the code it runs: ``refresh`` and ``Translator``; an object's attribute where
``jit_jax_objects._ObjectOnJax`` reads it), and every call reads them again
(:meth:`FreeInputs.inputs`), split into leaves (:func:`split`):

- a float or complex array (``numpy.ndarray`` or a concrete ``jax.Array``) is
  *passed*: the jitted function gets its current value as an argument (a new batch of
  the same shape and dtype runs the compiled code; another shape or dtype traces again,
  as an argument's does; an array written in place is passed with its new values);
- a number, a NumPy scalar, a string, ``None``, an integer or boolean array (a count,
  an index, a mask: its values may decide shapes) is *guarded*: its value (an array's
  bytes) is part of the trace's static key, so another value traces again (and a value
  seen before reuses its trace);
- a tuple, list, NamedTuple or dict is followed into: its type, length and keys are
  guarded, its items split in turn (``LAYERS[0] = new`` passes the new array; an
  append traces again);
- anything else (a function, a class, a module, an object) is guarded by identity
  (rebinding the name traces again); an object's attributes the code reads are free
  values of their own (``cfg.W``: passed; ``cfg.scale``: guarded), read at every call.

A trace that meets a free value it was not given raises :class:`NeedFree`; the jit
then takes the names on (:class:`FreeInputs`) and calls again.  Where a trace given
free arrays fails (a module array whose values make a mask, a shape or a Python
``if``'s test), the jit guards them by their bytes instead (:meth:`FreeInputs.demote`:
traced as constants, traced again when a value changes, in place too).
"""

from __future__ import annotations

import copy
import functools
import operator
import types
from contextvars import ContextVar
from typing import Any, Callable

import numpy as np

__all__ = ["NeedFree", "Reads", "FreeInputs", "READS", "read", "passed", "guard_key", "Same",
           "same_bytes",
           "split", "followed", "attribute_key", "vocabulary"]

_MISSING = object()
_UNBOUND = ("unbound",)  # (a name unbound at a call: the trace says what it means)
_NUMBERS = (bool, int, float, complex)
_SCALARS = (*_NUMBERS, str, bytes, type(None), type(Ellipsis))
_NOT_OBJECTS = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type,
                types.MethodType, np.ufunc, functools.partial)
_LIBRARIES = {"numpy", "scipy", "jax", "jaxlib", "s2s", "builtins"}


class NeedFree(Exception):
    """A trace read free values it was not given (``names``: key -> getter)."""

    def __init__(self, names: dict) -> None:
        super().__init__("free names to read at every call")
        self.names = names


class Reads:
    """One trace's free values: ``traced`` (key -> the traced leaves given for it),
    ``guards`` (the keys whose values the static key holds), the keys it read and was
    not given (``met``: key -> how to read it again) and the objects met in them
    (``objects``: id -> object, whose attributes are free values too)."""

    __slots__ = ("traced", "guards", "met", "objects")

    def __init__(self, traced: dict, guards: frozenset) -> None:
        self.traced, self.guards = traced, guards
        self.met: dict = {}
        self.objects: dict = {}

    def missing(self) -> NeedFree | None:
        return NeedFree(self.met) if self.met else None


READS: ContextVar[Reads | None] = ContextVar("s2s_jax_free_reads", default=None)


def passed(value: Any) -> bool:
    """Whether a free value goes to the jitted function as an argument."""
    return (type(value) is np.ndarray or _jax_array(value)) and value.dtype.kind in "fc"


def _jax_array(value: Any) -> bool:
    """A concrete ``jax.Array`` (a tracer is never a free value; s2s imports no JAX
    until a jit runs on it)."""
    t = type(value)
    return t.__name__ == "ArrayImpl" and t.__module__.startswith("jax")


def guard_key(value: Any, arrays: bool = False) -> Any:
    """A hashable key of a guarded number's or array's bytes (None: not one);
    ``arrays``: a float array's too (one a trace could not take as an argument:
    ``demote``)."""
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


class Same:
    """A guard that holds by identity (a function, a module, an object: rebinding the
    name to another traces again); it keeps the value alive, so its id is never
    another's."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: Any) -> bool:
        return type(other) is Same and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


def split(value: Any, arrays: bool = False) -> tuple[list, Any]:
    """A free value's leaves to pass (its float arrays; none where ``arrays``: their
    bytes guarded instead) and the hashable guard of the rest (containers' types,
    lengths and keys; numbers', strings' and integer arrays' values; anything else's
    identity)."""
    leaves: list = []
    return leaves, _guard(value, arrays, leaves)


def _guard(value: Any, arrays: bool, leaves: list) -> Any:
    t = type(value)
    if t in _SCALARS:  # (a number's bytes: -0.0 is not 0.0, a NaN is itself)
        return guard_key(value) if t in _NUMBERS else (t, value)
    if t is np.ndarray or _jax_array(value):
        if value.dtype.kind in "fc" and not arrays and passed(value):
            leaves.append(value)
            return "passed"
        found = guard_key(np.asarray(value) if t is not np.ndarray else value, True)
        return found if found is not None else Same(value)
    if t is list or t is tuple or (isinstance(value, tuple) and hasattr(t, "_fields")):
        return (t, *(_guard(v, arrays, leaves) for v in value))
    if isinstance(value, dict):  # (an OrderedDict too)
        return (t, *((k, _guard(v, arrays, leaves)) for k, v in value.items()))
    if t is set or t is frozenset:
        return (t, frozenset(value))
    if t is types.MethodType:  # (`model.predict` read again: a new bound method)
        return (t, Same(value.__func__), Same(value.__self__))
    if t is functools.partial:  # (its function, and the values bound in it)
        return (t, Same(value.func), _guard(value.args, arrays, leaves),
                _guard(value.keywords, arrays, leaves))
    if isinstance(value, np.ndarray):  # (a subclass: np.matrix, a masked array)
        return (t, guard_key(value.view(np.ndarray), True),
                guard_key(np.ma.getmaskarray(value)) if np.ma.isMaskedArray(value) else None)
    found = guard_key(value)
    return found if found is not None else Same(value)


def _rebuild(value: Any, given: Any, reads: Reads) -> Any:
    """``value`` with its passed leaves the traced ones ``given`` (an iterator; empty:
    guarded, kept), its containers new ones (the trace never writes the user's), the
    objects in it noted (their attributes are read as free values: :func:`followed`)."""
    t = type(value)
    if t in _SCALARS:
        return value
    if t is np.ndarray or _jax_array(value):
        return next(given, value) if passed(value) else value
    if t is list or t is tuple:
        return t([_rebuild(v, given, reads) for v in value])
    if isinstance(value, tuple) and hasattr(t, "_fields"):
        return t(*(_rebuild(v, given, reads) for v in value))
    if t is dict:
        return {k: _rebuild(v, given, reads) for k, v in value.items()}
    if t is functools.partial:
        return t(value.func, *_rebuild(value.args, given, reads),
                 **_rebuild(value.keywords, given, reads))
    if isinstance(value, dict):  # (an OrderedDict, a defaultdict: its own type)
        new = copy.copy(value)
        for k, v in value.items():
            new[k] = _rebuild(v, given, reads)
        return new
    if isinstance(value, types.MethodType):  # (`FN = model.predict`: model's attributes)
        value = value.__self__
    if not isinstance(value, _NOT_OBJECTS) and (
            type(value).__module__ or "").split(".")[0] not in _LIBRARIES:
        reads.objects[id(value)] = value
    return value


def vocabulary(value: Any) -> bool:
    """A module, a ufunc, a builtin, or a library's function, class or object (neither
    an array nor a number): the code's vocabulary, taken as the trace saw it (a jit
    whose code reads only these keeps the bare path). A user's function or class is
    not: rebinding ``ACT = softplus`` traces again (guarded by identity)."""
    if isinstance(value, (types.ModuleType, np.ufunc, types.BuiltinFunctionType)):
        return True
    t = type(value)
    if t in _SCALARS or t in (list, tuple, dict, set, frozenset) or isinstance(
            value, (np.ndarray, np.generic)) or _jax_array(value):
        return False
    module = value.__module__ if isinstance(value, (type, types.FunctionType)) else \
        t.__module__
    return (module or "builtins").split(".")[0] in _LIBRARIES


def read(key: Any, getter: Callable[[], Any], value: Any) -> Any:
    """The value code traced now must use for the free name ``key`` that holds
    ``value`` (``getter`` reads it again): with the traced leaves the trace was given
    for it; else ``value`` as it is (guarded by the static key, or met now: recorded,
    the trace then raises :class:`NeedFree`)."""
    reads = READS.get()
    if reads is None:
        return value
    found = reads.traced.get(key, _MISSING)
    if found is not _MISSING:
        if type(value) is np.ndarray and value.dtype.kind in "fc":
            return found
        if key in reads.guards:  # (a container's leaves, a jax.Array: split's)
            return _rebuild(value, iter(found), reads)
        raise NeedFree({})  # (a fast call's name holds another kind of value now: the
        # call made again the general way, FreeInputs.inputs)
    if key not in reads.guards:
        if vocabulary(value):
            return value
        reads.met[key] = getter
    return _rebuild(value, iter(()), reads)


def followed(obj: Any) -> bool:
    """Whether ``obj`` was met in a free value of the trace now running (its
    attributes the code reads are free values too: :func:`attribute_key`)."""
    reads = READS.get()
    return reads is not None and reads.objects.get(id(obj)) is obj


def attribute_key(obj: Any, name: str) -> tuple[tuple, Callable[[], Any]]:
    """The key and getter of a followed object's attribute (the getter holds the
    object: its id stays its own)."""
    return ("attr", id(obj), name), functools.partial(getattr, obj, name)


class FreeInputs:
    """The free names a jit reads at every call (key -> getter, in the order first
    met)."""

    def __init__(self) -> None:
        self.names: dict = {}
        self.demoted = False  # (every float array guarded by its bytes instead)
        self._last: Any = None  # (the last call's keys and guards, and its static key)
        self._token: Any = None
        self.tokens: dict = {}  # (a static key -> the number JAX's dispatch is given)
        self.keys: list = []  # (and back: the number -> the static key)
        self.fast: Any = None  # (the fast lane: _fast_lane)
        self.lanes: dict = {}  # (a static key's number -> its bare jitted function;
        # (kind, number) -> another kind's: jit_calls.guarded_call)
        self.calls: dict = {}  # ((kind, number) -> the frame a lane of that kind calls,
        self.counters: list = []  # and the C-level call counters of those frames)

    def add(self, err: NeedFree) -> None:
        self._last = self._token = self.fast = None
        self.names.update(err.names)

    def demote(self) -> bool:
        """After a trace given free arrays failed (their values decide something the
        code needs concrete: a mask, a shape, a Python ``if``): guard them by their
        bytes from now on, as the trace's constants. False: already so."""
        if self.demoted or not (self._last and self._last[0]):
            return False
        self._last = self._token = self.fast = None
        self.demoted = True
        return True

    def inputs(self) -> tuple[tuple, tuple]:
        """The leaves to pass now (a bare array as itself, a container's as a tuple),
        and the static key's number (``keys[n]``: the keys passed, and each other key's
        guard)."""
        keys, values, guards, scalars, arrays = [], [], [], [], []
        demoted = self.demoted
        for key, getter in self.names.items():
            try:
                value = getter()
            except (NameError, KeyError, IndexError, AttributeError, ValueError):
                guards.append((key, _UNBOUND))  # (unbound now: the trace says)
                scalars.append(_MISSING)
                continue
            if type(value) is np.ndarray and value.dtype.kind in "fc" and not demoted \
                    and key[0] != "static":
                keys.append(key)
                values.append(value)
                continue
            leaves, guard = split(value, demoted or key[0] == "static")
            if leaves:
                keys.append(key)
                values.append(tuple(leaves))
            guards.append((key, guard))
            if type(value) in _SCALARS or isinstance(value, np.generic) or \
                    type(guard) is Same:
                scalars.append(value)
            elif type(value) is np.ndarray and type(guard) is tuple and not leaves:
                scalars.append(value)  # (an integer or boolean array: the same object
                arrays.append((value, value.dtype, value.shape, guard[3]))  # and bytes)
            else:
                scalars.append(_MISSING)
        last = (keys, guards)
        if last != self._last:  # (the usual call: the same static key object as the
            self._last = last  # last one's, which JAX's dispatch finds 6 µs sooner
            token = (tuple(keys), tuple(guards))  # than an equal new one; a number:
            self._token = self.tokens.get(token)  # its hash a C one, where a tuple's
            if self._token is None:  # calls each guard's and each key's)
                self._token = self.tokens[token] = len(self.keys)
                self.keys.append(token)
        values = tuple(values)
        self.fast = None if demoted or any(v is _MISSING for v in scalars) or any(
            type(v) is tuple for v in values) else self._fast_lane(keys, guards, scalars,
                                                                   arrays)
        return values, self._token

    def _fast_lane(self, keys: list, guards: list, scalars: list, arrays: list) -> tuple:
        """How a call reads the names while they hold what they hold now (every passed
        one a float NumPy array, every guarded one an immutable number or string, or
        one guarded by identity: a function; or an integer or boolean array, a mask):
        ``(read the passed, read the guarded or None, the guarded values now, static
        key, the guarded arrays)``, each read a C call (names of one module: one
        ``itemgetter``); the guarded values compared by identity (the same object: the
        same value), a guarded array's dtype, shape and bytes too (:func:`same_bytes`:
        written in place, it is another value).  A
        passed name holding another kind of value meets a trace (its shape or dtype
        differs from every trace's), which refuses it (:func:`read`), and the call is
        made again through :meth:`inputs`."""
        names = self.names
        guarded = [names[k] for k, _ in guards]
        return (_reader([names[k] for k in keys]), _reader(guarded) if guarded else None,
                tuple(scalars), self._token, tuple(arrays))


def same_bytes(arrays: tuple) -> bool:
    """Whether each guarded array (``(array, its dtype, shape, bytes)`` when its static
    key was made: :meth:`FreeInputs._fast_lane`) holds them still (one written in
    place, given another shape or dtype in place, is another value: a miss, which
    reads the names again)."""
    for a, dtype, shape, data in arrays:
        if a.dtype is not dtype or a.shape != shape or a.tobytes() != data:
            return False
    return True


_CALL = getattr(operator, "call", lambda f: f())  # (3.11's, a C call)


def _reader(getters: list) -> Callable[[], Any]:
    """One C call giving an iterable of the getters' values: an ``itemgetter`` of
    the names where they are two or more names of one namespace."""
    if len(getters) > 1 and all(
            type(g) is functools.partial and g.func is operator.getitem and len(g.args) == 2
            and g.args[0] is getters[0].args[0] for g in getters):
        return functools.partial(operator.itemgetter(*(g.args[1] for g in getters)),
                                 getters[0].args[0])
    return functools.partial(map, _CALL, tuple(getters))
