"""``s2s.jit``: run a function's emitted code on a backend, compiled and cached per
signature.

    g = s2s.jit(s2s.grad(loss), backend="jax")   # emitted gradient, compiled by XLA
    g(w, x, y)
    print(s2s.source(g))                          # the code that runs, after the passes
    g.cache_info()                                # compilations, hits

``f`` is a user function or an s2s transform (``s2s.grad(f)``, ``s2s.value_and_grad``,
``s2s.vmap(f)``, compositions of them).  On the ``jax`` backend the transform's
emitted code is generated for the call's structure while ``jax.jit`` traces, run on
``jax.numpy`` and compiled once per signature (shapes, dtypes, static arguments):
JAX's own cache decides when to trace, so new values never re-trace; Python control
flow in the emitted code is lowered to ``jax.lax`` (``s2s/backends/control.py``).  On
the ``numpy`` backend (the default) the transform runs as it would, through a cache
keyed the same way (the transform specialises its own code to a signature, and
``s2s.source`` shows that code once it has); a user function runs on copies of the
caller's arrays.  See ``docs/backends.md``.
"""

from __future__ import annotations

import functools
import inspect
import operator
import sys
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from .. import backends
from ..emit.forwards import emitted_part
from ..errors import TransformError
from . import jit_calls, jit_jax_free, methods, pipeline, records, trees
from .arguments import zero_d
from .callables import transformable
from .display import NotebookDisplay
from .emitted import emitted_for, is_array_leaf, shape_key
from .hotcalls import MISS, jit_call
from .keyword_trees import as_positional
from .located import not_iterable_at_user_line, reraise_located
from .outputs import owned_by
from .signatures import call_signature, flat_key
from .transformed import Transformed, rebuilds_outputs, shown
from .unchecked_writes import _user_callables, unchecked_write
from .vectorize import Vmapped, _resolve

__all__ = ["jit", "Jitted", "CacheInfo"]


class CacheInfo(NamedTuple):
    """``hits``: calls that reused compiled code; ``misses``/``compilations``: calls
    that generated and compiled code for a new signature; ``currsize``: signatures
    held."""

    hits: int
    misses: int
    compilations: int
    currsize: int


def _base_function(fun: Any) -> Any:
    while isinstance(fun, Transformed):
        fun = fun.fn
    return fun


def _signature_of(fun: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(_base_function(fun))
    except (TypeError, ValueError):
        return None


def _static_nums_and_names(
    sig: inspect.Signature | None, nums: Any, names: Any
) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """JAX's rule: given one of static_argnums/static_argnames, the other follows from
    the signature (positional-or-keyword parameters)."""
    if isinstance(nums, int):
        nums = (nums,)
    if isinstance(names, str):
        names = (names,)
    nums = tuple(nums) if nums is not None else None
    names = tuple(names) if names is not None else None
    if nums is None and names is None:
        return (), ()
    if nums is not None and names is not None or sig is None:
        return nums or (), names or ()
    params = [(i, k) for i, (k, p) in enumerate(sig.parameters.items())
              if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    if nums is None:
        return tuple(i for i, k in params if k in names), names  # type: ignore[operator]
    return nums, tuple(k for i, k in params if i in nums)


def _check_static_argnums(sig: inspect.Signature | None, nums: tuple[int, ...]) -> None:
    """JAX's error, when jit is requested, for a static position past the parameters."""
    if sig is None or any(p.kind is inspect.Parameter.VAR_POSITIONAL
                          for p in sig.parameters.values()):
        return
    n = sum(p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                       inspect.Parameter.POSITIONAL_OR_KEYWORD)
            for p in sig.parameters.values())
    if any(i >= n or i < -n for i in nums):
        raise ValueError(
            f"Jitted function has static_argnums={nums}, but only accepts {n} "
            "positional arguments. Instead: give static_argnums positions of the "
            "function's own parameters (or use static_argnames)."
        )


def _refuse_side_effects(fun: Any, jits: bool) -> str | None:
    """A plain function given to jit must not print or change module state: under
    JAX the effect happens once, while tracing, with tracers; on NumPy on every call.
    On JAX (``jits``) it must not write into an array in place where another name,
    view, container or the caller would see the write (``y = x; y += 1``): JAX's
    arrays are values, so the code would rebind the written name alone and give
    another number than NumPy (the grad path's refusals, ``errors.mark_shared_write``).
    The normalizer finds them, located; code it refuses for another reason (an
    ``import`` inside) or cannot read is still run as it is (jit does not require the
    transformable subset), on JAX once ``unchecked_writes`` has found no write into an
    array there that another name may see (it refuses one it cannot clear).  Returns
    the frontend's reason in that case (the user functions the code reaches while JAX
    traces it are checked then: ``jit_jax.Translator``), else None."""
    if not inspect.isfunction(fun):
        if jits and not isinstance(fun, Transformed) and _user_callables(fun):
            if (found := unchecked_write(fun)) is not None:
                raise found
            return ""  # (the frontend was not asked)
        return None
    try:
        rebound = pipeline.lower(fun).rebound_writes
    except TransformError as err:
        if "side effect" in str(err) or jits and err.shared_write:  # (a callee's
            raise err.with_func(fun.__name__) from None  # `y += v` too: JAX's `+=`
        if jits and (found := unchecked_write(fun, err)) is not None:  # (rebinds `y`,
            raise found from None  # NumPy's adds into the caller's array)
        return str(err.what) if jits else None
    except Exception as err:  # noqa: BLE001 - anything else: jit runs the code as it is
        if jits and (found := unchecked_write(fun, err)) is not None:
            raise found from None
        return str(err) if jits else None
    if jits and rebound:  # (`a = d["k"]; d["k"] += x`: a rebound in emitted code only)
        raise rebound[0].with_func(fun.__name__)
    return None


def _hashable_static(value: Any, where: str) -> Any:
    try:
        hash(value)
    except TypeError:
        raise ValueError(
            f"Non-hashable static arguments are not supported. An error occurred while "
            f"trying to hash an object of type {type(value)}, {value!r}. The error was:\n"
            f"TypeError: unhashable type: '{type(value).__name__}'"
        ) from None
    return value


def _numpy_key(tree: Any) -> Any:
    """Structure, shapes and dtypes of a dynamic argument."""
    if type(tree) is np.ndarray:  # first, and the dtype object: str(dtype) costs µs
        return ("a", tree.shape, tree.dtype)
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return ("t",) + tuple(_numpy_key(v) for v in tree)
    if isinstance(tree, list):
        return ("l",) + tuple(_numpy_key(v) for v in tree)
    if isinstance(tree, dict):
        return ("d",) + tuple((k, _numpy_key(v)) for k, v in tree.items())
    if is_array_leaf(tree):
        return ("a", tuple(tree.shape), str(tree.dtype))
    return ("p", type(tree).__name__)


def _copy_arrays(tree: Any) -> Any:
    """``tree`` with each NumPy array leaf copied (containers rebuilt, others kept)."""
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return tuple(_copy_arrays(v) for v in tree)
    if isinstance(tree, list):
        return [_copy_arrays(v) for v in tree]
    if isinstance(tree, dict):
        return {k: _copy_arrays(v) for k, v in tree.items()}
    if isinstance(tree, np.ndarray):
        return tree.copy()
    return tree


def _unroll_limit(unroll: int | bool | None) -> int | None:
    """``unroll=`` as the longest loop to unroll (None: the backend's default)."""
    if unroll is None:
        return None
    if unroll is True:
        return sys.maxsize
    if unroll is False:
        return 0
    if not isinstance(unroll, int) or unroll < 0:
        raise TypeError(f"unroll must be a bool or a count of iterations >= 0, got "
                        f"{unroll!r}")
    return unroll


class Jitted(NotebookDisplay):
    """A function whose emitted code runs on a backend, compiled once per signature.

    Call it like the function; ``s2s.source(jitted)`` (or ``.source``) is the code of
    the latest signature as it runs, after the backend's passes; ``cache_info()``
    counts compilations.
    """

    display_kind = "jit"

    # A call runs ``self._call``: ``__call__`` is a property that reads it (C code, no
    # Python frame in between), or, where a jit has a class of its own
    # (``jit_calls.own_call``), that class's ``__call__``. On the JAX backend, where
    # nothing has to happen around the compiled code, that is one frame
    # (``jit_calls.direct_calls``: the arguments as given, until a trace meets a dict,
    # whose key order ``jax.jit`` would lose; from then on dicts pass as order-keeping
    # nodes, backends/jax_order.py) around JAX's jitted function behind a C-level call
    # counter: JAX's C++ dispatch checks the arguments' structure, shapes, dtypes and
    # weak types and runs the compiled code. Other calls run the Python methods below.
    __call__ = property(operator.attrgetter("_call"))
    _plans_run = _tree_plans_run = None  # (a grad's jit: see _direct_numpy_calls)

    def __init__(
        self,
        fun: Callable,
        backend: str | None = None,
        static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None,
        shard_batch: bool | Sequence[int] = False,
        x64: bool | None = None,
        unroll: int | bool | None = None,
    ) -> None:
        if not callable(fun):
            raise TypeError(f"Expected a callable value, got {fun!r}")
        self.fun = fun
        self.backend = backends.get(backend)
        sig = _signature_of(fun)
        self.static_argnums, self.static_argnames = _static_nums_and_names(
            sig, static_argnums, static_argnames)
        _check_static_argnums(sig, self.static_argnums)
        self._unchecked = _refuse_side_effects(fun, self.backend.jits)
        self.shard_batch = shard_batch
        self.unroll = _unroll_limit(unroll)
        self.__name__ = getattr(fun, "__name__", "function")
        self.__qualname__ = self.__name__
        self.__doc__ = getattr(fun, "__doc__", None)
        self.__wrapped__ = fun
        self.__s2s_jit_of__ = fun  # (s2s.grad(s2s.jit(f)) transforms f: callables.py)
        self._calls = 0
        self._counted: Any = None  # the C-level counter of the direct JAX calls
        self._counted_bare: Any = None  # (and of the bare ones: jit_calls.py)
        self._token = object()  # (marks the transform's entries this jit has run)
        self._compilations = 0
        self._source: str | None = None
        self._dict_out = False  # (JAX: whether a trace has returned a dict: jax_order)
        if shard_batch and not self.backend.jits:
            raise ValueError("shard_batch needs the 'jax' backend: s2s.jit(..., "
                             "backend='jax', shard_batch=True)")
        self._call: Callable = self._call_python
        if self.backend.jits:
            self._setup_jax(sig, x64)
            if self._direct():
                jit_calls.direct_calls(self)
            elif type(fun) is Vmapped and not shard_batch and fun.built_template() is None \
                    and records.returned_arguments(fun.ir) is None:
                self._plain_ir = fun.ir  # (its outputs hold no objects to rebuild)
                jit_calls.vmapped_calls(self)
        else:
            self._jitted = None
            self._cache: dict[Any, bool] = {}
        # NumPy backend, a transform without static arguments: the call signatures
        # (``signatures.call_signature``, finer than the cache's key) seen already,
        # whose calls go straight to the transform (nothing new to compile or show)
        self._seen: set | None = set() if (
            self._jitted is None and isinstance(fun, Transformed) and not (
                self.static_argnums or self.static_argnames)) else None
        if self._seen is not None and type(fun) in (Transformed, Vmapped):
            self._rebuild = rebuilds_outputs(fun)
            self._call = self._call_transform
            if type(fun) is Transformed:  # (its plans' calls in one frame, counted in C)
                _direct_numpy_calls(self, fun)
        # NumPy backend, a user's function without static arguments: the flat keys
        # (signatures.flat_key) of plain-array calls counted already (_call_function)
        self._seen_arrays: set[tuple] = set()
        if self._jitted is None and not isinstance(fun, Transformed) and not (
                self.static_argnums or self.static_argnames):
            self._call = self._call_function

    # ---- JAX ------------------------------------------------------------------------

    def _setup_jax(self, sig: inspect.Signature | None, x64: bool | None) -> None:
        from ..backends.jax_backend import enable_x64, x64_default

        if x64 if x64 is not None else x64_default():
            enable_x64()
        from ..backends.jax_backend import NeedExample
        from . import jit_jax

        self._examples: dict[Any, list[tuple[str, Callable]]] = {}  # (variants)
        self._free: Any = None  # (free names read at every call: api/jit_jax_free.py)
        self._mesh = None
        self._need_example = NeedExample
        self._add_variant = jit_jax.add_variant  # (api/jit_jax_paths.py)

        from ..backends import jax_order

        self._order = jax_order
        self._jitted, self._jitted_bare = jit_calls.jitted_functions(
            self, sig, jit_jax, _constrained)

    def _direct(self) -> bool:
        """Whether a call can go straight to JAX's jitted function: nothing to place
        across devices, no vmapped example to add outside the trace (a new
        signature's first call raises for it), no aux objects to rebuild."""
        fun = self.fun
        return not self.shard_batch and not isinstance(fun, Vmapped) and not (
            isinstance(fun, Transformed) and rebuilds_outputs(fun))

    def _is_static(self, i: int, nargs: int) -> bool:
        return any(i == (n % nargs if n < 0 else n) for n in self.static_argnums)

    def _example_key(self, args: tuple, kwargs: dict) -> Any:
        n = len(args)
        key = tuple(shape_key(a, not self._is_static(i, n)) for i, a in enumerate(args))
        if isinstance(self.fun, Vmapped):  # (its code is its IR's now: a helper rebound
            self.fun._refresh()  # since the example was made makes another, jit_calls)
            key += (jit_jax_free.Same(self.fun.ir),)
        return key + tuple(
            (k, shape_key(v, k not in self.static_argnames)) for k, v in sorted(kwargs.items())
        )

    def _add_example(self, args: tuple, kwargs: dict, paths: tuple = ()) -> None:
        """Generate a vmapped function's code from this (concrete) call: its rank
        probe runs on the first example, outside the trace; made for the path of
        each ``if`` whose paths give a value different ranks that this call takes,
        after the code of ``paths`` raised ``OtherPath`` (api/jit_jax_paths.py)."""
        name = getattr(getattr(self.fun, "fn", None), "__name__", "f")
        try:
            made = self.fun.plan(args, kwargs, paths)  # type: ignore[union-attr]
        except (ValueError, IndexError, TypeError) as err:  # (the rank probe's: at your line)
            reraise_located(err, getattr(self.fun, "ir", None), name)
        variants = self._examples.setdefault(self._example_key(args, kwargs), [])
        self._add_variant(variants, made, paths, name)

    # ---- several devices ------------------------------------------------------------

    def _batch_axes(self, args: tuple) -> list[Any]:
        if isinstance(self.fun, Vmapped):
            in_axes = self.fun.in_axes
            per = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
            return [_resolve(ax, a) for ax, a in zip(per, args)]
        chosen = (range(len(args)) if self.shard_batch is True
                  else [i % len(args) for i in self.shard_batch])  # type: ignore[union-attr]
        return [0 if i in chosen and not self._is_static(i, len(args)) else None
                for i in range(len(args))]

    def _sharding(self, axis: int) -> Any:
        import jax
        import numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        if self._mesh is None:
            self._mesh = Mesh(np.array(jax.devices()), ("batch",))
        return NamedSharding(self._mesh, PartitionSpec(*([None] * axis), "batch"))

    def _place(self, args: tuple) -> tuple:
        """Each batched argument sharded along its batch axis across jax.devices()."""
        import jax

        ndev = jax.device_count()

        def place(value: Any, axes: Any, where: str) -> Any:
            if axes is None:
                return value
            if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
                sub = axes if isinstance(axes, (tuple, list)) else (axes,) * len(value)
                return type(value)(place(v, a, f"{where}[{i}]")
                                   for i, (v, a) in enumerate(zip(value, sub)))
            if isinstance(value, dict):
                sub = axes if isinstance(axes, dict) else {k: axes for k in value}
                return {k: place(v, sub[k], f"{where}[{k!r}]") for k, v in value.items()}
            shape = getattr(value, "shape", None)
            if shape is None or len(shape) <= axes:
                return value
            if shape[axes] % ndev:
                raise ValueError(
                    f"shard_batch: axis {axes} of {where} has length {shape[axes]}, which "
                    f"is not a multiple of the {ndev} devices it is split across"
                )
            return jax.device_put(value, self._sharding(axes))

        axes = self._batch_axes(args)
        return tuple(place(a, ax, f"argument {i}") for i, (a, ax) in enumerate(zip(args, axes)))

    # ---- calling --------------------------------------------------------------------

    def _call_python(self, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = _counted(self, args, kwargs)
        jitted = self._jitted
        if jitted is not None:
            return jit_calls.python_call(self, args, kwargs)  # (JAX: api/jit_calls.py)
        signed = self._seen
        if signed is not None and not kwargs:
            sig = call_signature(args)
            if sig is not None and sig in signed:
                fun = self.fun
                if type(fun) is Vmapped:
                    out = fun(*args)
                    self._mark_hot(args)
                    return out
                if type(fun) is not Transformed:
                    return zero_d(fun(*args))
                out = fun._call_signed(sig, args)
                self._mark(sig)
                return out
        seen = trees.plain_args(args, (), objects=True, meta=True) if trees.needs_plain(
            args, (), objects=True) else args
        key = self._numpy_signature(tuple(  # (a static object: itself, not its fields)
            a if self._is_static(i, len(args)) else s for i, (a, s) in enumerate(zip(
                args, seen))), kwargs)
        if key not in self._cache:
            self._compilations += 1
            self._source = self._numpy_source(seen, kwargs)
            self._cache[key] = True
        sig = call_signature(args) if signed is not None and not kwargs else None
        if sig is not None:
            signed.add(sig)  # type: ignore[union-attr]
        if not isinstance(self.fun, Transformed):
            # the user's own code runs: `x += 1` in it must not write into the
            # caller's array (jit's inputs are values, as in JAX; transforms copy
            # for themselves)
            args, kwargs = _copy_arrays(args), _copy_arrays(kwargs)
        out = _run_located(self.fun, args, kwargs)
        if sig is not None:
            self._mark(sig)
        if type(self.fun) is Transformed and not kwargs and self.fun._tree_plans:
            self.fun._mark_tree(args, self._token)  # (api/treecalls.py)
        if isinstance(self.fun, Transformed):
            return out
        return zero_d(owned_by(out, self.fun))  # (JAX's Array; a module array copied)

    def _call_function(self, *args: Any, **kwargs: Any) -> Any:
        """NumPy backend, a user's function: a call of plain arrays whose shapes and
        dtypes this jit has counted runs the function on copies of them (its inputs
        are values, as in JAX: the function may write into its arguments), without
        the cache's key; any other call, :meth:`_call_python`."""
        if not kwargs:
            key = flat_key(args)
            if key is not None and key in self._seen_arrays:
                self._calls += 1
                return zero_d(owned_by(self.fun(*[a.copy() for a in args]), self.fun))
            out = self._call_python(*args)
            if key is not None:
                self._seen_arrays.add(key)
            return out
        return self._call_python(*args, **kwargs)

    def _mark(self, sig: Any) -> None:
        """The transform's entry for ``sig`` (a signature this jit has counted) as
        one :meth:`_call_transform` may run directly."""
        if type(self.fun) is not Transformed:
            return
        entry = self.fun._by_signature.get(sig)
        if entry is not None:
            entry.jits.add(self._token)

    def _mark_hot(self, args: tuple) -> None:
        """The vmap's hot entry for these arguments' shapes (a signature this jit has
        counted), once it has one, as one :meth:`_call_transform` may run directly."""
        key = flat_key(args)
        hot = self.fun._hot.get(key) if key is not None else None
        if hot is not None:
            hot.jits.add(self._token)

    def _call_transform(self, *args: Any, **kwargs: Any) -> Any:
        """NumPy backend, ``grad``-like (``hotcalls.jit_call``'s slow path) or ``vmap``:
        a call with a signature this jit has counted runs the transform's code for
        it; any other call, :meth:`_call_python`."""
        if not kwargs:
            fun: Any = self.fun
            if fun._plans:  # plain arrays of a specialized signature this jit ran
                try:  # (a grad's, kept for jit_call: a vmap plans nothing there)
                    out = fun._plan_call(args, self._token, self._plans_run)
                except ValueError as err:
                    reraise_located(err, fun.ir, getattr(fun.fn, "__name__", "f"))
                if out is not MISS:
                    self._calls += 1
                    return out
            if type(fun) is Vmapped and fun._hot:  # its own hot path (shapes, dtypes)
                hot = fun._vhot  # (the latest entry's generated path, if this jit ran it)
                out = hot.hotfn(args) if hot and hot.hotfn and self._token in hot.jits else MISS
                if out is MISS:
                    out = fun._hot_call(args, self._token)
                if out is not MISS:
                    self._calls += 1
                    return out
            elif fun._tree_plans:  # (the plan kept for jit_call)
                try:
                    out = fun._tree_call(args, None, self._token, self._tree_plans_run)
                except (ValueError, IndexError, TypeError) as err:
                    reraise_located(err, fun.ir, getattr(fun.fn, "__name__", "f"))
                if out is not MISS:
                    self._calls += 1
                    return out
            if type(fun) is not Vmapped and fun._spec_error is None:
                hit = fun._by_signature.get(call_signature(args))
                if hit is not None and self._token in hit.jits and not hit.pending and \
                        hit.valid():
                    self._calls += 1
                    try:
                        out = fun._run_entry(hit, args)
                    except (ValueError, IndexError, TypeError) as err:
                        reraise_located(err, fun.ir, getattr(fun.fn, "__name__", "f"))
                    if fun._plans_trees:  # (pytrees: api/treecalls.py)
                        fun._plan_tree(args)
                        fun._mark_tree(args, self._token)
                    return fun._outputs(out) if self._rebuild else out
        return self._call_python(*args, **kwargs)

    def _numpy_signature(self, args: tuple, kwargs: dict) -> Any:
        n = len(args)
        key = tuple(
            ("static", _hashable_static(a, str(i))) if self._is_static(i, n) else _numpy_key(a)
            for i, a in enumerate(args)
        )
        return key + tuple(
            (k, ("static", _hashable_static(v, k)) if k in self.static_argnames
             else _numpy_key(v)) for k, v in sorted(kwargs.items())
        )

    def _numpy_source(self, args: tuple, kwargs: dict) -> str | None:
        fun = self.fun
        if isinstance(fun, Transformed) and fun.mode in ("grad", "value_and_grad", "vmap"):
            try:
                return shown(fun, *emitted_for(fun, args, kwargs))  # (its forward listing)
            except TransformError:
                if not isinstance(fun, Vmapped):
                    raise
                # (code made per path of an `if` on a value, or of a loop's count: the
                # vmap's own call makes each path's, which the NumPy jit runs)
        return None  # read after the call (jacfwd keeps its own) or from the source

    # ---- inspecting -----------------------------------------------------------------

    def _plain_source(self) -> str:
        try:
            text = inspect.getsource(_base_function(self.fun))
        except (OSError, TypeError):
            text = f"# {self.fun!r}: no source available\n"
        if self.backend.jits:
            return ("# runs on JAX: this module's numpy is s2s.backends.jax_numpy\n" + text)
        return text

    @property
    def source(self) -> str:
        """The code of the latest signature, as it runs on the backend (on NumPy, the
        transform's code specialised to the signature once it has been)."""
        if not self.backend.jits and isinstance(self.fun, Transformed):
            specialised = getattr(self.fun, "specialized_source", None)
            if specialised and self.fun._last is not None:  # (its forward listing too)
                return shown(self.fun, specialised, self.fun._last[1])
            if specialised:
                return specialised
        if self._source is not None:
            return self._source
        fun = self.fun
        inner = getattr(fun, "source", None) if not isinstance(fun, Transformed) else None
        if isinstance(fun, Transformed):  # (on JAX: the emitted functions, as they run)
            return self.backend.module_text(
                emitted_part(fun.source) if self.backend.jits else fun.source)
        if isinstance(inner, str) and inner:
            return self.backend.module_text(inner)
        return self._plain_source()

    def cache_info(self) -> CacheInfo:
        size = (self._jitted._cache_size() if self._jitted is not None  # type: ignore[union-attr]
                else len(self._cache))
        calls = self._calls
        free = getattr(self, "_free", None)  # (guarded lanes' counters: jit_calls.py)
        for counted in (self._counted, self._counted_bare, *(free.counters if free else ())):
            calls += counted.cache_info().misses if counted else 0
        if self._counted_bare is not None:
            size += self._jitted_bare._cache_size()
        if self._jitted is not None and self._free is not None:  # (api/jit_jax_free.py)
            size += self._jitted_free._cache_size() + sum(
                f._cache_size() for f in self._free.lanes.values())  # (guarded_call's)
        misses = self._compilations
        return CacheInfo(max(calls - misses, 0), misses, self._compilations, size)

    def __repr__(self) -> str:
        return f"<s2s jit of {self.fun!r} on {self.backend.name}>"


def jit(
    fun: Callable | None = None,
    *,
    backend: str | None = None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    shard_batch: bool | Sequence[int] = False,
    x64: bool | None = None,
    unroll: int | bool | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Sequence[str] | None = None,
    keep_unused: bool = False,
    inline: bool = False,
) -> Any:
    """Compile ``fun``'s emitted code for a backend, once per signature.

    ``backend``: ``"numpy"`` or ``"jax"`` (None: :func:`s2s.backends.get_default`).
    ``static_argnums``/``static_argnames``: arguments that are Python values the code
    is specialised on (as ``jax.jit``; one is inferred from the other).
    ``shard_batch`` (JAX backend): split the batch axis across ``jax.devices()`` with
    a ``NamedSharding`` — a vmapped function's ``in_axes``, or the leading axis of the
    arguments (all of them for True, or those whose positions are given).
    ``x64`` (JAX backend): turn on JAX's 64-bit mode (default: on, unless the
    ``S2S_JAX_X64=0`` environment variable says otherwise).
    ``unroll`` (JAX backend): a lowered loop over a static range of at most this many
    iterations is unrolled for XLA, which then fuses across iterations as it does for
    the Python loops ``jax.jit`` traces (None: 100; True: every loop; False: none).
    Longer loops stay one ``lax.scan``, compiled in a time that does not grow with
    their length.
    ``donate_argnums``/``donate_argnames``, ``keep_unused``, ``inline``: accepted as
    ``jax.jit`` takes them, and without effect (the code never reuses an argument's
    memory: a donated array stays valid, as JAX allows on CPU).
    Usable as ``@s2s.jit`` or ``@s2s.jit(backend="jax")``.
    """
    del donate_argnums, donate_argnames, keep_unused, inline  # (see above)
    def make(f: Callable) -> Jitted:
        return Jitted(f, backend, static_argnums, static_argnames, shard_batch, x64,
                      unroll)

    def of(f: Callable) -> Any:  # (`jit(grad(model.loss))`: the method's, object first)
        return methods.rebound(f, lambda g: transformable(g, make)) or transformable(f, make)

    return of if fun is None else of(fun)


def _direct_numpy_calls(self: Jitted, fun: Transformed) -> None:
    """NumPy backend, a ``grad``-like transform: calls of its plans (plain arrays,
    pytrees) run from one frame (``hotcalls.jit_call``) behind the C-level call
    counter, which is the ``__call__`` of a class of this jit's own: a call finds it
    on the type, without the property's descriptor call and ``attrgetter`` (about
    30 ns: the jit then costs less than the transform's own call)."""
    if fun._by_keyword[1]:  # (a pytree default, passed by position: keyword_trees.py)
        self._call = _by_position(self._call, fun._by_keyword)
        return
    self._plans_run: dict[tuple, tuple] = {}  # (copies of fun's: hotcalls.jit_call)
    self._tree_plans_run: dict[tuple, tuple] = {}
    self._counted = functools.lru_cache(maxsize=0)(jit_call(self, fun, self._call_transform))
    jit_calls.own_call(self, self._counted)


def _constrained(self: Jitted, out: Any) -> Any:
    """Outputs of a vmapped function stay sharded along their batch axis (a
    ``Jitted``'s, in its trace; its dicts ``jax_order.Keyed`` already)."""
    import jax

    if not isinstance(self.fun, Vmapped) or not isinstance(self.fun.out_axes, int):
        return out
    axis = self.fun.out_axes
    ndev = jax.device_count()

    def constrain(leaf: Any) -> Any:
        shape = getattr(leaf, "shape", ())
        if len(shape) <= axis or shape[axis] % ndev:
            return leaf
        return jax.lax.with_sharding_constraint(leaf, self._sharding(axis))

    return jax.tree_util.tree_map(constrain, out)


def _counted(self: Jitted, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """A call counted; on the NumPy backend, a transform's call given a pytree by
    keyword passes it by position (``api/keyword_trees.py``), as the transform reads
    it."""
    self._calls += 1
    if not kwargs or self._jitted is not None or not isinstance(self.fun, Transformed):
        return args, kwargs
    return as_positional(self.fun._by_keyword, args, kwargs)


def _by_position(call: Callable, spec: tuple) -> Callable:
    """``call`` given a pytree parameter's default (or keyword) by position
    (``api/keyword_trees.py``), as the transform it runs takes it."""
    def run(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = as_positional(spec, args, kwargs)
        return call(*args, **kwargs)

    return run


def _run_located(fun: Any, args: tuple, kwargs: dict) -> Any:
    """``fun(*args, **kwargs)``; ``a, b = np.sum(x)`` in the user's own code raised
    again at the user's line, with Python's message (``NotIterableError``)."""
    try:
        return fun(*args, **kwargs)
    except TypeError as err:
        if not isinstance(fun, Transformed):
            not_iterable_at_user_line(err, fun)
        raise
