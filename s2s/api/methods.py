"""grad's objects and options beyond the function itself: bound methods, ``allow_int``,
``holomorphic`` (passed on to the transform of the function).

``s2s.grad(model.loss)`` transforms ``Model.loss`` and passes the object first at each
call, as the dict of its attributes (or its plain form, for a registered pytree): the
method's ``self.W`` reads the object's current ``W``, a constant of the call, as JAX
closes over it.  ``allow_int=True`` gives integer and boolean arguments ``float0``
zeros, as JAX does, by differentiating only the floating ones.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..frontend.self_methods import check_self_methods, for_class
from . import trees

# JAX's float0: the tangent/cotangent dtype of integer and boolean inputs.
float0 = np.dtype([("float0", np.void, 0)])


def shifted(argnums: int | Sequence[int]) -> int | tuple[int, ...]:
    """``argnums`` of a method's arguments as positions of its function's (``self``
    first)."""
    if isinstance(argnums, int):
        return argnums + 1 if argnums >= 0 else argnums
    return tuple(a + 1 if a >= 0 else a for a in argnums)


class _Wrapper:
    """Forwards what it does not define (``.source``, ``.ir``, ...) to ``inner``."""

    inner: Any

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


class Bound(_Wrapper):
    """A transform of a method bound to an object: the method's function, called with
    the object's attributes as its first argument (never differentiated), made per
    class of the object (``for_class``: its own methods are what ``self.other(...)``
    calls, as in Python; an object whose class changes between calls gets its new
    class's).  ``make(function)`` makes the transform; ``per_nargs(function, n)`` for
    a call's number of arguments (vmap's ``in_axes=0`` is ``(None, 0, ..., 0)`` once
    ``self`` is an argument)."""

    def __init__(self, obj: Any, func: Any, make: Callable[[Any], Any] | None = None,
                 per_nargs: Callable[[Any, int], Any] | None = None) -> None:
        self.obj, self.func, self._make, self._per_nargs = obj, func, make, per_nargs
        self._made: dict[tuple[type, int], Any] = {}
        self.inner = self._for(type(obj), None) if make is not None else None
        self.__name__ = getattr(self.inner, "__name__", getattr(func, "__name__", "method"))

    def _for(self, cls: type, nargs: int | None) -> Any:
        key = (cls, -1 if self._per_nargs is None else nargs)
        if key not in self._made:
            func = for_class(self.func, cls)
            check_self_methods(func, self.obj)  # (one it cannot call as Python would)
            self._made[key] = self._make(func) if self._per_nargs is None else \
                self._per_nargs(func, nargs)
        return self._made[key]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.inner = self._for(type(self.obj), len(args))
        return self.inner(trees.attributes(self.obj), *args, **kwargs)

    def __repr__(self) -> str:
        mode = getattr(self.inner, "mode", "transform")
        return f"<s2s {mode} of a method bound to a {type(self.obj).__name__}>"


def bound_method(fun: Any, make: Callable[[Callable, Any], Any],
                 per_nargs: Callable[[Callable, int], Any] | None = None) -> Any:
    """For a bound method ``fun``, the transform ``make(function, shifted argnums)`` of
    its function (or ``per_nargs(function, nargs)``, made at each call's count), called
    with the object's attributes first; None for anything else."""
    parts = trees.unbound(fun)
    if parts is None:
        return None
    func, obj = parts
    if per_nargs is not None:
        return Bound(obj, func, per_nargs=per_nargs)
    return Bound(obj, func, make=lambda f: make(f, shifted))


def rebound(fun: Any, outer: Callable[[Any], Any]) -> Any:
    """``outer`` (``s2s.jit``) of a transform of a bound method (``grad(model.loss)``):
    the outer transform of the method's function's transform, called with the
    object's attributes first, as ``Bound`` calls it; None for any other ``fun``."""
    if isinstance(fun, Bound) and fun._make is not None:
        return _Rebound(fun.obj, fun.func, make=lambda f: outer(fun._make(f)))
    return None


class _Rebound(Bound):
    """``rebound``'s: the object's attributes passed as plain dicts (the JAX backend
    traces dicts; ``trees.Fields`` is no pytree of JAX's)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.inner = self._for(type(self.obj), len(args))
        return self.inner(trees.plain_dicts(trees.attributes(self.obj)), *args, **kwargs)


def _inexact(tree: Any) -> bool | None:
    """True (every leaf floating), False (every leaf integer or boolean), None: mixed."""
    kinds = {bool(np.issubdtype(np.result_type(x), np.inexact))
             for x in trees._leaves(trees.plain(tree, ())) if x is not None}
    return None if len(kinds) > 1 else kinds != {False}  # (no leaves: nothing to refuse)


class AllowInt(_Wrapper):
    """grad(..., allow_int=True): ``float0`` zeros for integer and boolean arguments
    (JAX's), the floating ones differentiated by a transform of just those."""

    def __init__(self, make: Callable[[Any], Any], argnums: int | Sequence[int]) -> None:
        self.make, self.argnums = make, argnums
        self.inner = make(argnums)
        self.__name__ = getattr(self.inner, "__name__", "grad")
        self._by_nums: dict[tuple[int, ...], Any] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        many = not isinstance(self.argnums, int)
        nums = tuple(self.argnums) if many else (self.argnums,)
        nums = tuple(a + len(args) if a < 0 and a >= -len(args) else a for a in nums)
        if any(a >= len(args) or a < 0 for a in nums):
            return self.inner(*args, **kwargs)  # (its error, as JAX words it)
        kinds = {i: _inexact(args[i]) for i in nums}
        if all(kinds.values()):
            return self.inner(*args, **kwargs)
        mixed = [i for i, k in kinds.items() if k is None]
        if mixed:
            raise TypeError(
                f"grad(..., allow_int=True): argument {mixed[0]} mixes integer and "
                "floating leaves, which s2s does not differentiate together. Instead: "
                "pass the integer leaves as another argument."
            )
        floats = tuple(i for i in nums if kinds[i])
        zeros = {i: _float0_like(args[i]) for i in nums if not kinds[i]}
        if floats:
            if floats not in self._by_nums:
                self._by_nums[floats] = self.make(floats)
            result = self._by_nums[floats](*args, **kwargs)
        else:
            result = self._without_gradient(args, kwargs)
        mode, aux = self.inner.mode, self.inner.has_aux
        value, grads = (None, result) if mode == "grad" else result
        grads, extra = (grads[0], grads[1:]) if mode == "grad" and aux else (grads, ())
        it = iter(grads)
        merged = tuple(next(it) if i in floats else zeros[i] for i in nums)
        merged = merged if many else merged[0]
        if mode == "grad":
            return (merged, *extra) if aux else merged
        return value, merged

    def _without_gradient(self, args: tuple, kwargs: dict) -> Any:
        """No floating argument: the function's value (and aux), no gradient to run."""
        out = self.inner.fn(*args, **kwargs)
        if self.inner.mode == "grad":
            return ((), out[1]) if self.inner.has_aux else ()
        return out, ()


def _float0_like(tree: Any) -> Any:
    plain = trees.plain(tree, ())
    zeros = trees._map_leaves(lambda x: np.zeros(np.shape(x), float0), plain)
    return trees.unplain(tree, zeros)


class IntJacobian(_Wrapper):
    """jacrev(..., allow_int=True): the Jacobian block of an integer or boolean
    argument is zeros of the output's shape then the argument's, in the argument's
    dtype, as JAX's (its float0 cotangents cast back); the floating arguments go
    through a Jacobian of just those."""

    def __init__(self, make: Callable[[Any], Any], fun: Callable,
                 argnums: int | Sequence[int], has_aux: bool) -> None:
        self.make, self.fun, self.argnums, self.has_aux = make, fun, argnums, has_aux
        self.inner = make(argnums)
        self.__name__ = getattr(self.inner, "__name__", "jacrev")
        self._by_nums: dict[tuple[int, ...], Any] = {}

    def __call__(self, *args: Any) -> Any:
        many = not isinstance(self.argnums, int)
        nums = tuple(self.argnums) if many else (self.argnums,)
        nums = tuple(a + len(args) if -len(args) <= a < 0 else a for a in nums)
        if any(a >= len(args) or a < 0 for a in nums):
            return self.inner(*args)  # (its error, as JAX words it)
        kinds = {i: _inexact(args[i]) for i in nums}
        if all(kinds.values()):
            return self.inner(*args)
        mixed = [i for i, k in kinds.items() if k is None]
        if mixed:
            raise TypeError(
                f"jacrev(..., allow_int=True): argument {mixed[0]} mixes integer and "
                "floating leaves, which s2s does not differentiate together. Instead: "
                "pass the integer leaves as another argument.")
        floats = tuple(i for i in nums if kinds[i])
        out = self.fun(*trees._copies(args))
        out, aux = out if self.has_aux else (out, None)
        outs = _out_leaves(out, out)
        per_float: list[list[Any]] = [[] for _ in outs]
        if floats:
            if floats not in self._by_nums:
                self._by_nums[floats] = self.make(floats)
            jac = self._by_nums[floats](*args)
            jac = jac[0] if self.has_aux else jac
            per_float = [list(b) for b in _out_leaves(out, jac)]
        blocks = []
        for o, found in zip(outs, per_float):
            it = iter(found)
            block = tuple(next(it) if i in floats else _int_zeros(args[i], np.shape(o))
                          for i in nums)
            blocks.append(block if many else block[0])
        jac = _out_rebuild(out, iter(blocks))
        return (jac, aux) if self.has_aux else jac


def _int_zeros(tree: Any, out_shape: tuple) -> Any:
    return trees._map_leaves(
        lambda x: np.zeros(out_shape + np.shape(x), np.result_type(x)), tree)


def _out_leaves(out: Any, tree: Any) -> list[Any]:
    """The parts of ``tree`` at the leaves of the output ``out`` (a Jacobian's blocks)."""
    if isinstance(out, (tuple, list)):
        return [x for o, t in zip(out, tree) for x in _out_leaves(o, t)]
    if isinstance(out, dict):
        return [x for k in out for x in _out_leaves(out[k], tree[k])]
    return [tree]


def _out_rebuild(out: Any, blocks: Any) -> Any:
    if isinstance(out, (tuple, list)):
        items = [_out_rebuild(o, blocks) for o in out]
        return type(out)(*items) if trees._is_namedtuple(out) else type(out)(items)
    if isinstance(out, dict):
        return {k: _out_rebuild(v, blocks) for k, v in out.items()}
    return next(blocks)
