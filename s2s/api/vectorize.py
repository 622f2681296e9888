"""``vmap``: the batched transform's entry, its per-shape cache and its specialized
calls.  The Jacobians built on it (``jacfwd``, ``jacrev``, ``hessian``) are in
api/jacobians.py."""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable

import numpy as np

from ..emit.code import compile_module
from ..errors import TransformError
from ..ir.kinds import LEAF, Kind, kind_of
from ..ir.nodes import Function
from ..primitives import registry
from ..primitives.registry import _GENERATION
from ..runtime import OtherPath
from ..transforms.list_operands import batched
from ..transforms.module import Module
from ..transforms.vmap import VmapSpec, emit_vmap, probe
from . import callables, dtypes_down, methods, records, signatures, vmap_defaults
from .arguments import _shares
from .hotcalls import MISS
from .hotcode import hot_function, no_hot
from .located import reraise_located
from .signatures import flat_key
from .transformed import (
    _LOCK,
    Transformed,
    _foreign,
    _leaves,
    check_array_types,
    peel_source_loop,
)
from .trees import has_nodes, plain, plain_args, unplain
from .value_methods import refuse_value_methods

__all__ = ["vmap", "Vmapped"]


# ---- vmap -------------------------------------------------------------------------


def _leaf_axes(axes: Any, value: Any, where: str) -> list[tuple[str, Any, Any]]:
    """(name, leaf, axis) for each leaf of ``value`` under the prefix tree ``axes``."""
    if axes is None or isinstance(axes, int) and not isinstance(axes, bool):
        out = []
        for path, leaf in _paths(value):
            out.append((where + path, leaf, axes))
        return out
    if isinstance(axes, (tuple, list)) and isinstance(value, (tuple, list)) and \
            len(axes) == len(value):
        return [x for i, (a, v) in enumerate(zip(axes, value))
                for x in _leaf_axes(a, v, f"{where}[{i}]")]
    if isinstance(axes, dict) and isinstance(value, dict) and set(axes) == set(value):
        return [x for k in value for x in _leaf_axes(axes[k], value[k], f"{where}[{k!r}]")]
    raise ValueError(
        "vmap in_axes specification must be a tree prefix of the corresponding value; "
        f"got {axes!r} for {where}"
    )


def _paths(value: Any, path: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return [x for i, v in enumerate(value) for x in _paths(v, f"{path}[{i}]")]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _paths(v, f"{path}[{k!r}]")]
    return [(path, value)]


def _slice0(value: Any, axes: Any) -> Any:
    """One example: each batched leaf indexed at 0 along its axis."""
    if axes is None:
        return value
    if isinstance(axes, int):
        if isinstance(value, (tuple, list)):
            return type(value)(_slice0(v, axes) for v in value)
        if isinstance(value, dict):  # (type: a dict, or trees.Fields that reads p.w)
            return type(value)({k: _slice0(v, axes) for k, v in value.items()})
        value = np.asarray(value)
        if value.ndim and value.shape[axes] == 0:  # (an empty batch: a row of zeros,
            shape = value.shape[:axes % value.ndim] + value.shape[axes % value.ndim + 1:]
            return np.zeros(shape, value.dtype)  # for the ranks only)
        return np.take(value, 0, axis=axes)
    if isinstance(value, dict):
        return type(value)({k: _slice0(value[k], axes[k]) for k in value})
    return type(value)(_slice0(v, a) for v, a in zip(value, axes))


def _hashable(axes: Any) -> Any:
    if isinstance(axes, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in axes.items()))
    if isinstance(axes, (tuple, list)):
        return tuple(_hashable(a) for a in axes)
    return axes


def _none_for_nones(out: Any) -> Any:
    """A per-example None comes back from batched code as an object array of Nones;
    JAX's vmap (None being an empty pytree) gives None."""
    if isinstance(out, np.ndarray) and out.dtype == object and out.size and \
            all(v is None for v in out.flat):
        return None
    if isinstance(out, tuple) and not hasattr(out, "_fields"):
        return tuple(_none_for_nones(o) for o in out)
    return out


def _unshared(out: Any, args: tuple, fn: Callable) -> Any:
    """The batched results, each array copied where it may share memory with an
    argument or a module array the code reads (``x.T`` of an argument is a view): a
    caller writing into a result never changes its inputs; and where it is a
    read-only view (``np.broadcast_to`` of an unbatched result), so the caller can."""
    if isinstance(out, np.ndarray):
        return out.copy() if not out.flags.writeable or _shares(
            out, _foreign(args, fn)) else out
    if type(out) in (tuple, list):
        foreign = _foreign(args, fn)
        if any(isinstance(o, np.ndarray) and (not o.flags.writeable or _shares(
                o, foreign)) for o in out):
            return type(out)(_unshared(o, args, fn) for o in out)
        if all(isinstance(o, np.ndarray) or o is None for o in out):
            return out
        return type(out)(_unshared(o, args, fn) for o in out)
    if type(out) is dict:
        return {k: _unshared(v, args, fn) for k, v in out.items()}
    return out


def _valid_out_axes(axes: Any) -> bool:
    if axes is None or (isinstance(axes, int) and not isinstance(axes, bool)):
        return True
    if isinstance(axes, (tuple, list)):
        return all(_valid_out_axes(a) for a in axes)
    if isinstance(axes, dict):
        return all(_valid_out_axes(a) for a in axes.values())
    return False


def _array_key(a: Any) -> Any:
    """Shapes and dtypes of an array or a dict/tuple/list of them (None otherwise)."""
    t = type(a)
    if t is np.ndarray:
        return (a.shape, a.dtype.char)
    if t is dict or t is tuple or t is list:
        items = list(a.items()) if t is dict else list(enumerate(a))
        keys = []
        for k, v in items:
            leaf = _array_key(v)
            if leaf is None:
                return None
            keys.append((k, leaf))
        return (t, tuple(keys))
    return None


def _shape_key(args: tuple, in_axes: Any, out_axes: Any) -> Any:
    """Shapes and dtypes of plain-array arguments (None for anything else)."""
    key = []
    for a in args:
        leaf = _array_key(a)
        if leaf is None:
            return None
        key.append(leaf)
    if not isinstance(in_axes, (int, type(None))) and not (
            isinstance(in_axes, tuple) and all(isinstance(x, (int, type(None)))
                                               for x in in_axes)):
        return None
    found = (tuple(key), in_axes, out_axes)
    try:
        hash(found)
    except TypeError:  # a dict among the out_axes
        return None
    return found


def _example_ranks(value: Any, axes: Any) -> Any:
    """Per-example ranks of each leaf (a batched leaf has one axis more)."""
    if isinstance(value, (tuple, list)):
        sub = axes if isinstance(axes, (tuple, list)) else [axes] * len(value)
        return tuple(_example_ranks(v, a) for v, a in zip(value, sub))
    if isinstance(value, dict):
        sub = axes if isinstance(axes, dict) else {k: axes for k in value}
        return tuple((k, _example_ranks(v, sub[k])) for k, v in value.items())
    return int(np.ndim(value)) - (axes is not None)


class _Hot:
    """A shape key's specialized code and what its hot path reads, computed once:
    the key of ``_fast``/``_guards`` and its guard, the IR it was made from (and the
    template of the objects its outputs hold: ``Vmapped._outputs``), whether the code
    reads free names, returns only arrays it made, and the cast of its results; the
    ``s2s.jit`` objects whose calls ran it (``jits``: their tokens)."""

    __slots__ = ("key", "guard", "fn", "down", "fresh", "ir", "template", "free_names",
                 "jits", "in_axes", "out_axes", "hotfn")

    def __init__(self, owner: "Vmapped", key: Any, guard: tuple, down: Any) -> None:
        self.key, self.guard, self.down = key, guard, down
        self.in_axes, self.out_axes = key[1], key[2]  # (the vmap's own objects)
        self.fn = owner._fast[key]
        self.fresh = guard[3]
        self.ir = owner.ir
        self.template = owner.built_template()
        self.free_names = bool(getattr(self.fn, "__s2s_free__", True))
        self.jits: set[object] = set()
        self.hotfn: Any = None  # (its generated path, False: none; api/hotcode.py)


class Vmapped(Transformed):
    """``vmap(f)``: call it with batched arguments; ``.source`` is the batched code."""
    # its code depends on the ranks of the arguments (the probe runs the first example),
    # so a transform of it asks with the call's arguments (``grad(vmap(f))``)
    code_per_rank, shared_draws = True, False  # (jacfwd's basis: one call's draws)
    _vhotfn = staticmethod(no_hot)  # (the latest _Hot's generated path, and that _Hot)
    _vhot: _Hot | None = None

    def __init__(self, fn: Callable, in_axes: Any = 0, out_axes: Any = 0,
                 axis_size: int | None = None, axis_name: Any = None) -> None:
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)  # as JAX does
        if isinstance(in_axes, (float, str, bytes)) or (isinstance(in_axes, tuple) and any(
                isinstance(a, (float, str, bytes)) for a in in_axes)):
            raise TypeError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding "
                f"to the positional arguments passed to the function, but got {in_axes}."
            )
        if not _valid_out_axes(out_axes):
            raise TypeError(
                "vmap out_axes must be an int, None, or (nested) container with those "
                f"types as leaves, but got {out_axes}."
            )
        super().__init__(fn, "vmap", 0, False)
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.axis_size, self.axis_name = axis_size, axis_name
        self._args: tuple = ()
        self._fast: dict[Any, Callable] = {}
        # shapes whose code is specialized -> (the free names' objects it relied on,
        # the code as emitted)
        self._guards: dict[Any, tuple[Any, Callable, str, bool]] = {}
        self._pending: dict[Any, str] = {}  # shapes called once -> their code's text
        self._spec_text: str | None = None
        self._axes: tuple = ()
        # plain-array arguments' (shape, dtype) -> what __call__'s hot path needs (_Hot)
        self._hot: dict[tuple, _Hot] = {}

    def _emit(self, ir: Function, module: Module, kinds: tuple[Kind, ...],
              argnums: Any, tuple_out: Any) -> None:
        example = tuple(_slice0(a, ax) for a, ax in zip(self._args, self._axes))
        spec = VmapSpec(self._axes + (None,) * (len(ir.params) - len(self._axes)),
                        self.out_axes, kinds, example, len(self._axes), self.shared_draws,
                        axis_name=self.axis_name, path_guards=self._paths is not None)
        spec.ranks = probe(ir, example, arrays=batched(spec.in_axes))
        emit_vmap(ir, spec, module, self.__name__)

    def _default(self) -> tuple[str, Callable]:
        if self._last is None:
            raise ValueError("call the vmapped function once: its code is specialized "
                             "on the ranks of the arguments")
        return self._last

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:  # mapped over axis 0, as JAX maps keyword arguments
            return self._with_keywords(args, kwargs)
        if any(type(a) is not np.ndarray for a in args):  # (plain arrays: no look)
            refuse_value_methods(self.fn, args)  # (api/value_methods.py)
            args = plain_args(args, ()) if has_nodes(args, False) else args
            args = vmap_defaults.unbatched_objects(self.in_axes, args)
            check_array_types("vmap", args)
        # the same array shapes as a call already checked: straight to its code
        fast = _shape_key(args, self.in_axes, self.out_axes)
        guard = self._guards.get(fast) if fast is not None else None
        if guard is not None and self._compiled and guard[0].same() and \
                self._rules_generation == registry.generation():
            # its specialized code, while every free name holds the object it held
            # then (so _refresh would find nothing to redo) and no rule changed
            fn = self._fast[fast]
            signatures.read_free_names(fn)
            out = fn(*args)
            out = _none_for_nones(out)
            return out if guard[3] else _unshared(out, args, fn)
        self._refresh()
        if fast is not None and not self._compiled:
            self._fast.clear()
            self._guards.clear()
            self._clear_hot()
        fn = self._fast.get(fast) if fast is not None else None
        guard = self._guards.get(fast) if fn is not None else None
        if guard is not None and not guard[0].same():
            # a free name holds another object (or its array another shape) than
            # when the code was specialized: the code as emitted, specialized again
            fn = self._fast[fast] = guard[1]
            self._pending[fast] = guard[2]
            del self._guards[fast]
            self._clear_hot()  # (its hot entry ran the code just dropped)
        if fn is None:
            with _LOCK:  # (`_last`: this call's code, not another thread's of other ranks)
                fn, made = self._function_for(args, ()), self._last
            if "raise OtherPath(" in made[0]:  # (per path: never specialized, nor hot)
                fn = PathVariants(self, fn)
            if fast is not None:
                self._fast[fast] = fn
                if self.specialize and not isinstance(fn, PathVariants) and not any(
                        np.ndim(a) and np.result_type(a).kind in "iub"
                        for a in _leaves(args)):
                    self._pending[fast] = made[0]
        elif fast in self._pending:
            signatures.read_free_names(fn)
            return _unshared(_none_for_nones(self._specialize_batched(fast, fn, args)),
                             args, fn)
        signatures.read_free_names(fn)
        return _unshared(_none_for_nones(fn(*args)), args, fn)

    def _outputs(self, result: Any) -> Any:
        """The objects the function built and returned (a NamedTuple), rebuilt."""
        return records.rebuild(self.built_template(), result)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # (a vmapped gradient's in its inputs' dtype: dtypes_down)
        if not kwargs and (moved := vmap_defaults.moved(self, args)) is not None:
            return vmap_defaults.with_defaults(self, args, moved)  # (a pytree default)
        if not kwargs and self._hot:  # plain arrays of shapes specialized before
            out = self._vhotfn(args)  # (the latest entry's generated path: hotcode.py)
            if out is not MISS:
                return out
            out = self._hot_call(args)
            if out is not MISS:
                return out
        out = dtypes_down.through(self.inner, args, super().__call__(*args, **kwargs))
        out = in_argument_types(self.inner, args, out)
        if not kwargs:
            out = self.argument_kinds(out, args)
        if not kwargs and all(type(a) is np.ndarray for a in args):
            key = _shape_key(args, self.in_axes, self.out_axes)
            guard = self._guards.get(key) if key is not None else None
            if guard is not None and self._fast.get(key) is not guard[1]:
                self._hot[flat_key(args)] = _Hot(  # type: ignore[index]
                    self, key, guard, dtypes_down.target(self.inner, args))
        return out

    def argument_kinds(self, out: Any, args: tuple) -> Any:
        """``out`` with each pytree argument the function returns (``return p``) in
        its own type again, batched, as JAX's vmap returns it (the code's is a dict)."""
        if self.ir is None or not has_nodes(args, False):
            return out
        return records.in_argument_kinds(records.returned_arguments(self.ir), out, args)

    def _hot_call(self, args: tuple, token: object = None) -> Any:
        """The specialized code of the arguments' shapes and dtypes (plain arrays: the
        ``_hot`` entry of their flat tuple), after the checks _call's fast path makes
        (the same axes, free names holding the same objects, the same rules, the same
        IR); its results as _call's make them.  ``token``: an s2s.jit's, which must
        have marked the entry.  ``MISS`` where there is none or a check fails."""
        key = []
        for a in args:  # (flat_key inline: a frame less)
            if type(a) is not np.ndarray:
                return MISS
            key.append(a.shape)
            key.append(a.dtype)
        hot = self._hot.get(tuple(key))
        # (an entry whose guard _call replaces or drops is dropped from _hot with it)
        if hot is None or token is not None and token not in hot.jits or \
                hot.in_axes is not self.in_axes or hot.out_axes is not self.out_axes or \
                not self._compiled or self.ir is not hot.ir or \
                self._rules_generation != _GENERATION[0] or not hot.guard[0].same():
            return MISS
        if hot.hotfn is None:  # (the next call's: api/hotcode.py)
            hot.hotfn = self._hot_function(hot, args)
        self._vhot, self._vhotfn = hot, hot.hotfn or no_hot
        fn = hot.fn
        if hot.free_names:
            signatures.read_free_names(fn)
        try:
            out = fn(*args)
        except (ValueError, IndexError, TypeError) as err:
            reraise_located(err, self.ir, getattr(self.fn, "__name__", "f"))
        return self._hot_result(hot, args, out)

    def _hot_function(self, hot: _Hot, args: tuple) -> Any:
        """``_hot_call``'s checks and code for ``hot``, generated (False: none)."""
        free = hot.guard[0]
        plan = (free, hot.fn, free.same if free.items else None, hot.free_names, None)
        if free.items:
            free.same()  # (compiles the check)
        guards = ("owner.in_axes is IA and owner.out_axes is OA and owner._compiled and "
                  "owner.ir is IR and owner._rules_generation == GEN[0]")
        name = getattr(self.fn, "__name__", "f")
        return hot_function(
            self, plan, args, lambda args, r: self._hot_result(hot, args, r), None, guards,
            {"IA": hot.in_axes, "OA": hot.out_axes, "IR": hot.ir},
            lambda err: reraise_located(err, self.ir, name),
            hot.fresh and hot.template is None and hot.down is None) or False

    def _clear_hot(self) -> None:
        self._hot.clear()
        self._vhot, self._vhotfn = None, no_hot

    def _hot_result(self, hot: _Hot, args: tuple, out: Any) -> Any:
        fn = hot.fn
        if type(out) is not np.ndarray or out.dtype.hasobject:
            out = _none_for_nones(out)  # (an array of numbers stays as it is)
        if not hot.fresh:
            out = _unshared(out, args, fn)
        if hot.template is not None:
            out = records.rebuild(hot.template, out)
        return out if hot.down is None else dtypes_down.cast_at(hot.down, out)

    def plan(self, args: tuple, kwargs: dict | None = None,
             paths: tuple | None = None) -> tuple[str, Callable]:
        """``(text, fn)``: the batched code a call with these arguments runs, without
        running it (its rank probe runs the example, as a call's does); ``paths``
        (None: refused) as ``_function_for``'s: code made per path of an ``if``."""
        if kwargs:
            raise TypeError("jit of a vmapped function takes its batched arguments "
                            "positionally (vmap batches keywords through another vmap)")
        if any(type(a) is not np.ndarray for a in args):
            args = plain_args(args, ()) if has_nodes(args, False) else args
            check_array_types("vmap", args)  # (a NamedTuple: its plain form, as _call's)
        self._refresh()
        self._function_for(args, paths)
        assert self._last is not None
        return self._last

    def _with_keywords(self, args: tuple, kwargs: dict) -> Any:
        """Keyword arguments are batched along axis 0 whatever ``in_axes`` says (JAX's
        rule): each is passed in its parameter's place, with the parameters between
        at their defaults (not batched), through a vmap whose ``in_axes`` say so."""
        import inspect

        params = list(inspect.signature(self.fn).parameters.values())
        static = {p.name: kwargs[p.name] for p in params if p.kind is p.KEYWORD_ONLY and (
            p.name in kwargs) and type(kwargs[p.name]) in (int, float, bool, str)}
        if static and not getattr(getattr(self.fn, "__code__", None), "co_filename",
                                  "<s2s").startswith("<s2s"):  # (`vmap(f)(xs, k=3)`, `def f(x, *, k)`: k is the same for every
            # example, as a partial binds it; JAX maps keywords over axis 0 and refuses
            # a number: "rank should be at least 1")
            key = ("static", tuple(sorted(static.items())), self.in_axes)
            variants = self.__dict__.setdefault("_keyword_variants", {})
            inner = variants.get(key)
            if inner is None:
                inner = variants[key] = callables.transformable(
                    functools.partial(self.fn, **static), lambda f: Vmapped(
                        f, self.in_axes, self.out_axes, self.axis_size, self.axis_name))
            rest = {k: v for k, v in kwargs.items() if k not in static}
            out = inner(*args, **rest)
            self._last = inner._last
            return out
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in positional]
        unknown = [k for k in kwargs if k not in names[len(args):]]
        if unknown:
            raise TypeError(
                f"s2s.vmap batches keyword arguments by their place among the positional "
                f"parameters; `{unknown[0]}` is keyword-only, unknown or already given "
                f"positionally: pass the batched values positionally")
        last = max(names.index(k) for k in kwargs)
        extra, axes_extra = [], []
        for p in positional[len(args):last + 1]:
            if p.name in kwargs:
                extra.append(kwargs[p.name])
                axes_extra.append(0)
            elif p.default is not p.empty:
                extra.append(p.default)
                axes_extra.append(None)
            else:
                raise TypeError(f"{self.__name__}() missing required argument '{p.name}'")
        axes = self.in_axes if isinstance(self.in_axes, tuple) else (self.in_axes,) * len(args)
        key = (axes, tuple(axes_extra))
        variants = self.__dict__.setdefault("_keyword_variants", {})
        inner = variants.get(key)
        if inner is None:
            inner = variants[key] = Vmapped(self.fn, tuple(axes) + tuple(axes_extra),
                                            self.out_axes, self.axis_size, self.axis_name)
        out = inner(*args, *extra)
        self._last = inner._last
        return out

    def _specialize_batched(self, key: Any, fn: Callable, args: tuple) -> Any:
        """The second call with these shapes: the batched code specialized to them,
        as ``grad`` does (s2s/optimize/specialize.py)."""
        # lazy: only a second call needs it
        from ..optimize.specialize import returns_fresh, specialize

        with _LOCK:
            text = self._pending.pop(key, None)
            free = signatures.FreeSnapshot.take(self.ir)
            if text is None or not signatures.OPTIMIZE or free is None or \
                    signatures.calls_with_effects(self.ir):
                return self._fast[key](*args)
            try:
                result, new_text = specialize(text, dict(fn.__globals__), fn.__name__,
                                              args, free.names)
            except Exception as exc:  # the emitted code raises whatever the call raises
                result = fn(*args)
                signatures.optimizer_bug(exc)
                return result
            if new_text is None:
                return fn(*args)
            spec = compile_module(new_text, dict(fn.__globals__), fn.__name__)[fn.__name__]
            spec.__s2s_free__ = fn.__s2s_free__  # type: ignore[attr-defined]
            self._fast[key] = spec
            # fresh: the code returns only arrays it made (never None, nor a view)
            self._guards[key] = (free, fn, text, returns_fresh(new_text, fn.__name__))
            self._clear_hot()
            self._spec_text = new_text
            return result

    @property
    def specialized_source(self) -> str | None:
        """The batched code the latest shapes specialized to, or None."""
        return self._spec_text

    def _generate_for(self, passed: tuple[Kind, ...], kinds: tuple[Kind, ...],
                      args: tuple | None = None) -> tuple[str, Callable]:
        """For an outer transform: the batched code for the arguments it calls this
        with (``vmap(vmap(f))``: the outer's first example is a batch for this one)."""
        if args is None:
            raise NotImplementedError("only vmap can transform a vmapped function yet")
        self._function_for(args, _OUTER_PATHS.paths)
        assert self._last is not None
        return self._last

    def _function_for(self, args: tuple, paths: tuple | None = None) -> Callable:
        """Check the arguments with JAX's messages; the emitted batched function.
        ``paths``: None where the code is read by another transform or s2s.jit (an
        ``if`` whose paths give a value different ranks is refused); else the
        batched code may be made for the path of such an ``if`` these arguments'
        first example takes, the other raising ``OtherPath`` (``PathVariants``):
        the ``(test, taken)`` of the variants that raised for this call, which keys
        its code."""
        in_axes = self.in_axes
        if isinstance(in_axes, tuple):
            if len(in_axes) != len(args):
                raise ValueError(
                    "vmap in_axes must be an int, None, or a tuple of entries "
                    "corresponding to the positional arguments passed to the function, "
                    f"but got len(in_axes)={len(in_axes)}, len(args)={len(args)}"
                )
            per_arg = in_axes
        else:
            per_arg = (in_axes,) * len(args)
        names = self.ir.params
        leaves = []
        resolved = []
        for i, (axes, a) in enumerate(zip(per_arg, args)):
            where = names[i] if i < len(names) else f"args[{i}]"
            found = _leaf_axes(axes, a, where)
            leaves += found
            resolved.append(_resolve(axes, a))
        sizes = []
        for name, leaf, axis in leaves:
            if axis is None:
                continue
            shape = np.shape(leaf)
            if not (-len(shape) <= axis < len(shape)):
                raise ValueError(
                    f"vmap was requested to map its argument along axis {axis}, which "
                    f"implies that its rank should be at least {axis + 1 if axis >= 0 else -axis}, "
                    f"but is only {len(shape)} (its shape is {shape})"
                )
            sizes.append((name, leaf, axis % len(shape), shape[axis]))
        if not sizes:
            raise ValueError(
                "vmap must have at least one non-None value in in_axes or axis_size "
                "must be specified" if self.axis_size is None else
                "s2s.vmap with every in_axes None is not supported yet"
            )
        if len({n for *_, n in sizes}) > 1 or (
                self.axis_size is not None and sizes[0][3] != self.axis_size):
            lines = [
                f"  * one axis had size {n}: axis {ax} of argument {name} of type "
                f"{np.result_type(leaf).name}{list(np.shape(leaf))};".replace(" ", "", 0)
                for name, leaf, ax, n in sizes
            ]
            raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                             + "\n".join(lines))
        with _LOCK:  # the example and axes are read by _emit: one call at a time
            self._axes = tuple(resolved)
            self._args = args  # read by _emit: the probe runs on the first example
            self._refresh()
            kinds = tuple(kind_of(a) for a in args) + (LEAF,) * (len(self.ir.params) - len(args))
            key_axes = (_hashable(self._axes), _hashable(self.out_axes), self.axis_name)
            if paths is not None:
                key_axes += (("paths",) + paths,)
            strings = tuple((i, a) for i, a in enumerate(args) if isinstance(a, str))
            if strings:  # (`np.einsum(subs, ...)`: the ranks its code reads, per string)
                key_axes += (("strings",) + strings,)
            self._paths = paths  # (read by _emit)
            outer, _OUTER_PATHS.paths = _OUTER_PATHS.paths, paths
            # an inner vmap is asked with one example: a batch for it
            example = tuple(_slice0(a, ax) for a, ax in zip(args, self._axes)) \
                if isinstance(self.inner, Vmapped) else None
            try:
                while True:
                    try:
                        _, fn = self._generate(kinds, key_axes, _example_ranks(
                            args, self._axes), nargs=len(args), inner_args=example)
                        break
                    except TransformError as err:  # (vmap(grad(f)): a loop of the
                        if self.inner is None or not peel_source_loop(self, err):
                            raise  # (gradient's code: f's loop peeled, made again)
            finally:
                self._args, self._paths = (), None
                _OUTER_PATHS.paths = outer
        return fn

    _paths: tuple | None = None


class _Paths(threading.local):
    paths: tuple | None = None  # (an inner vmap's code may be made per path)


_OUTER_PATHS = _Paths()


class PathVariants:
    """The batched code of one shape key where an ``if`` (on a value the same for
    every example) gives a value different ranks on its paths: one variant per path
    a call took, each made on the first call that took it (its probe's example on
    that path) and raising ``runtime.OtherPath`` on the others; a call runs the
    variant that served the latest call first.  Emitted code never sees a rank the
    probe did not record on the path it runs."""

    LIMIT = 16  # (paths of one key; then refused)
    __s2s_free__ = ()  # (each variant reads its own free names: see __call__)

    def __init__(self, owner: Vmapped, fn: Callable) -> None:
        self.owner = owner
        self.variants: list[Callable] = [fn]
        self.__globals__ = fn.__globals__

    def __call__(self, *args: Any) -> Any:
        missed: set[tuple] = set()  # (test, the path this call took) of each raise
        for k, fn in enumerate(list(self.variants)):  # (a copy: another thread's call
            try:  # may reorder them)
                out = self._run(fn, args)
            except OtherPath as err:
                missed.add((err.test, err.taken))
                continue
            if k:
                with _LOCK:
                    if fn in self.variants:
                        self.variants.remove(fn)
                    self.variants.insert(0, fn)
            return out
        while len(self.variants) < self.LIMIT:
            # this call's path, keyed by the paths it took where variants raised (the
            # code made for that key, maybe by another object of the same function,
            # may raise at an `if` further on: then keyed by one more)
            fn = self.owner._function_for(args, tuple(sorted(missed, key=repr)))
            with _LOCK:
                self.variants.insert(0, fn)
            try:
                return self._run(fn, args)
            except OtherPath as err:
                if (err.test, err.taken) in missed:  # (not one path for every example)
                    break
                missed.add((err.test, err.taken))
        raise TransformError(
            f"vmap made batched code for {len(self.variants)} paths through the `if`s of "
            f"`{self.owner.__name__}` whose paths give a value different ranks, and none "
            "runs this call", None,
            "give each such value one shape on every path (np.broadcast_to)")

    @staticmethod
    def _run(fn: Callable, args: tuple) -> Any:
        signatures.read_free_names(fn)
        return fn(*args)


def in_argument_types(inner: Any, args: tuple, out: Any) -> Any:
    """A vmapped gradient's result with each gradient in its argument's own type (a
    NamedTuple, a registered dataclass), batched, as ``inner`` (s2s.grad's, s2s.value_and_grad's)
    returns it and as JAX's vmap does; the batched code returns their plain dicts."""
    if getattr(inner, "mode", None) in ("jacfwd", "jacrev") and has_nodes(args, False):
        return _jacobian_in_argument_type(inner, args, out)
    if getattr(inner, "mode", None) not in ("grad", "value_and_grad") or not has_nodes(
            args, False):
        return out
    argnums = inner.argnums if isinstance(inner.argnums, tuple) else (inner.argnums,)
    if not all(-len(args) <= i < len(args) for i in argnums) or not any(
            has_nodes(args[i], False) for i in argnums):
        return out
    index = 1 if inner.mode == "value_and_grad" else 0 if inner.has_aux else None
    grads = out if index is None else out[index]
    if inner.tuple_out:
        grads = tuple(unplain(args[i], g) for i, g in zip(argnums, grads))
    else:
        grads = unplain(args[argnums[0]], grads)
    return grads if index is None else out[:index] + (grads,) + out[index + 1:]


def _jacobian_in_argument_type(inner: Any, args: tuple, out: Any) -> Any:
    """A vmapped Jacobian (a Hessian) with respect to one argument of a pytree class
    (a NamedTuple) of a function returning one array: the dict of the argument's
    fields the batched code returns, in the argument's type (of its type, for a
    Hessian's, whose rows are a gradient's), as JAX's vmap gives it; ``out`` as it is
    for any other."""
    argnums = inner.argnums
    if getattr(inner, "tuple_out", True) or len(argnums) != 1 or not (
            -len(args) <= argnums[0] < len(args)) or getattr(inner, "has_aux", True):
        return out
    like = args[argnums[0]]
    keys = list(plain(like)) if has_nodes(like, False) and isinstance(
        plain(like), dict) else None
    if keys is None or type(out) is not dict or list(out) != keys:
        return out
    inner_fun = getattr(inner, "fun", None)
    if getattr(inner_fun, "mode", None) == "grad" and not getattr(inner_fun, "tuple_out",
                                                                   True) and all(
            type(v) is dict and list(v) == keys for v in out.values()):
        out = {k: unplain(like, v) for k, v in out.items()}  # (a Hessian: rows too)
    elif any(isinstance(v, (dict, tuple, list)) for v in out.values()):
        return out  # (a function returning a tree: its structure outside, as it was)
    return unplain(like, out)


def _resolve(axes: Any, value: Any) -> Any:
    """Negative axes made positive against each leaf's rank."""
    if axes is None:
        return None
    if isinstance(axes, int):
        if isinstance(value, (tuple, list, dict)):
            return _resolve_tree(axes, value)
        return axes % max(np.ndim(value), 1)
    if isinstance(axes, dict):
        return {k: _resolve(axes[k], value[k]) for k in value}
    return tuple(_resolve(a, v) for a, v in zip(axes, value))


def _resolve_tree(axis: int, value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _resolve(axis, v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return tuple(_resolve(axis, v) for v in value)
    return _resolve(axis, value)


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None,
         axis_size: int | None = None) -> Vmapped:
    """Vectorise ``fun`` over a batch axis, as ``jax.vmap``, by emitting batched code.

    ``in_axes``: an int, None, or a tuple (a pytree prefix) per positional argument;
    ``out_axes`` likewise for the result; ``axis_name`` the name s2s.lax.psum and the
    other collectives reduce over.  The batch axis is in front; see ``.source``.
    """
    axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes

    def for_method(func: Callable, n: int) -> Any:  # self: an argument not batched
        per_arg = axes if isinstance(axes, tuple) else (axes,) * n
        return vmap(func, (None, *per_arg), out_axes, axis_name, axis_size)

    if isinstance(fun, methods.Bound) and fun._make is not None:
        # (`vmap(grad(model.loss))`: the vmap of the method's function's gradient,
        # the object's attributes first and not batched)
        return methods.Bound(fun.obj, fun.func, per_nargs=lambda f, n: for_method(
            fun._make(f), n))
    return methods.bound_method(fun, None, for_method) or callables.transformable(
        fun, lambda f: Vmapped(f, plain(in_axes), out_axes, axis_size, axis_name))
