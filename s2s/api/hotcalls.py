"""The steady-state call of a ``grad``-like transform (``Transformed``'s mixin).

A call whose signature has specialized code (``signatures.FastEntry``) skips the
argument checks the signature implies; this module makes that call cheap where every
argument is a plain array.  The entry's *plan* (the code, its compiled free-names
check, the rules' generation, what its results need) is kept under the arrays' shapes
and dtypes in one flat tuple (``signatures.flat_key``: cheaper to hash than
``call_signature``'s nested pairs), so such a call costs a key, a dictionary lookup,
the entry's guards and the code, in two frames (the transform's ``__call__`` and
:meth:`HotCalls._plan_call`); ``s2s.jit(backend="numpy")`` runs the same method with
its token.  Every check the checked fast path (``_run_entry``) makes is made: the
guards (free names holding the same objects, the same rules), and a gradient is
returned as it is only where it is a fresh, writeable array of its input's dtype and
shape (else ``_entry_result`` casts and copies it as a first call would)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..primitives.registry import _GENERATION
from .arguments import _foreign, _shares
from .hotcode import MISS, SCALAR_RESULTS, hot_function, no_hot
from .located import reraise_located
from .signatures import FastEntry, flat_key, read_free_names

__all__ = ["HotCalls", "MISS", "jit_call"]

# the types of a 0-d gradient the fast path returns as a new 0-d array
_SCALAR_RESULTS = SCALAR_RESULTS
_FLOAT64 = np.dtype(np.float64)


class HotCalls:
    """``_plans``: flat key -> ``(entry, code, free-names check or None, whether the
    code reads free names, the rules' generation, the one differentiated argument's
    position or None, whether the code returns fresh arrays, its generated hot path
    or None)``.  ``_hotfn``: the generated hot path (api/hotcode.py) of the plan (or
    tree plan) the latest call found by its key, which ``__call__`` tries first."""

    _plans: dict[tuple, tuple]
    _spec_error: Exception | None
    _hotfn = staticmethod(no_hot)

    def _plan_call(self, args: tuple, token: object = None, keep: dict | None = None) -> Any:
        """The result of the code planned for the arguments' shapes and dtypes, or
        ``MISS``.  ``token``: an s2s.jit's, which must have run the entry before;
        ``keep``: that jit's copies of the plans it may run (``jit_call``)."""
        key = []
        for a in args:  # (flat_key inline: a frame less)
            if type(a) is not np.ndarray:
                return MISS
            key.append(a.shape)
            key.append(a.dtype)
        plan_key = tuple(key)
        plan = self._plans.get(plan_key)
        if plan is None or plan[4] != _GENERATION[0] or self._spec_error is not None or (
                plan[2] is not None and not plan[2]()):
            return MISS
        hit = plan[0]
        if token is not None:
            if token not in hit.jits:
                return MISS
            if keep is not None:
                keep[plan_key] = plan
        elif plan[7] is not None:  # (the next call with these shapes: its hot path)
            self._hotfn = plan[7]
        fn = plan[1]
        if plan[3]:
            read_free_names(fn)
        result = fn(*args)
        i = plan[5]
        if i is not None:  # grad of one array: the result as it is, where it may be
            a = args[i]
            tr = type(result)
            if tr is np.ndarray:
                if plan[6] and result.dtype is a.dtype and result.shape == a.shape and \
                        result.flags.writeable:
                    return result
                if result.dtype.kind == "f" == a.dtype.kind and result.shape == a.shape \
                        and result.dtype is not a.dtype:
                    return result.astype(a.dtype)  # (_cast_like's cast: a new array)
            elif tr in _SCALAR_RESULTS and a.shape == ():
                return np.asarray(result, dtype=a.dtype)  # (a new 0-d array)
        return self._outputs(self._entry_result(hit, args, result))  # type: ignore[attr-defined]

    def _run_entry(self, hit: FastEntry, args: tuple) -> Any:
        """The code cached for the arguments' signature, its result cast and copied as
        a first call's is (skipping the argument checks the signature implies); a
        specialized entry of plain arrays is planned for :meth:`_plan_call`."""
        if hit.free_names:
            read_free_names(hit.fn)
        result = hit.fn(*args)
        if hit.text is not None:
            key = flat_key(args)
            old = self._plans.get(key) if key is not None else None
            if key is not None and (old is None or old[0] is not hit):
                # (a plan of an entry replaced since, whose guards fail: replaced too)
                self._plans[key] = self._new_plan(hit, args)
        return self._entry_result(hit, args, result)

    def _new_plan(self, hit: FastEntry, args: tuple) -> tuple:
        plan = _plan(hit)
        finish = lambda args, r: self._outputs(self._entry_result(hit, args, r))  # noqa: E731
        primal = hit.single if hit.fresh else None
        return plan + (hot_function(self, plan, args, finish, primal),)

    def _entry_result(self, hit: FastEntry, args: tuple, result: Any) -> Any:
        i = hit.single
        if i is not None:  # grad of one array: often the result as it is
            a = args[i]
            ta, tr = type(a), type(result)
            if tr is np.ndarray and ta is np.ndarray:
                if result.dtype == a.dtype and result.shape == a.shape and \
                        result.flags.writeable and (hit.fresh or not _shares(
                            result, _foreign(args, hit.fn))):
                    return result
                if result.dtype.kind == "f" == a.dtype.kind and result.shape == a.shape \
                        and result.dtype != a.dtype:
                    # a float32 input's gradient computed in float64 (a float64 constant
                    # in the code promotes, as NumPy's rules do): cast as _cast_like
                    # casts it, into a new array (so sharing nothing)
                    return result.astype(a.dtype)
            elif tr in _SCALAR_RESULTS and (ta is float or ta in _SCALAR_RESULTS or (
                    ta is np.ndarray and a.shape == ())):
                # a 0-d input's gradient, a scalar: a new 0-d array of its dtype (as
                # _postprocess makes it), sharing nothing
                return np.asarray(result, dtype=_FLOAT64 if ta is float else a.dtype)
        return self._postprocess(  # type: ignore[attr-defined]
            result, args, hit.argnums, hit.fresh, hit.fn, hit.fn)


def _plan(hit: FastEntry) -> tuple:
    check: Callable[[], bool] | None = None
    if hit.free.items:
        hit.free.same()  # (compiles the check: FreeSnapshot.same)
        check = hit.free.same
    return (hit, hit.fn, check, hit.free_names, hit.generation, hit.single, hit.fresh)


def jit_call(jitted: Any, fun: Any, slow: Callable) -> Callable:
    """``s2s.jit(backend="numpy")``'s call of a ``grad``-like transform ``fun``:
    :meth:`HotCalls._plan_call` inline, in the one frame the call makes (the jit
    wraps it in a C-level call counter: ``Jitted._counted``), so a call of plain
    arrays costs no more than ``fun``'s own (which makes two frames: ``fun.__call__``
    and ``_plan_call``); any other call, ``slow`` (uncounted here).  The plans it
    runs are the jit's own copies (``Jitted._plans_run``, ``_tree_plans_run``) of
    those of ``fun``'s
    whose entries this jit has run (so counted: ``_plan_call``'s token test, done
    once when copied); a copy is checked as ``fun``'s plan is (a stale one's guards
    fail: a plan ``fun`` dropped is replaced here by the slow path's next copy).
    A call of pytrees goes to the transform's ``_tree_call`` from this frame.  Every
    check ``_plan_call`` makes is made (tests/test_call_fast_paths.py runs both paths
    on the same calls)."""
    plans, trees, entry_result = jitted._plans_run, jitted._tree_plans_run, \
        fun._entry_result
    located = fun.ir, getattr(fun.fn, "__name__", "f")
    last = [no_hot]  # (the generated path of the latest plan of the jit's it ran)

    def call(*args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            try:
                out = last[0](args)
            except (ValueError, IndexError, TypeError) as err:
                reraise_located(err, *located)
            if out is not MISS:
                return out
            key = []
            for a in args:
                if type(a) is not np.ndarray:
                    if trees:  # pytrees (api/treecalls.py)
                        try:
                            out = fun._tree_call(args, trees)
                        except (ValueError, IndexError, TypeError) as err:
                            reraise_located(err, *located)
                        if out is not MISS:
                            return out
                    break
                key.append(a.shape)
                key.append(a.dtype)
            else:
                plan = plans.get(tuple(key))
                if plan is not None and plan[4] == _GENERATION[0] and \
                        fun._spec_error is None and (plan[2] is None or plan[2]()):
                    if plan[7] is not None:
                        last[0] = plan[7]
                    fn = plan[1]
                    if plan[3]:
                        read_free_names(fn)
                    try:
                        result = fn(*args)
                    except (ValueError, IndexError, TypeError) as err:
                        reraise_located(err, *located)
                    i = plan[5]
                    if i is not None:
                        a = args[i]
                        tr = type(result)
                        if tr is np.ndarray:
                            if plan[6] and result.dtype is a.dtype and \
                                    result.shape == a.shape and result.flags.writeable:
                                return result
                        elif tr in _SCALAR_RESULTS and a.shape == ():
                            return np.asarray(result, dtype=a.dtype)
                    return fun._outputs(entry_result(plan[0], args, result))
        jitted._calls -= 1  # (the slow path counts the call itself)
        return slow(*args, **kwargs)

    return call
