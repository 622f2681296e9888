"""``s2s.jvp``: the forward-mode transform's entry, its per-function cache (``JVPS``,
kept in transformed.py beside ``source``, which reads it) and the fast path of a
signature seen before, with the results cast and copied as ``jax.jvp`` gives them."""

from __future__ import annotations

import cmath
import types
from typing import Any, Callable

import numpy as np

from ..ir.kinds import LEAF, Kind, kind_of
from ..ir.nodes import Function
from ..primitives.registry import _GENERATION
from ..transforms.forward import ForwardSpec, emit_forward
from ..transforms.module import Module
from . import callables, dtypes_down, families, records, trees
from .arguments import (
    _check_tangents,
    _foreign,
    _inexact_args,
    _shares,
    _tangent_like,
    check_array_types,
    zero_d,
)
from .family_grads import Member
from .hotcode import MISS, hot_function
from .located import reraise_located
from .methods import check_self_methods, for_class
from .outputs import owned_items
from .signatures import FastEntry, call_signature, flat_key, read_free_names
from .transformed import JVPS, Transformed
from .trees import _leaves, _rebuild
from .value_methods import refuse_value_methods

__all__ = ["jvp"]


class _JVP(Transformed):
    def __init__(self, fn: Callable, has_aux: bool) -> None:
        super().__init__(fn, "jvp", 0, has_aux)
        self.tuple_out = True
        # the entries of signatures of plain arrays that ran specialized, by the
        # arrays' shapes and dtypes in one flat tuple, as ``_plan`` tuples (jvp's hot
        # path; each keeps its entry's guards, checked at every call; emptied by a
        # checked call)
        self.hot: dict[tuple, tuple] = {}
        # (shape, dtype, shape, dtype, plan) of the latest one-primal call that found
        # its plan in ``hot`` (None when ``hot`` is emptied)
        self.last: tuple | None = None
        # the generated path (api/hotcode.py) of ``last``'s plan, on jvp's own
        # arguments: ``last_hot(primals, tangents)`` (``MISS``: none, or a test failed)
        self.last_hot: Callable[[Any, Any], Any] = _no_hot
        # whether a call was given tangents some of which were all zero (_jvp_kept):
        # the hot path then tests which are at every call
        self.zeros_seen = False

    def _run_jvp(self, text: str, fn: Callable, args: tuple, nprimals: Any) -> Any:
        """The emitted JVP ``fn`` on ``args`` (the primals, then the tangents of the
        inexact ones), or the code specialized to their signature (as a grad's: from
        the second call with it; guarded by the signature, the module constants the
        code reads and the rules).  ``s2s.jvp`` checked the arguments, and casts and
        copies the results, whichever code runs.  ``nprimals``: how many primals, or
        ``(that, the positions of the tangents passed)`` where zero ones were left out
        (_jvp_kept: another code, so another key)."""
        if self._spec_error is not None:  # (only under the test suite's checks)
            self.wait_specialized()
        if self._by_signature:
            sig = call_signature(args)
            hit = self._by_signature.get((nprimals, sig)) if sig is not None else None
            if hit is not None and not hit.pending and hit.valid():
                if hit.free_names:
                    read_free_names(hit.fn)
                return hit.fn(*args)
        return self._call_and_specialize(text, fn, args, (), head=nprimals)

    def _emit(self, ir: Function, module: Module, kinds: tuple[Kind, ...],
              argnums: tuple[int, ...], tuple_out: bool) -> None:
        # for jvp the key's third slot says how many arguments the call passes and
        # whether only the output's tangent is wanted (jacfwd)
        nargs, tangent_only = tuple_out if isinstance(tuple_out, tuple) else (None, False)
        spec = ForwardSpec(argnums, self.has_aux, kinds, nargs, tangent_only)
        emit_forward(ir, spec, module, self.__name__)




def _jvp_transform(fun: Callable, has_aux: bool) -> _JVP:
    """One transformed object per function (and has_aux): its code is cached on it."""
    try:
        per_fn = JVPS.setdefault(fun, {})
    except TypeError:  # not hashable: no caching
        return _JVP(fun, has_aux)
    if has_aux not in per_fn:
        per_fn[has_aux] = _JVP(fun, has_aux)
    return per_fn[has_aux]


# (fun, has_aux, its _JVP) of the latest call that ran a signature's code: a call
# with the same function looks its transform up by identity (no lock, no hashing)
_LATEST: tuple[Any, Any, Any] = (None, None, None)


def jvp(fun: Callable, primals: Any, tangents: Any, has_aux: bool = False) -> Any:
    """``(out, out_tangent)`` (or ``(out, out_tangent, aux)``), as ``jax.jvp``.

    Runs the emitted forward-mode function (see ``s2s.source(s2s.jvp_of(f))`` or the
    ``.source`` of the returned function's transform); integer and boolean primals take
    ``float0`` tangents and carry none.
    """
    latest = _LATEST
    if latest[0] is fun and latest[1] is has_aux:
        # the function of the latest call (a Python function or transform, itself the
        # one transformed): first the generated path of the latest one-primal plan
        # (api/hotcode.py: the arguments' tests, the guards, the code and the results'
        # checks in one frame, on jvp's own arguments), then arrays of a signature
        # seen before go straight to its code, found by their shapes and dtypes
        # (``_JVP.hot``) and guarded as FastEntry.valid guards (inline: each frame is
        # a tenth of a microsecond); _spec_error: a background specializing's error,
        # which the checked path raises (tests only)
        out = latest[2].last_hot(primals, tangents)
        if out is not MISS:
            return out
    if latest[0] is fun and latest[1] is has_aux and latest[2]._spec_error is None:
        t = latest[2]
        if type(primals) in _SEQ and type(tangents) in _SEQ and len(primals) == 1 == len(
                tangents):  # (one primal, a Hessian-vector product's: no loop)
            x, v = primals[0], tangents[0]
            args = (x, v)
            hit = None
            if type(x) is np.ndarray and type(v) is np.ndarray:
                # the plan of the latest call's arrays where these have their shapes
                # and dtypes (the same dtype objects: no key to build and hash), else
                # the plan of their key (its generated path, ``last_hot``, ran above)
                last = t.last
                if last is not None and x.dtype is last[1] and v.dtype is last[3] and \
                        x.shape == last[0] and v.shape == last[2]:
                    hit = last[4]
                else:
                    key = (x.shape, x.dtype, v.shape, v.dtype)
                    hit = t.hot.get(key)
                    if hit is not None:
                        t.last = (*key, hit)
                        t.last_hot = hit[10] or _no_hot
        else:
            if t.zeros_seen:  # (given zero tangents before: which are zero now?)
                done = _without_zeros(fun, primals, tangents, has_aux)
                if done is not None:
                    return done
            args, hit = _hot_entry(t, primals, tangents)
        if hit is not None and hit[0] is fun and hit[5] == _GENERATION[0] and (
                hit[3] is None or hit[3]()) and t.ir is hit[7]:
            fn = hit[2]
            if hit[4]:
                read_free_names(fn)
            try:
                result = fn(*args)
            except ValueError as err:
                reraise_located(err, t.ir, t.fn.__name__)
            return _hot_results(t, hit, fun, result, args, has_aux)
    if type(fun) is types.FunctionType:  # a lambda made again: its family's transform
        if fun.__code__ is _FAMILY[0] and has_aux is False:  # (the latest family's
            out = _FAMILY[1](fun, primals, tangents)  # member: its canonical's hot path)
            if out is not MISS:
                return out
        found = families.family(fun)
        if found is not None:
            out = families.run_as(found, fun, lambda canon: jvp(
                canon, primals, tangents, has_aux))
            _family_path(fun, found, has_aux)
            return out
    elif type(fun) is Member and "_member" in fun.__dict__:
        # grad of a lambda made again (``s2s.jvp(s2s.grad(lambda w: f(w, x)), ...)``):
        # the jvp of its family's shared grad, with the lambda's cell contents (the
        # member made its own transform: emitted and specialized at every call)
        lam, found, shared, _ = fun.__dict__["_member"]
        try:
            families.RAN_AS[fun] = shared  # (s2s.source(g, "jvp"): the shared grad's)
        except TypeError:  # pragma: no cover (a Member is weak-referenceable)
            pass
        return families.run_as(found, lam, lambda canon: jvp(
            shared, primals, tangents, has_aux))
    done = _without_zeros(fun, primals, tangents, has_aux)
    if done is not None:
        return done
    done = _jvp_fast(fun, primals, tangents, has_aux)
    if done is not None:
        return done
    result = _jvp(fun, primals, tangents, has_aux)
    if isinstance(primals, (tuple, list)):  # (of a gradient: in its inputs' dtype)
        down = dtypes_down.target(fun, tuple(primals))
        if down is not None:
            result = tuple(dtypes_down.cast_at(down, r) for r in result[:2]) + \
                tuple(result[2:])
    return _zero_d(result)


def _no_hot(primals: Any, tangents: Any) -> Any:
    return MISS


# (code, families.runner of the latest family whose canonical function's jvp ran its
# generated path: ``run(fun, primals, tangents)``, that family, the canonical's _JVP)
_FAMILY: tuple = (None, None, None, None)


def _family_path(fun: Callable, found: tuple, has_aux: bool) -> None:
    """Keep the path of ``found``'s members (``_FAMILY``) where its canonical function's
    transform is the latest one jvp ran, has a generated path, and ``found`` is the
    latest family: the canonical's ``last_hot`` run with the member's cell contents."""
    global _FAMILY
    t = _LATEST[2]
    if has_aux is not False or _LATEST[0] is not found[0] or t.last_hot is _no_hot or \
            _FAMILY[2] is found and _FAMILY[3] is t:
        return
    run = families.runner(found, t, MISS)
    if run is not None:
        _FAMILY = (fun.__code__, run, found, t)


_KEPT = object()  # (_JVP.hot's keys of the code given only the nonzero tangents)


def _without_zeros(fun: Callable, primals: Any, tangents: Any, has_aux: bool) -> Any:
    """jvp's result by the code given only the tangents not all zero (_jvp_kept), or
    None where none is zero, or the primals are not all floating arrays, or that code
    gave a number not finite.  (Tested on the hot path only for a transform given zero
    tangents before, ``_JVP.zeros_seen``: a loop of nonzero tangents pays nothing.)"""
    if has_aux or type(primals) not in _SEQ or type(tangents) not in _SEQ or \
            not 1 < len(primals) == len(tangents):
        return None
    keep = _nonzero_tangents(primals, tangents)
    return None if keep is None else _jvp_kept(fun, primals, tangents, *keep)


def _nonzero_tangents(primals: Any, tangents: Any) -> tuple[tuple, tuple] | None:
    """``(the positions of the tangents that are not all zero, the primals' shapes and
    dtypes in one flat tuple)`` (a NaN is not zero), where some are and some are not,
    and every primal and tangent is a floating array whose tangent has its primal's
    dtype and shape (else jvp's own checks decide): None where no tangent can be left
    out.  (The flat tuple is also that of the arguments the code is given:
    ``flat_key``, _JVP.hot's key.)"""
    for d in tangents:  # (the common case first: every tangent's first entry not zero)
        if type(d) is not np.ndarray or not d.size or not d.item(0):
            break
    else:
        return None
    keep, key = [], []
    i = 0
    for p, d in zip(primals, tangents):
        if type(p) is not np.ndarray or type(d) is not np.ndarray:
            return None
        shape, dtype = p.shape, p.dtype
        if dtype.kind not in "fc" or d.dtype is not dtype and d.dtype != dtype or \
                d.shape != shape:
            return None
        key += (shape, dtype)
        if d.size and d.item(0) or _count_nonzero(d):
            keep.append(i)
        i += 1
    return (tuple(keep), tuple(key)) if keep and len(keep) < i else None


def _jvp_kept(fun: Callable, primals: Any, tangents: Any, keep: tuple[int, ...],
              key: tuple) -> Any:
    """jvp's result where only the tangents at ``keep`` are not all zero: the code of
    the jvp in those primals alone, the others its constants as a closure's data are
    (``jvp(g, (w, x, y), (v, zeros, zeros))`` of a gradient: no ``x_dot @ w`` nor
    ``x_dot.T @ ...``); its own signature key, ``(n, keep)``.  A zero tangent adds
    exact zeros, except through an inf or NaN it meets (``0 * inf``): where an
    output of this code is not finite, None, and the full code runs instead."""
    latest, n = _LATEST, len(primals)
    result: Any = None
    if latest[0] is fun and latest[1] is False and latest[2]._spec_error is None:
        t = latest[2]
        args = (*primals, *(tangents[i] for i in keep))
        hit = t.hot.get((_KEPT, keep, key))
        if hit is not None and hit[0] is fun and hit[5] == _GENERATION[0] and (
                hit[3] is None or hit[3]()) and t.ir is hit[7]:
            if hit[4]:
                read_free_names(hit[2])
            try:
                result = hit[2](*args)
            except (ValueError, IndexError) as err:
                reraise_located(err, t.ir, t.fn.__name__)
            result = _hot_results(t, hit, fun, result, args, False, n)
            if hit[10] is not None:  # (its generated path, jvp's first test from now)
                t.last, t.last_hot = None, hit[10]
    if result is None and type(fun) is types.FunctionType:  # (a lambda made again)
        found = families.family(fun)
        if found is not None:
            return families.run_as(found, fun, lambda canon: _jvp_kept(
                canon, primals, tangents, keep, key))
    if result is None:
        result = _jvp_fast(fun, primals, tangents, False, keep)
    if result is None:
        result = _jvp(fun, primals, tangents, False, keep)
        down = dtypes_down.target(fun, tuple(primals))
        if down is not None:
            result = tuple(dtypes_down.cast_at(down, r) for r in result)
        result = _zero_d(result)
    return result if _finite(result) else None


def _finite(result: tuple) -> bool:
    """Whether both outputs of a jvp hold only finite numbers (an overflow of a
    product of two also reads as not: the full code then, as exact)."""
    out, out_dot = result[0], result[1]
    if type(out) is np.ndarray and type(out_dot) is np.ndarray and out.shape == out_dot.shape:
        # (one product: a non-finite entry of either makes one, 0 * inf included)
        return isfinite(vdot(out, out_dot))
    for leaf in (*_leaves(out), *_leaves(out_dot)):
        if isinstance(leaf, np.ndarray) and leaf.dtype.kind in "fc" and \
                not isfinite(vdot(leaf, leaf)):
            return False
    return True


isfinite, vdot = cmath.isfinite, np.vdot
try:  # (np.count_nonzero's own function, without its Python frame)
    from numpy._core.multiarray import count_nonzero as _count_nonzero
except ImportError:  # pragma: no cover (NumPy 1.x)
    _count_nonzero = np.count_nonzero


def _hot_results(t: _JVP, hit: tuple, fun: Any, result: Any, args: tuple,
                 has_aux: bool, n: int | None = None) -> Any:
    """jvp's hot path: the results of a plan's code as the checked path makes them
    (``n``: how many of ``args`` are primals, where not half of them)."""
    if hit[6]:
        # no objects to rebuild, fresh arrays: two of one dtype and shape are
        # the results as they are where the cast to the inputs' dtype (hit[8]:
        # None, or that dtype) leaves them so, or cast (else _jvp_results and
        # the cast decide); hit[9][0]: a dtype this plan's results had that
        # passed those checks (each result's is compared with it)
        out, out_dot = result
        if type(out) is np.ndarray and type(out_dot) is np.ndarray:
            dtype = out.dtype
            if out_dot.dtype is dtype and out_dot.shape == out.shape:
                passed = hit[9]
                if dtype is passed[0]:
                    return result
                if dtype.kind in "fc":
                    down = hit[8]
                    if down is None or dtype is down:
                        passed[0] = dtype
                        return result
                    if dtype.kind == down.kind and dtype.itemsize > down.itemsize:
                        # (float32 inputs, code computing in float64:
                        # dtypes_down's cast, into new arrays)
                        return out.astype(down), out_dot.astype(down)
    return _finish(t, hit[1], fun, result, args, len(args) // 2 if n is None else n, has_aux)


_SEQ = (tuple, list)


def _hot_entry(t: _JVP, primals: Any, tangents: Any) -> tuple[tuple, Any]:
    """``(args, the entry _JVP.hot holds for them)`` (None where it holds none)."""
    if type(primals) not in _SEQ or type(tangents) not in _SEQ or \
            len(primals) != len(tangents):
        return (), None
    args = (*primals, *tangents)
    key = flat_key(args)
    return args, (t.hot.get(key) if key is not None else None)


def forget(fun: Any) -> None:
    """Drop ``fun``'s transform from jvp's hot path (its JVPS entry was dropped)."""
    global _LATEST, _FAMILY
    if _LATEST[0] is fun:
        _LATEST = (None, None, None)
    if _FAMILY[2] is not None and _FAMILY[2][0] is fun:
        _FAMILY = (None, None, None, None)


def _plan(t: _JVP, hit: FastEntry, fun: Any, args: tuple, n: int, has_aux: bool,
          keep: tuple[int, ...] | None = None) -> tuple:
    """What jvp's hot path reads of a specialized entry, in one tuple: ``(fun, the
    entry, its code, its free names' check (None: it reads none), whether the code
    reads free names, the rules' generation it was made with, whether its results
    may need nothing done (no objects to rebuild, fresh arrays, any cast to the
    inputs' dtype one of both outputs), the IR, the dtype of that cast or None, a
    list holding the dtype of results returned as they are, once one was, the
    generated path of a one-primal call, or of a call given zero tangents but at
    ``keep`` (_jvp_kept), or None)``."""
    down = dtypes_down.target(fun, args[:n])
    plain = (down is None or down[0] is None) and t.built_template() is None and \
        hit.fresh and not has_aux
    check = None
    if hit.free.items:
        hit.free.same()  # (compiles the check: FreeSnapshot.same)
        check = hit.free.same
    plan = (fun, hit, hit.fn, check, hit.free_names, hit.generation, plain, t.ir,
            None if down is None else down[1], [None])
    # [10]: its generated path (api/hotcode.py), for jvp's one-primal calls
    hot = hot_function(t, (hit, hit.fn, check, hit.free_names, None), args,
                       lambda args, r: _hot_results(t, plan, fun, r, args, has_aux), None,
                       f"GEN[0] == {hit.generation!r} and owner._spec_error is None and "
                       "owner.ir is IR", {"IR": t.ir},
                       lambda err: reraise_located(err, t.ir, t.fn.__name__),
                       pair=plan[9] if plain else None, split=True) if n == 1 else None
    if keep is not None:
        def finish(args: tuple, r: Any) -> Any:  # (not finite: MISS, _jvp_kept decides)
            r = _hot_results(t, plan, fun, r, args, has_aux, n)
            return r if _finite(r) else MISS

        hot = hot_function(t, (hit, hit.fn, check, hit.free_names, None), args, finish, None,
                           f"GEN[0] == {hit.generation!r} and owner._spec_error is None and "
                           "owner.ir is IR", {"IR": t.ir},
                           lambda err: reraise_located(err, t.ir, t.fn.__name__),
                           pair=plan[9] if plain else None, keep=keep)
    return plan + (hot,)


def _finish(t: _JVP, hit: FastEntry, fun: Any, result: Any, args: tuple, n: int,
            has_aux: bool) -> Any:
    """The results of a signature's code (``hit``) on ``args``, the primals then the
    tangents of ``fun``'s call, every primal inexact (a signature with an integer
    primal passes fewer tangents, so it is another key), as the checked path makes
    them, in the inputs' dtype.  What the signature decides (the cast: it fixes the
    primals' dtypes) is kept on the entry, with whether the results can be returned
    as they are (``jvp``'s hot path)."""
    known = hit.down
    if known is None or known[0] is not fun or known[3] is not t.ir:
        down = dtypes_down.target(fun, args[:n])
        built = t.built_template()
        known = hit.down = (fun, down, down is None and built is None and hit.fresh
                            and not has_aux, t.ir)
    result = _jvp_results(result, args[:n], args[n:], hit.fn, has_aux,
                          t.built_template(), hit.fresh, hit.fn)
    down = known[1]
    if down is None:
        return _zero_d(result)
    return _zero_d(tuple(dtypes_down.cast_at(down, r) for r in result[:2]) + tuple(result[2:]))


def _zero_d(result: tuple) -> tuple:
    """The primal and tangent outputs' NumPy scalars as 0-d arrays (JAX's Arrays)."""
    out, out_dot = result[0], result[1]
    if type(out) is np.ndarray and type(out_dot) is np.ndarray:
        return result
    return (zero_d(out), zero_d(out_dot)) + tuple(result[2:])


def _jvp(fun: Callable, primals: Any, tangents: Any, has_aux: bool,
         keep: tuple[int, ...] | None = None) -> Any:
    """The checked path; ``keep``: the positions of the only tangents that are not all
    zero (_jvp_kept), the others' primals then constants of the code."""
    given = primals  # (a NamedTuple argument returned: a NamedTuple, as JAX returns it)
    if isinstance(primals, (tuple, list)) and isinstance(tangents, (tuple, list)):
        refuse_value_methods(fun, tuple(primals))  # (api/value_methods.py)
        primals, tangents = (trees.plain(tuple(primals), meta=True),
                             trees.plain(tuple(tangents), meta=True))
    _check_tangents(primals, tangents)
    check_array_types("jvp", (primals, tangents))
    active = _inexact_args(primals)
    if keep is not None:
        active = tuple(i for i in active if i in keep)
    method = trees.unbound(fun)  # a bound method: its object's attributes, constants
    if method is not None:  # (its function as a method of the object's class)
        method = (for_class(method[0], type(method[1])), method[1])
        fun, primals = method[0], (trees.attributes(method[1]), *primals)
        tangents, active = (None, *tangents), tuple(i + 1 for i in active)
    t = _jvp_transform(callables.as_function(fun, len(primals), args=primals), has_aux)
    t._refresh()
    if keep is not None:
        t.zeros_seen = True
    t.hot.clear()  # (a checked call: what a signature runs may have changed)
    t.last, t.last_hot = None, _no_hot
    if method is not None:  # (`self.other(...)` in it: the object's own method?)
        check_self_methods(method[0], method[1])
    kinds = tuple(kind_of(p) for p in primals) + (LEAF,) * (len(t.ir.params) - len(primals))
    text, fn = t._generate(kinds, active, (len(primals), False), nargs=len(primals),
                           inner_args=primals)
    read_free_names(fn)
    t.specialize = getattr(fun, "specialize", True) is not False  # (a grad's own switch)
    try:
        result = t._run_jvp(text, fn, (*primals, *(tangents[i] for i in active)),
                            len(primals) if keep is None else (len(primals), active))
    except (ValueError, IndexError, TypeError) as err:  # an `if` on an array: located at your line
        reraise_located(err, t.ir, t.fn.__name__)
    result = _jvp_results(result, primals, tangents, fn, has_aux, t.built_template())
    if given is primals:
        return result
    result = (result[0], trees.fields_like(result[0], result[1]), *result[2:])
    return trees.unplain_nodes(given, result)  # (the tangent in the output's type too)


def _jvp_results(result: Any, primals: tuple, tangents: tuple, fn: Callable,
                 has_aux: bool, built: Any, fresh: bool = False,
                 ran: Callable | None = None) -> Any:
    """``(out, out_tangent[, aux])`` of the emitted JVP's ``result``: each tangent in
    its output's dtype and shape, never one of the caller's arrays nor a view of one
    (nor are the output and aux: api/outputs.py, ``ran`` the code that made
    ``result``, None where not known); the objects the function built (``built``:
    records.template), made again.  ``fresh``: the code returns only arrays it made,
    each its own (a specialized code's ``FastEntry.fresh``), so the tangent shares
    memory with nothing else."""
    if not fresh:
        result = owned_items(result, (0, 2), (primals, tangents), fn, ran)
    out, out_dot = result[0], result[1]
    if built is None and type(out) is np.ndarray and type(out_dot) is np.ndarray and \
            out.dtype.kind in "fc" and out_dot.dtype == out.dtype and out_dot.shape == out.shape and \
            (fresh or out_dot.flags.writeable and not _shares(
                out_dot, _foreign((primals, tangents), fn))):
        return (out, out_dot, result[2]) if has_aux else (out, out_dot)  # (as it is)
    kind = kind_of(out)
    # a None output has a None tangent, as in JAX (None is an empty pytree there)
    # (a tangent that is a caller's array, or a view of one, is copied)
    foreign = _foreign((primals, tangents), fn)
    fixed = [None if o is None else _tangent_like(
        d.copy() if isinstance(d, np.ndarray) and _shares(d, foreign) else d, o)
             for d, o in zip(_leaves(out_dot), _leaves(out))]
    out_dot = _rebuild(kind, fixed)
    if has_aux:
        out, aux = records.rebuild(built, (out, result[2]))
        return out, records.rebuild(built and built[1][0], out_dot), aux
    return records.rebuild(built, out), records.rebuild(built, out_dot)


def _jvp_fast(fun: Callable, primals: Any, tangents: Any, has_aux: bool,
              keep: tuple[int, ...] | None = None) -> Any:
    """A jvp of arrays whose signature (every primal a floating array, the tangents
    of the same shapes and dtypes) an earlier call checked and ran: straight to its
    (specialized) code, guarded as grad's fast path is (free names, rules).  None
    where it does not apply: the checked path runs.  ``keep``: only those tangents
    are passed (the others are zero: _jvp_kept)."""
    global _LATEST
    if type(primals) not in _SEQ or type(tangents) not in _SEQ:
        return None
    n = len(primals)
    args = (*primals, *(tangents if keep is None else (tangents[i] for i in keep)))
    for a in args:
        if type(a) is not np.ndarray or a.dtype.kind not in "fc":
            return None
    try:
        per_fn = JVPS.get(fun)
    except TypeError:  # (unhashable)
        return None
    t = per_fn.get(has_aux) if per_fn else None
    if t is None or not t._by_signature or t._spec_error is not None or len(tangents) != n:
        return None
    hit = t._by_signature.get((n if keep is None else (n, keep), call_signature(args)))
    if hit is None or hit.pending or not hit.valid():
        return None
    if t.fn is fun:  # (JVPS's key: the function transformed, fun itself)
        _LATEST = (fun, has_aux, t)
        if hit.text is not None:  # (specialized: the code later calls run)
            key = flat_key(args) if keep is None else (_KEPT, keep, flat_key(primals))
            t.hot[key] = _plan(t, hit, fun, args, n, has_aux, keep)  # type: ignore[index]
            t.last, t.last_hot = None, _no_hot  # (it may hold the plan this one replaces)
    if hit.free_names:
        read_free_names(hit.fn)
    try:
        result = hit.fn(*args)
    except (ValueError, IndexError, TypeError) as err:
        reraise_located(err, t.ir, t.fn.__name__)
    return _finish(t, hit, fun, result, args, n, has_aux)


def _jvp_code(fun: Callable, n: int) -> Callable:
    """The emitted JVP of ``fun`` called with ``n`` array primals and their tangents:
    what the frontend inlines for ``s2s.jvp(fun, (x, ...), (v, ...))`` in user code."""
    t = _jvp_transform(fun, False)
    t._refresh()
    _, emitted = t._generate((LEAF,) * len(t.ir.params), tuple(range(n)), (n, False),
                             nargs=n)
    return emitted


# The frontend recognises s2s.jvp by these attributes (it does not import the api).
jvp.__s2s_transform__ = "jvp"  # type: ignore[attr-defined]
jvp.__s2s_code__ = _jvp_code  # type: ignore[attr-defined]
