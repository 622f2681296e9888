"""Transform entry points: specialization, caching (their argument checks, with JAX's
semantics: s2s/api/arguments.py).

``grad(f)`` normalizes ``f`` at once, so unsupported syntax fails where the transform
is requested.  The derivative code itself is generated per *call structure*: the
pytree structure of the positional arguments (a leaf, or nested tuples, lists and dicts
of leaves), exactly what JAX treats as static.  Shapes, dtypes and values are not part
of it: one emitted function serves them all.
"""

from __future__ import annotations

import atexit
import linecache
import threading
import time
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from ..caches import LRU
from ..emit.code import black_module, compile_module
from ..emit.forwards import with_forwards
from ..errors import Loc, TransformError
from ..ir.kinds import LEAF, Kind, Tree, call_kinds, kind_of
from ..ir.names import UPSTREAM
from ..ir.nodes import Const, Function, Index, Let, Var
from ..ir.peel import peelable_like, peeled_at
from ..primitives import registry
from ..transforms.reverse import Module, OutputStructureError, Spec, emit_reverse
from . import callables, families, keyword_trees, methods, pipeline, records, signatures, trees
from .arguments import (
    _cast_tree,
    _check_argnums,
    _check_cotangent,
    _check_float_inputs,
    _copy_shared,
    _fix_one,
    _foreign,
    _inexact_args,
    _normalize_argnums,
    _own_arrays,
    _split_aux,
    check_array_types,
    output_error,
    zero_d,
)
from .display import NotebookDisplay
from .hotcalls import MISS, HotCalls
from .hotcode import no_hot
from .located import LocatedCalls, refusal_at_user_line, reraise_located
from .methods import float0
from .outputs import owned_items, owned_module
from .pullbacks import Frozen
from .signatures import FastEntry, FreeSnapshot, call_signature, optimizer_bug, read_free_names
from .treecalls import TreeCalls
from .trees import _copies, _leaves, _rebuild

__all__ = ["grad", "value_and_grad", "vjp", "source", "Transformed"]


# the emitted text per function, transform and call structure, and (the same keys)
# the compiled emitted function: the most recently used only (s2s/caches.py)
_TEXT_CACHE: LRU[Any, tuple[str, str, dict[str, Any]]] = LRU(128)
_FUNCTION_CACHE: LRU[Any, Callable] = LRU(128)
_LOCK = threading.RLock()
# Specializing threads are waited for when the interpreter exits: one stopped inside
# the e-graph's native code at exit aborts the process (a Rust panic)
_RUNNING: "weakref.WeakSet[threading.Thread]" = weakref.WeakSet()


@atexit.register
def _finish_specializing() -> None:
    for job in list(_RUNNING):
        job.join(timeout=30)


def _guessed_kinds(ir: Function) -> tuple[Kind, ...]:
    """The argument structures ``source`` shows before any call: an array for each
    parameter, except one the code indexes only by string constants
    (``params["w1"]``), which is a dict of those keys (of dicts, where the values are
    indexed by strings too).  The first call generates again for the structure it
    gets; without the guess the shown code indexed an array by a string."""
    reads: dict[str, dict[str, str]] = {}
    other: set[str] = set()

    def walk(stmts: list) -> None:
        for st in stmts:
            for block in ("body", "orelse"):
                inner = getattr(st, block, None)
                if isinstance(inner, list):
                    walk(inner)
            if not isinstance(st, Let):
                continue
            for k, a in enumerate(st.args):
                if not isinstance(a, Var):
                    continue
                index = st.params.get("index")
                if st.prim == "getitem" and k == 0 and isinstance(index, Index) and \
                        len(index.items) == 1 and isinstance(index.items[0], Const) and \
                        isinstance(index.items[0].value, str):
                    reads.setdefault(a.name, {})[index.items[0].value] = st.target
                else:
                    other.add(a.name)

    walk(ir.body)

    def kind(name: str, depth: int = 0) -> Kind:
        keys = reads.get(name)
        if not keys or name in other or depth > 8:
            return LEAF
        return Tree(dict, tuple(keys), tuple(kind(t, depth + 1) for t in keys.values()))

    return tuple(kind(p) for p in ir.params)


def _reads_free_names(compiled: Callable, ir: Any, namespace: dict) -> None:
    """Mark emitted code with the module names it reads (``read_free_names``: their values
    at each call) and with ``ir``, where its errors are located (api/located.py)."""
    free, compiled.s2s_user_ir = ir.free, ir  # type: ignore[attr-defined]
    compiled.__s2s_free__ = [  # type: ignore[attr-defined]
        (n, free[n]) for n in namespace if n in free]
    compiled.__globals__[UPSTREAM] = dict(compiled.__s2s_free__)  # type: ignore[attr-defined]
    compiled.__s2s_free__ += signatures.emitted_callees(  # type: ignore[attr-defined]
        compiled, free, namespace)


class Transformed(HotCalls, TreeCalls, records.BuiltOutputs, LocatedCalls, NotebookDisplay):
    """A transformed function: call it, read ``.source``, inspect it.

    ``inspect.getsource`` and ``inspect.signature`` follow ``__wrapped__`` to the
    emitted function, so they show the generated code, not the user's."""

    def __init__(
        self,
        fn: Callable,
        mode: str,
        argnums: int | Sequence[int] = 0,
        has_aux: bool = False,
        holomorphic: bool = False,
    ) -> None:
        # transforming a transformed function transforms its emitted code, generated
        # per call structure: the inner transform is asked for it at each new one
        self.inner = fn if isinstance(fn, Transformed) or hasattr(fn, "_generate_for") \
            else None
        if self.inner is not None and self.inner.mode == "vjp":
            raise TransformError(
                f"{mode} of a vjp function is not supported", hint="transform the function "
                "itself, or its grad",
            )
        if not callable(fn):
            raise TypeError(f"Expected a callable value, got {fn!r}")
        self.fn = fn
        self.mode = mode
        self.argnums, self.tuple_out = _normalize_argnums(argnums)
        self.has_aux = has_aux
        # grad of a holomorphic function: complex inputs and output, seed 1 + 0j
        self.holomorphic = holomorphic
        self.ir = pipeline.lower(fn) if self.inner is None else self.inner.ir
        self._by_keyword = (*keyword_trees.parameters(fn), max(self.argnums, default=-1),
                            fn) if (self.inner is None and min(self.argnums, default=0) >= 0
                                    ) else ((), False, 0)
        self._signature = self._free_fingerprint()
        base = "lambda" if fn.__name__ == "<lambda>" else fn.__name__
        self.__name__ = f"{base}_{mode}"
        self.__qualname__ = self.__name__
        self.__doc__ = f"The {mode} of {fn.__qualname__}, emitted by s2s."
        self._compiled: dict[Any, tuple[str, Callable]] = {}
        self._by_signature: dict[Any, FastEntry] = {}  # call signature -> code (see __call__)
        self._plans: dict[tuple, tuple] = {}  # plain arrays' shapes -> plan (api/hotcalls.py)
        self._tree_plans: dict[tuple, tuple] = {}  # pytrees' keys -> plan (api/treecalls.py)
        self._argnums_by_count: dict[int, tuple[int, ...]] = {}  # (resolved per call)
        # specialize the code to a signature at its second call (s2s/optimize/specialize.py)
        self.specialize = True
        self._spec_lock = threading.Lock()
        self._spec_error: Exception | None = None  # from a background specializing
        self._rules_generation = registry.generation()
        self._last: tuple[str, Callable] | None = None
        self._peel: frozenset = frozenset()  # (loops with a first iteration apart: peel.py)
        # pytree calls of a grad or value_and_grad of the user's function get plans
        self._plans_trees = type(self) is Transformed and self.inner is None and \
            not has_aux and mode in ("grad", "value_and_grad")

    # ---- generation ------------------------------------------------------------

    def _free_fingerprint(self) -> tuple:
        return tuple((name, var.fingerprint()) for name, var in self.ir.free.items())

    def _refresh(self) -> None:
        """Re-read free names; rebuild if one now holds something the IR did not see.

        A module constant that changes value is simply read again by the next call;
        one that changes kind (a float becomes an array, ``helper`` is rebound to
        another function) makes s2s normalize and generate again.
        """
        if self._rules_generation != registry.generation():
            with _LOCK:  # a rule changed since this code was emitted
                self._forget()
                self._rules_generation = registry.generation()
        if self.inner is not None:
            self.inner._refresh()
            if self.inner.ir is not self.ir:
                with _LOCK:
                    self.ir = self.inner.ir
                    self._signature = self._free_fingerprint()
                    self._forget()
            return
        signature = self._free_fingerprint()
        if signature != self._signature:
            with _LOCK:
                self.ir = pipeline.lower(self.fn, fresh=True)
                self._signature = self._free_fingerprint()
                self._forget()

    def _forget(self) -> None:
        """Drop the code generated, cached and planned (the plans' guards fail now
        anyway: memory only)."""
        for cache in (self._compiled, self._by_signature, self._plans, self._tree_plans):
            cache.clear()
        self._last, self._hotfn = None, no_hot

    def _generate(self, kinds: tuple[Kind, ...], argnums: tuple[int, ...],
                  tuple_out: Any, *, nargs: int | None = None,
                  inner_args: tuple | None = None) -> tuple[str, Callable]:
        """The emitted module and function for arguments of structures ``kinds``.

        ``nargs`` says how many of ``kinds`` the call passed (the rest are parameters
        left at their defaults; an inner transform's argnums resolve against the
        passed ones); ``inner_args`` are the arguments the inner transform sees for
        this call, which a vmapped inner needs (its code depends on their ranks)."""
        key = (kinds, argnums, tuple_out) + ((self._peel,) if self._peel else ())
        if getattr(self.inner, "code_per_rank", False):  # a vmapped inner: code per rank too
            key += (tuple(int(np.ndim(x)) for x in _leaves(inner_args or ())),)
        with _LOCK:
            hit = self._compiled.get(key)
            if hit is not None:
                self._last = hit  # .source shows the code the latest call ran
                return hit
            ir, origin = self.ir, ()
            if self.inner is not None:
                passed = kinds[:nargs] if nargs is not None else kinds
                inner_text, inner_fn = self.inner._generate_for(passed, kinds, inner_args)
                ir, origin = pipeline.lower(inner_fn), (inner_text,)
            ir = peeled_at(ir, self._peel)  # (loops vmap met changing a rank: peel.py)
            text_key = (self.ir.source_hash, self.fn.__qualname__, id(self.fn),
                        self.mode, self.has_aux, self.holomorphic, self._signature,
                        registry.generation()) + key + origin
            cached = _TEXT_CACHE.get(text_key)
            if cached is None:  # the pipeline's stages (api/pipeline.py)
                try:
                    module = pipeline.transform(
                        ir, lambda ir, module: self._emit(ir, module, kinds, argnums, tuple_out))
                except TransformError as err:
                    err = refusal_at_user_line(err, self.ir)  # (an inner transform's)
                    raise err.with_func(self.fn.__name__) from None
                text = pipeline.format_emitted(module)
                cached = (text, self.__name__, module.namespace)
                _TEXT_CACHE[text_key] = cached
            compiled = _FUNCTION_CACHE.get((text_key, cached[0]))
            if compiled is None:  # a new transform object of the same function reuses it
                text, name, namespace = cached
                compiled = pipeline.compile_emitted(text, name, namespace)
                _reads_free_names(compiled, self.ir, namespace)
                _FUNCTION_CACHE[(text_key, cached[0])] = compiled
            text = cached[0]
            self._compiled[key] = (text, compiled)
            self._last = (text, compiled)
            return text, compiled

    def _emit(self, ir: Function, module: Module, kinds: tuple[Kind, ...],
              argnums: tuple[int, ...], tuple_out: bool) -> None:
        spec = Spec(self.mode, argnums, tuple_out, self.has_aux, kinds, self.holomorphic)
        emit_reverse(ir, spec, module, self.__name__)

    def __s2s_transform__(self) -> str | None:
        """``"transformed"`` (user code calling it inlines its emitted code: see
        ``_generate_for``) for a grad/value_and_grad, nested too; None for vjp/jvp."""
        return "transformed" if type(self) is Transformed and (
            self.inner is None or self.mode in ("grad", "value_and_grad")) else None

    def _generate_for(self, passed: tuple[Kind, ...], kinds: tuple[Kind, ...],
                      args: tuple | None = None) -> tuple[str, Callable]:
        """The emitted function for a call passing arguments of structures ``passed``
        (``kinds``: with the defaults) for an outer transform, argnums resolved as that
        call would; ``args``, where it has them, the call's arguments (``_generate``)."""
        argnums = _check_argnums(self.argnums, self.tuple_out, len(passed))
        return self._generate(kinds, argnums, self.tuple_out, inner_args=args)

    def _default(self) -> tuple[str, Callable]:
        if self._last is None:
            n = len(self.ir.params)
            nums = self.argnums if self.mode not in ("vjp", "jvp") else tuple(range(n))
            try:
                self._generate(_guessed_kinds(self.ir), nums, self.tuple_out)
            except TransformError:  # the guess did not fit: arrays, as before
                self._generate((LEAF,) * n, nums, self.tuple_out)
        assert self._last is not None
        return self._last

    @property
    def source(self) -> str:
        """The emitted module, as text (the latest specialization generated), and
        after it the forward functions it calls that s2s made (emit/forwards.py)."""
        return shown(self, *self._default())

    @property
    def __wrapped__(self) -> Callable:
        return self._default()[1]

    # ---- calling ---------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # (LocatedCalls.__call__ with the fast paths inline: one frame less a call)
        try:
            if kwargs or self._by_keyword[1]:  # (a pytree by keyword or default)
                args, kwargs = keyword_trees.as_positional(self._by_keyword, args, kwargs)
            if not kwargs:  # the latest plan's generated hot path (api/hotcode.py)
                out = self._hotfn(args)
                if out is not MISS:
                    return out
            if self._plans and not kwargs:  # plain arrays of a specialized signature
                out = self._plan_call(args)
                if out is not MISS:
                    return out
            if self._tree_plans and not kwargs:  # pytrees of one (api/treecalls.py)
                out = self._tree_call(args)
                if out is not MISS:
                    return out
            fast = self._by_signature
            if fast and not kwargs and self._spec_error is None:
                # a signature seen before: straight to its (specialized) code
                hit = fast.get(call_signature(args))
                if hit is not None and not hit.pending and hit.valid():
                    out = self._outputs(self._run_entry(hit, args))
                    if self._plans_trees:
                        self._plan_tree(args)
                    return out
            out = self._outputs(self._call(*args, **kwargs))
            if self._plans_trees and not kwargs and self._by_signature:
                self._plan_tree(args)
            return out
        except (ValueError, IndexError, TypeError) as err:
            reraise_located(err, self.ir, getattr(self.fn, "__name__", "f"))

    def _call_signed(self, sig: Any, args: tuple) -> Any:
        """A positional call whose ``call_signature`` is ``sig`` (s2s.jit has it)."""
        try:
            if self._spec_error is None:
                hit = self._by_signature.get(sig)
                if hit is not None and not hit.pending and hit.valid():
                    return self._outputs(self._run_entry(hit, args))
            return self._outputs(self._call(*args))
        except (ValueError, IndexError, TypeError) as err:
            reraise_located(err, self.ir, getattr(self.fn, "__name__", "f"))

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        if self._spec_error is not None:  # (only under the test suite's checks)
            self.wait_specialized()
        fast = self._by_signature
        if fast and not kwargs:  # a signature seen before: straight to its code
            hit = fast.get(call_signature(args))
            if hit is not None and not hit.pending and hit.valid():
                return self._run_entry(hit, args)
        argnums = _check_argnums(self.argnums, self.tuple_out, len(args))
        self._argnums_by_count[len(args)] = argnums
        if trees.needs_plain(args, argnums, objects=True):  # NamedTuples, None...
            return trees.call_plain(self, args, kwargs, argnums)
        text, fn = self._plan(args, kwargs, argnums)
        read_free_names(fn)
        if kwargs or self.inner is not None:
            result, ran = fn(*args, **kwargs), fn
        else:  # (the emitted code, or the specialized code it became)
            result, ran = self._call_and_specialize(text, fn, args, argnums), None
        return self._postprocess(result, args, argnums, False, fn, ran, kwargs)

    def plan(self, args: tuple, kwargs: dict | None = None) -> tuple[str, Callable]:
        """``(text, fn)``: the emitted module and function a call with these arguments
        runs, generated (or found) after the call's argument checks, without running
        anything.  jit asks for this; a call runs it."""
        argnums = _check_argnums(self.argnums, self.tuple_out, len(args))
        return self._plan(args, kwargs or {}, argnums)

    def _plan(self, args: tuple, kwargs: dict,
              argnums: tuple[int, ...]) -> tuple[str, Callable]:
        nargs = len(args)
        _check_float_inputs("grad", args, argnums, self.holomorphic)
        self._refresh()
        kinds = call_kinds(self.ir.params, args, kwargs)
        try:
            return self._generate(kinds, argnums, self.tuple_out, nargs=nargs, inner_args=args)
        except OutputStructureError:
            raise output_error(self.fn, self.has_aux, _copies(args), kwargs) from None

    def _call_and_specialize(self, text: str, fn: Callable, args: tuple,
                             argnums: tuple[int, ...], head: Any = None) -> Any:
        """Call ``fn``; the second call with one signature (shapes, dtypes, integer
        values) specializes the code to it (``s2s.specialize``) and later calls with
        that signature go straight to the result, skipping the argument checks.
        ``head``: what the signature adds (jvp: how many of ``args`` are primals)."""
        sig = call_signature(args)
        if sig is None:
            return fn(*args)
        if head is not None:
            sig = (head, sig)
        free = FreeSnapshot.take(self.ir)
        if free is None:
            return fn(*args)
        entry = self._by_signature.get(sig)
        if entry is None or not entry.pending or not entry.free._same():
            # first call (or the first since a free name changed): the code as emitted,
            # so a one-off call pays nothing for specializing (_same: no check compiled
            # for a snapshot a closure over each call's data makes anew at every call)
            pending = bool(signatures.OPTIMIZE and self.specialize
                           and self.mode in ("grad", "value_and_grad", "jvp")
                           and not signatures.calls_with_effects(self.ir))
            self._by_signature[sig] = self._entry(fn, argnums, free, None, pending)
            return fn(*args)
        if signatures.IN_BACKGROUND:  # the emitted code serves this call; a thread specializes
            result = fn(*args)
            _start_specializing(self, sig, entry, text, fn, args, argnums, free)
            return result
        with self._spec_lock:  # one thread specializes; the others wait for its code
            entry = self._by_signature.get(sig)
            if entry is not None and not entry.pending:
                return entry.fn(*args)
            return self._specialize(sig, text, fn, args, argnums, free)

    def _specialize(self, sig: Any, text: str, fn: Callable, args: tuple,
                    argnums: tuple[int, ...], free: "FreeSnapshot",
                    namespace: dict | None = None) -> Any:
        from ..optimize.specialize import specialize  # lazy: only a second call needs it

        generation = self._rules_generation
        background = namespace is not None
        namespace = dict(fn.__globals__) if namespace is None else namespace
        result = None
        try:
            result, new_text = specialize(text, namespace, fn.__name__, args, free.names)
        except Exception as exc:  # whatever the call raises, the emitted code raises
            new_text = None
            if not background:
                result = fn(*args)
            optimizer_bug(exc, self if background else None)
        else:
            if new_text is None and not background:
                result = fn(*args)
        spec = fn
        if new_text is not None:
            spec = compile_module(new_text, dict(fn.__globals__), fn.__name__)[fn.__name__]
            spec.__s2s_free__ = fn.__s2s_free__  # type: ignore[attr-defined]
        entry = self._entry(spec, argnums, free, new_text, False)
        entry.generation = generation  # the rules the emitted text was made with
        self._by_signature[sig] = entry
        return result

    def wait_specialized(self) -> None:
        """Wait for the specializing started in the background to finish (calls never
        need to: they run the emitted code until the specialized code is ready)."""
        for entry in list(self._by_signature.values()):
            if entry.job is not None:
                entry.job.join()
        error, self._spec_error = self._spec_error, None
        if error is not None:
            raise error

    def _entry(self, fn: Callable, argnums: tuple[int, ...], free: "FreeSnapshot",
               text: str | None, pending: bool) -> "FastEntry":
        entry = FastEntry(fn, argnums, free, self._rules_generation, text, pending)
        if text is not None:
            from ..optimize.specialize import returns_fresh  # lazy: as in _specialize

            entry.fresh = returns_fresh(text, fn.__name__)
        if self.mode == "grad" and not self.has_aux and not self.tuple_out:
            entry.single = argnums[0]
        return entry

    @property
    def specialized_source(self) -> str | None:
        """The code the latest signature specialized to (see ``s2s.specialize``), or
        None when no call has been specialized yet."""
        self.wait_specialized()
        texts = [e.text for e in self._by_signature.values() if e.text is not None]
        return texts[-1] if texts else None

    def _postprocess(self, result: Any, args: tuple, argnums: tuple[int, ...], fresh: bool = False,
                     fn: Callable | None = None, ran: Any = None, kwargs: Any = None) -> Any:
        """Gradients cast like their primals (api/arguments.py: ``fresh``, the code made
        every array it returns); the value and aux copied where they may share memory
        with the caller's arrays (api/outputs.py: ``ran``, the code that ran, or None)."""
        given = (args, kwargs) if kwargs else args
        if self.mode == "grad" and self.has_aux:
            grads, aux = owned_items(result, (1,), given, fn, ran)
            return self._fix(grads, args, argnums, fresh, fn), aux
        if self.mode == "grad":
            return self._fix(result, args, argnums, fresh, fn)
        value, grads = owned_items(result, (0,), given, fn, ran)  # (a 0-d array: JAX's)
        return zero_d(value), self._fix(grads, args, argnums, fresh, fn)

    def _fix(self, grads: Any, args: tuple, argnums: tuple[int, ...], fresh: bool,
             fn: Callable | None) -> Any:
        if self.tuple_out:
            out = tuple(_fix_one(g, args[i], args, fresh, fn) for g, i in zip(grads, argnums))
            return out if fresh else _own_arrays(out)  # (fresh: each leaf its own)
        out = _fix_one(grads, args[argnums[0]], args, fresh, fn)
        return out if fresh or type(out) is np.ndarray else _own_arrays(out)

    def _outputs(self, result: Any) -> Any:
        """An aux output's objects the function built (a NamedTuple), rebuilt."""
        if not self.has_aux or self.mode not in ("grad", "value_and_grad"):
            return result  # (rebuilds_outputs below, inline: a frame less a call)
        return records.rebuild_aux(self.built_template(), result, self.mode)

    def __repr__(self) -> str:
        return f"<s2s {self.mode} of {self.fn.__qualname__}>"

    def selfcheck(self, *args: Any, seed: int = 0, oracle: bool = True) -> dict:
        """Cheap evidence on these inputs: a finite-difference probe along a random
        direction, the JVP/VJP inner-product identity, and JAX when installed (see
        ``s2s.selfcheck``); a JSON-serialisable report whose ``ok`` says if all passed."""
        if SELF_CHECK is None:  # (installed by the package root: import s2s)
            raise RuntimeError("the self-check is installed by `import s2s`")
        return SELF_CHECK(self, *args, seed=seed, oracle=oracle)


def _start_specializing(t: Transformed, sig: Any, entry: FastEntry, text: str, fn: Callable,
                        args: tuple, argnums: tuple[int, ...], free: FreeSnapshot) -> None:
    """Specialize ``t``'s code on a thread, from copies of this call's arguments (the caller may
    write into its arrays once the call returns) and of the module constants the code read."""
    with t._spec_lock:
        job, started = entry.job, entry.job is not None
        if not started:
            job = entry.job = threading.Thread(
                target=t._specialize, name="s2s-specialize", daemon=True,
                args=(sig, text, fn, _copies(args), argnums, free, dict(fn.__globals__)))
    if started:  # yield: the thread gives the GIL up at each file read and egglog call,
        time.sleep(0)  # and a loop of small calls kept it for good without this
        return  # (tests/test_specialize_background.py)
    _RUNNING.add(job)
    black_module()  # (here: the thread must not be black's first importer, see black_module)
    job.start()


def peel_source_loop(t: Any, err: TransformError) -> bool:
    """Where vmap, batching the code of the transform ``t``, refused (``err``) a loop
    carrying a value whose rank its first iteration changes, a loop it could not
    peel (a gradient's, pushing its tape): the user's loop at that position is
    peeled in the IR ``t`` (or the transform it transforms) emits from, its code
    made again.  False where it is peeled already, or cannot be (or ``t`` is no
    transform of the user's code)."""
    if not isinstance(t, Transformed) or not getattr(err, "peel_at_source", False) or (
            getattr(err, "loc", None) is None):
        return False
    with _LOCK:
        if t.inner is not None:
            if not peel_source_loop(t.inner, err):
                return False
            # (the inner code's calls of the user's functions: peeled alike)
            t._peel |= getattr(t.inner, "_peel", frozenset())
        else:
            keys = peelable_like(t.ir, err.loc) - t._peel
            if not keys:
                return False
            t._peel |= keys
        t._forget()
        return True


def rebuilds_outputs(t: Transformed) -> bool:
    """Whether ``Transformed._outputs`` changes ``t``'s results (an aux output's objects
    rebuilt; s2s.jit's direct paths skip it otherwise)."""
    return t.has_aux and t.mode in ("grad", "value_and_grad")


# Installed from above: the self-check (tools/, a floor above api/, by the package root:
# s2s/__init__.py) and FAMILY_MEMBER, grad of a lambda made again (api/family_grads.py)
SELF_CHECK: Callable[..., dict] | None = None
FAMILY_MEMBER: Callable[[Any, tuple], Any] = lambda fun, options: None  # noqa: E731


def grad(
    fun: Callable | None = None,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Any:
    """The gradient of a scalar-valued ``fun``, as emitted NumPy code.

    Same semantics as ``jax.grad``: ``argnums`` an int (one gradient), negative, or a
    tuple (a tuple of gradients); pytree arguments keep their structure; keyword
    arguments are never differentiated; ``allow_int`` gives integer arguments
    ``float0`` zeros; complex arguments are differentiated with JAX's convention (the
    gradient of a real ``fun`` is the conjugate of df/dz... see docs/complex.md), and
    ``holomorphic=True`` differentiates a holomorphic ``fun`` of complex arguments
    with a complex output.  A bound method (``model.loss``)
    reads its object's attributes at each call.  Usable as ``@grad`` or
    ``@grad(argnums=1)``.
    """
    if fun is None:
        return lambda f: _transform(f, "grad", argnums, has_aux, holomorphic, allow_int)
    return _transform(fun, "grad", argnums, has_aux, holomorphic, allow_int)


def value_and_grad(
    fun: Callable | None = None,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Any:
    """Like :func:`grad`, returning ``(value, gradient)`` (``((value, aux), grad)``)."""
    mode = "value_and_grad"
    if fun is None:
        return lambda f: _transform(f, mode, argnums, has_aux, holomorphic, allow_int)
    return _transform(fun, mode, argnums, has_aux, holomorphic, allow_int)


def _transform(fun: Callable, mode: str, argnums: int | Sequence[int], has_aux: bool,
               holomorphic: bool = False, allow_int: bool = False) -> Any:
    """grad's options and objects (s2s/api/methods.py) around a ``Transformed`` of the
    function ``fun`` denotes (a partial, a NumPy function, a callable object:
    s2s/api/callables.py)."""
    bound = trees.unbound(fun)
    if bound is not None:  # (per class of the object: methods.Bound)
        return methods.Bound(bound[1], bound[0], make=lambda f: _transform(
            f, mode, methods.shifted(argnums), has_aux, holomorphic, allow_int))
    if allow_int:
        return methods.AllowInt(lambda nums: callables.transformable(
            fun, lambda f: Transformed(f, mode, nums, has_aux, holomorphic)), argnums)
    made = FAMILY_MEMBER(fun, (mode, argnums, has_aux, holomorphic))
    return made if made is not None else callables.transformable(
        fun, lambda f: Transformed(f, mode, argnums, has_aux, holomorphic))


class _VJP(Transformed):
    def __init__(self, fn: Callable, has_aux: bool) -> None:
        super().__init__(fn, "vjp", 0, has_aux)
        self.tuple_out = True


def _refuse_object_output(out: Any, fn: Any) -> None:
    """vjp of a function returning an object of a class that is not a pytree (one it
    built, ``return Model(x)``): its cotangent has no structure to take."""
    if isinstance(out, (tuple, list)):
        for item in out:
            _refuse_object_output(item, fn)
        return
    if isinstance(out, dict):
        for item in out.values():
            _refuse_object_output(item, fn)
        return
    if out is None or isinstance(out, (np.ndarray, np.generic, int, float, complex)) or \
            trees.has_nodes(out, False) or not hasattr(out, "__dict__"):
        return
    code = getattr(fn, "__code__", None)
    loc = None
    if code is not None:
        line = linecache.getline(code.co_filename, code.co_firstlineno).rstrip("\n")
        loc = Loc(code.co_filename, code.co_firstlineno, 1, line)
    raise TransformError(
        f"vjp: the function returns a `{type(out).__name__}` object, which is not a "
        "pytree, so its cotangent has no structure s2s (or JAX) can take", loc,
        "return its fields (`return m.w, m.b` or a dict of them), or register the "
        "class (`s2s.tree_util.register_dataclass`)", getattr(fn, "__name__", None))


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> Any:
    """``(out, vjp_fn)`` (or ``(out, vjp_fn, aux)``), as ``jax.vjp``.

    ``vjp_fn(cotangent)`` runs the emitted VJP function and returns one cotangent per
    primal, as a tuple; integer and boolean primals get ``float0`` zeros, as in JAX.
    """
    given, primals = primals, trees.plain_args(primals, ())  # (s2s/api/trees.py)
    check_array_types("vjp", primals)
    float_args = _inexact_args(primals)
    call = fun  # (the user's function as given: a bound method runs as one)
    method = trees.unbound(fun)  # a bound method: its object's attributes, constants
    if method is not None:  # (its function as a method of the object's class)
        method = (methods.for_class(method[0], type(method[1])), method[1])
        fun, primals = method[0], (trees.attributes(method[1]), *primals)
        float_args = tuple(i + 1 for i in float_args)
    t = _VJP(callables.as_function(fun, len(primals), args=primals), has_aux)
    if method is not None:  # (`self.other(...)` in it: the object's own method?)
        methods.check_self_methods(method[0], method[1])
    try:
        out = call(*_copies(given))  # (the user's own code may write into its arguments)
    except ValueError as err:  # an `if` on an array: located at your line
        reraise_located(err, None, t.fn.__name__)
    out, aux = _split_aux(out, has_aux)
    if t.ir.free:  # (a module's array returned: copied, as an argument's copy is)
        out, aux = owned_module((out, aux), t.ir.free)
    kinds = tuple(kind_of(p) for p in primals) + (LEAF,) * (  # (defaults: as grad's)
        len(t.ir.params) - len(primals))
    _refuse_object_output(out, t.fn)
    plain_out = trees.plain(out) if trees.has_nodes(out, False) else out
    # (the code, primals and free names' objects of now: api/pullbacks.py)
    frozen = Frozen(t, kinds, float_args, primals) if float_args else None

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        if plain_out is not out:  # (an output the function built: a NamedTuple)
            cotangent = trees.plain(cotangent)
        _check_cotangent(cotangent, plain_out)
        if type(cotangent) in (float, complex) and isinstance(plain_out, (np.ndarray, np.generic)):
            cotangent = np.asarray(cotangent, plain_out.dtype)  # (as JAX's weak type)
        result: list[Any] = []
        if frozen is not None:
            try:
                grads = frozen.call(cotangent)
            except (ValueError, IndexError, TypeError) as err:  # (located at your line)
                reraise_located(err, t.ir, t.fn.__name__)
        else:
            grads = ()
        it = iter(grads)
        foreign = _foreign((frozen.primals, cotangent), frozen.fn) if frozen else []
        for i, p in enumerate(primals):
            if i in float_args:  # (never the caller's array, nor a view of one)
                result.append(_cast_tree(_copy_shared(next(it), foreign), p))
            elif p is None or method is not None and i == 0:
                result.append(None)  # JAX's cotangent of an empty pytree
            else:
                result.append(
                    _rebuild(kind_of(p), [np.zeros(np.shape(x), float0) for x in _leaves(p)])
                )
        result = result[1:] if method is not None else result
        return tuple(trees.unplain(g, r) for g, r in zip(given, result))

    vjp_fn.__name__ = t.__name__
    vjp_fn.transformed = t  # type: ignore[attr-defined]
    if has_aux:
        return zero_d(out), vjp_fn, aux
    return zero_d(out), vjp_fn  # (a NumPy scalar a 0-d array, as JAX's Array)


# the jvp transforms per function and has_aux (api/pushforward.py)
# (not weak: each transform holds its function, which would keep the key alive)
JVPS: LRU[Any, dict[bool, Any]] = LRU(128)


# other transforms' latest code per function, by name: api/shapes.py's "eval_shape"
SOURCES: dict[str, Callable[[Any], str]] = {}


def shown(t: Transformed, text: str, fn: Callable) -> str:
    """The emitted text ``t`` runs, with its forward listing (``s2s.source``); made
    once per text and function (reading ``.source`` again costs a look-up)."""
    cached = t.__dict__.get("_shown")
    if cached is not None and cached[0] is text and cached[1] is fn:
        return cached[2]
    user = t.fn
    while isinstance(user, Transformed) or hasattr(user, "_generate_for"):
        user = user.fn if hasattr(user, "fn") else user.fun  # (a Jacobian's: `fun`)
    user = getattr(user, "__func__", user)
    listed = with_forwards(text, getattr(fn, "__globals__", {}),
                           getattr(user, "__globals__", None))
    t.__dict__["_shown"] = (text, fn, listed)
    return listed


def emitted_namespace(f: Any, transform: str | None = None) -> dict[str, Any]:
    """The names the code ``source(f, transform)`` shows runs with ({} where none)."""
    if transform == "jvp":
        per_fn = JVPS.get(f) or JVPS.get(families.ran_as(f)) or {}
        latest = [t for t in per_fn.values() if t._last is not None]
        return latest[-1]._last[1].__globals__ if latest else {}
    transformed = getattr(f, "transformed", f)
    if isinstance(transformed, Transformed):
        return transformed._default()[1].__globals__
    return getattr(f, "_namespace", None) or getattr(
        getattr(f, "__wrapped__", None), "__globals__", {})


def source(f: Any, transform: str | None = None) -> str:
    """The emitted source of a transformed function, as a module's text.

    ``source(g)`` for ``g = s2s.grad(f)`` (or vmap, jacfwd...); ``source(f, "jvp")``
    for the forward-mode code the latest ``s2s.jvp(f, ...)`` call ran;
    ``source(f, "eval_shape")`` for the shape code the latest ``s2s.eval_shape(f,
    ...)`` ran.
    """
    if transform in SOURCES:  # (eval_shape's: api/shapes.py, which imports this module)
        return SOURCES[transform](f)
    if transform == "jvp":
        per_fn = JVPS.get(f) or JVPS.get(families.ran_as(f))
        if not per_fn:
            raise ValueError(f"s2s.jvp has not been called on {f!r}")
        latest = [t for t in per_fn.values() if t._last is not None]
        if not latest:
            raise ValueError(f"s2s.jvp has not been called on {f!r}")
        return shown(latest[-1], *latest[-1]._last)
    if isinstance(f, callables.PerArity):  # (code per call: the latest, or "call it")
        return f.source
    if hasattr(f, "source") and not isinstance(f, Transformed) and isinstance(
            getattr(f, "source"), str):
        return f.source
    transformed = getattr(f, "transformed", f)
    if not isinstance(transformed, Transformed):
        raise TypeError(f"{f!r} is not an s2s-transformed function")
    return transformed.source
