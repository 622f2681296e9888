"""``eval_shape``: the shapes and dtypes of a function's results, computed by emitted
code from the arguments' shapes and dtypes (``transforms/shapes.py``), never from data.
"""

from __future__ import annotations

import inspect
import linecache
import re
from typing import Any, Callable

import numpy as np

from ..caches import LRU
from ..errors import ShapeError, TransformError
from ..ir.kinds import LEAF, Kind, kind_of
from ..ir.nodes import Function, Let, walk
from ..runtime import ShapeDtypeStruct
from ..transforms.module import Module
from ..transforms.shapes import emit_shapes
from . import records, transformed, tree_util, trees
from .jit import Jitted, _signature_of
from .transformed import Transformed
from .trees import has_nodes, plain_args

__all__ = ["eval_shape", "ShapeDtypeStruct", "ShapeEvaluated", "latest_source"]

_BOUND = re.compile(r"^\s*(\w+)(?: = |\.(?:append|pop)\()")
# the eval_shape objects per function (their code is cached per call structure)
_BY_FUNCTION: LRU[Any, "ShapeEvaluated"] = LRU(128)


def _struct(x: Any) -> Any:
    """An argument leaf as the emitted code reads it: anything with a shape and a dtype
    (an array, ``jax.ShapeDtypeStruct``) as a ShapeDtypeStruct; a Python number as a
    weakly typed 0-d one (JAX's weak types); anything else as it is."""
    if isinstance(x, ShapeDtypeStruct):
        return x
    if isinstance(x, type):  # (`dtype=np.float32` passed: JAX refuses it too)
        raise TypeError(f"s2s.eval_shape: an argument is the class `{x.__name__}`, which "
                        "has no shape to trace: leave it at its default, or pass it as "
                        "static (s2s.jit(f, static_argnames=...)) or through a closure")
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ShapeDtypeStruct(x.shape, x.dtype, bool(getattr(x, "weak_type", False)))
    if isinstance(x, (bool, int, float, complex)):
        return ShapeDtypeStruct((), np.result_type(x), True)
    return x


def _result(x: Any) -> Any:
    """A result leaf: a ShapeDtypeStruct (a number the code knew: its own)."""
    if isinstance(x, ShapeDtypeStruct) or x is None:
        return x
    if isinstance(x, (bool, int, float, complex)):
        return ShapeDtypeStruct((), np.result_type(x), True)
    return ShapeDtypeStruct(np.shape(x), np.result_type(x))


class ShapeEvaluated(Transformed):
    """``eval_shape`` of one function: call it with arrays or ShapeDtypeStructs;
    ``.source`` is the shape code the latest call ran."""

    def __init__(self, fn: Callable) -> None:
        super().__init__(fn, "eval_shape", 0, False)

    def _emit(self, ir: Function, module: Module, kinds: tuple[Kind, ...],
              argnums: Any, tuple_out: Any) -> None:
        # (``argnums`` here: per argument, the leaf paths the call passes values at,
        # a bound method's numbers; ``tuple_out``: the keyword-only parameters holding
        # values; both part of the code's cache key)
        emit_shapes(ir, kinds, module, self.__name__, argnums, tuple_out or frozenset())

    def _default(self) -> tuple[str, Callable]:
        if self._last is None:
            self._generate((LEAF,) * len(self.ir.params), (), False)
        assert self._last is not None
        return self._last

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.evaluate(args, kwargs)

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        return self.evaluate(args, kwargs)

    def evaluate(self, args: tuple, kwargs: dict, static: frozenset = frozenset()) -> Any:
        # (what the call passes is abstract in the emitted code, as JAX traces it; a
        # default the call leaves is a value the code reads, as JAX's, which traces
        # only what is passed: `np.bincount(labels)` of default labels has a length;
        # ``static``: the parameters a jit's static_argnums/argnames name, values too)
        sig = _signature(self.fn)
        bound = sig.bind(*args, **kwargs)
        passed = set(bound.arguments) - static
        bound.apply_defaults()
        kwonly_known = set()
        for name in bound.arguments:
            kind = sig.parameters[name].kind
            if name in passed or kind in (inspect.Parameter.VAR_POSITIONAL,
                                          inspect.Parameter.VAR_KEYWORD):
                bound.arguments[name] = tree_util.tree_map(_struct, bound.arguments[name])
            if kind == inspect.Parameter.KEYWORD_ONLY and not any(isinstance(
                    leaf, ShapeDtypeStruct) for leaf in tree_util.tree_leaves(
                    bound.arguments[name])):  # (a default, static, or None: no leaf traced)
                kwonly_known.add(name)
        args, kwargs = bound.args, bound.kwargs
        if has_nodes(args, True):  # NamedTuples, registered classes, None
            args = plain_args(args, ())
        self._refresh()
        kinds = tuple(kind_of(a) for a in args) + (LEAF,) * (len(self.ir.params) - len(args))
        try:
            _, fn = self._generate(kinds, tuple(_known(a) for a in args),
                                   frozenset(kwonly_known), nargs=len(args))
        except TransformError as err:
            raise err.with_func(self.fn.__name__) from None
        try:
            out = fn(*args, **kwargs)
        except (ValueError, TypeError, IndexError) as err:
            located = _located(err, self.ir)
            if located is None:
                raise
            raise located.with_func(self.fn.__name__) from err
        out = records.rebuild(self.built_template(), out)
        return tree_util.tree_map(_result, out)


def _signature(fn: Any) -> inspect.Signature:
    """The parameters a call of ``fn`` binds: a Jacobian's (``s2s.jacfwd(f)``, which
    takes ``*args, **kwargs``) are its function's, so that a container passed by
    keyword gets its structure as one passed by position does."""
    sig = inspect.signature(fn)
    inner = getattr(fn, "fun", None)
    while inner is not None and any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()):
        sig, inner = inspect.signature(inner), getattr(inner, "fun", None)
    return sig


def _located(err: Exception, ir: Function) -> ShapeError | None:
    """``err`` raised by a line of the emitted shape code, at the user's line whose
    statement that line computes (None where it came from elsewhere)."""
    tb, last = err.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<s2s:"):
            last = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    if last is None:
        return None
    for lineno in range(last[1], 0, -1):  # (black may have split the statement)
        match = _BOUND.match(linecache.getline(last[0], lineno))
        if match is not None:
            break
    else:
        return None
    loc = _loc_of(ir, match.group(1), set())
    if loc is None:
        return None
    if "eval_shape" in str(err):  # (its own words: what it cannot do, and why)
        return ShapeError(str(err), loc, "compute a result whose shape the arguments' "
                          "shapes decide (`np.where(mask, x, 0.0)` for a mask)")
    return ShapeError(f"{type(err).__name__}: {err}", loc,
                      "make the shapes fit: eval_shape computed the shapes this line "
                      "meets from the arguments' shapes, and the same call on arrays "
                      "of those shapes fails too")


def _loc_of(fn: Any, name: str, seen: set[int]) -> Any:
    if id(fn) in seen or getattr(fn, "body", None) is None:
        return None
    seen.add(id(fn))
    for s in walk(fn.body):
        if isinstance(s, Let) and (s.target == name or fn.aliases.get(s.target) == name):
            return s.loc
    for s in walk(fn.body):
        if isinstance(s, Let) and s.prim == "call":
            found = _loc_of(s.params.get("callee"), name, seen)
            if found is not None:
                return found
    return None


def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``fun(*args, **kwargs)``, as ``jax.eval_shape``: a
    pytree of ShapeDtypeStructs of the result's structure.  The arguments are arrays
    or anything with ``.shape`` and ``.dtype`` (``s2s.ShapeDtypeStruct``,
    ``jax.ShapeDtypeStruct``); ``fun`` never runs on data: s2s emits code computing
    each value's shape and dtype from theirs (``s2s.source(fun, "eval_shape")``)."""
    static: frozenset = frozenset()
    while isinstance(fun, Jitted):  # s2s.jit(f): f's shapes, its static arguments values
        static |= _static_names(fun, len(args))
        fun = fun.fun
    if isinstance(getattr(fun, "in_axes", None), (int, tuple, type(None))) and hasattr(
            fun, "code_per_rank"):  # s2s.vmap(f): f's shapes per example, batched
        return _vmapped(fun, args, kwargs)
    parts = trees.unbound(fun)  # a bound method: its object's attributes come first,
    if parts is not None:  # constants as JAX closes over them (arrays: their shapes)
        fun, obj = parts
        args = (tree_util.tree_map(_array_struct, trees.attributes(obj)), *args)
    evaluated = _BY_FUNCTION.get(fun)
    if evaluated is None:
        evaluated = _BY_FUNCTION[fun] = ShapeEvaluated(fun)
    return evaluated.evaluate(args, kwargs, static)


def _static_names(jitted: Jitted, nargs: int) -> frozenset:
    """The parameters of ``jitted``'s function its static_argnums and static_argnames
    name (a call's values, as ``jax.jit`` makes them: never shapes)."""
    names = set(jitted.static_argnames)
    if not jitted.static_argnums:
        return frozenset(names)
    sig = _signature_of(jitted.fun)  # (the one the jit read its static_argnums with)
    params = list(sig.parameters) if sig is not None else []
    for n in jitted.static_argnums:
        i = n % nargs if n < 0 and nargs else n
        if 0 <= i < len(params):
            names.add(params[i])
    return frozenset(names)


def _known(value: Any, path: tuple = ()) -> frozenset:
    """The paths of the leaves of ``value`` that are values, not shapes (a bound
    method's numbers): the code reads them as they are."""
    if type(value) in (tuple, list):
        return frozenset().union(*[_known(v, path + (i,)) for i, v in enumerate(value)])
    if isinstance(value, dict):
        return frozenset().union(*[_known(v, path + (k,)) for k, v in value.items()])
    if isinstance(value, ShapeDtypeStruct) or value is None:
        return frozenset()
    return frozenset({path})


def _vmapped(v: Any, args: tuple, kwargs: dict) -> Any:
    """eval_shape of ``s2s.vmap(f, in_axes, out_axes)``: each batched leaf without its
    batch axis, eval_shape of ``f`` on that example, the batch axis put in at
    ``out_axes`` (vmap's code is specialized by running one example: never here)."""
    sizes: set[int] = set()

    def example(x: Any, axis: Any) -> Any:
        x = _struct(x)
        if axis is None or not isinstance(x, ShapeDtypeStruct):
            return x
        if not -len(x.shape) <= axis < len(x.shape):  # (vmap's own error, as a call's)
            raise ValueError(
                f"vmap was requested to map its argument along axis {axis}, which implies "
                f"that its rank should be at least {axis + 1 if axis >= 0 else -axis}, but "
                f"is only {len(x.shape)} (its shape is {x.shape})")
        ax = axis % len(x.shape)
        sizes.add(x.shape[ax])
        return ShapeDtypeStruct(x.shape[:ax] + x.shape[ax + 1:], x.dtype)

    axes = v.in_axes if isinstance(v.in_axes, tuple) else (v.in_axes,) * len(args)
    per_example = tuple(_prefix_map(example, a, x) for a, x in zip(axes, args))
    kw = {k: _prefix_map(example, 0, x) for k, x in kwargs.items()}
    if len(sizes) != 1:
        raise ValueError(f"vmap got inconsistent sizes for the mapped axis: {sorted(sizes)}"
                         if sizes else "vmap must have at least one non-None value in "
                         "in_axes")
    n = sizes.pop() if v.axis_size is None else v.axis_size
    out = eval_shape(v.fn, *per_example, **kw)

    def batched(x: Any, axis: Any) -> Any:
        if axis is None:
            return x
        ax = axis % (len(x.shape) + 1)
        return ShapeDtypeStruct(x.shape[:ax] + (n,) + x.shape[ax:], x.dtype, x.weak_type)

    return _prefix_map(batched, v.out_axes, out)


def _prefix_map(f: Callable, axes: Any, value: Any) -> Any:
    """``f(leaf, axis)`` over ``value``'s leaves, ``axes`` a tree prefix of it."""
    if axes is None or isinstance(axes, int):
        return tree_util.tree_map(lambda x: f(x, axes), value)
    if isinstance(axes, dict):
        return type(value)({k: _prefix_map(f, axes[k], value[k]) for k in value})
    return type(value)(_prefix_map(f, a, x) for a, x in zip(axes, value))


def _array_struct(x: Any) -> Any:
    return ShapeDtypeStruct(x.shape, x.dtype) if isinstance(x, np.ndarray) else x


def latest_source(fun: Callable) -> str:
    evaluated = _BY_FUNCTION.get(fun)
    if evaluated is None:
        raise ValueError(f"s2s.eval_shape has not been called on {fun!r}")
    return evaluated.source


transformed.SOURCES["eval_shape"] = latest_source
