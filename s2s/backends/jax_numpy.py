"""``np`` for code running on the JAX backend: ``jax.numpy``, with host constants
left to NumPy.

Emitted code (and s2s's runtime helpers) are NumPy programs, and NumPy programs do
two kinds of arithmetic with the same ``np``: on arrays (traced by JAX, compiled by
XLA) and on host constants that decide shapes and axes (``np.atleast_1d(axis)``,
``np.argsort(order)``, ``np.isinf(ord)``).  Under ``jax.jit`` the second kind must stay
concrete Python/NumPy values, so each function here runs ``jax.numpy``'s version when
any argument is a JAX array (a tracer included) and NumPy's when all of them are host
constants; array constructors (``zeros``, ``arange``, ``array``...) always build JAX
arrays, which the lowered in-place writes (``y = y.at[i].set(v)``) update.

    import s2s.backends.jax_numpy as np     # the first line of code run on JAX
"""

from __future__ import annotations

import builtins
import contextvars
import types
from typing import Any

import jax
import jax.numpy as _jnp
import numpy as _onp

__all__: list[str] = []

# always jax.numpy: their results are arrays that code may write into
CONSTRUCTORS = frozenset({
    "array", "asarray", "zeros", "ones", "empty", "full", "zeros_like", "ones_like",
    "empty_like", "full_like", "eye", "identity", "arange", "linspace", "copy", "tri",
})


# functions whose first parameter is a sequence of arrays, not one array
SEQUENCES_FIRST = frozenset({
    "concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack",
    "row_stack", "block", "select", "lexsort", "multi_dot", "broadcast_arrays",
    "meshgrid", "ix_", "einsum", "array", "asarray", "piecewise",
})


# of those, the ones joining arrays: an item that is a list is read as an array
JOINS = frozenset({"concatenate", "concat", "stack", "hstack", "vstack", "dstack",
                   "column_stack", "row_stack"})


def _has_jax(value: Any) -> bool:
    if isinstance(value, jax.Array):
        return True
    # (builtins.any: a lookup of `np.any` caches that name in this module's globals)
    if isinstance(value, (tuple, list)):
        return builtins.any(_has_jax(v) for v in value)
    if isinstance(value, dict):
        return builtins.any(_has_jax(v) for v in value.values())
    return False


class Dispatch:
    """One NumPy function: ``jax.numpy``'s on JAX arrays, NumPy's on host constants."""

    __slots__ = ("name", "host", "device", "always_device")

    def __init__(self, name: str, host: Any, device: Any, always_device: bool) -> None:
        self.name = name
        self.host = host
        self.device = device
        self.always_device = always_device

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.always_device or _has_jax(args) or _has_jax(kwargs):
            if args and type(args[0]) is list and self.name not in SEQUENCES_FIRST:
                # (NumPy reads a list as an array, `np.sum(items)`; jax.numpy refuses it)
                args = (_jnp.asarray(args[0]), *args[1:])
            elif args and self.name in JOINS and isinstance(args[0], (list, tuple)):
                # (`np.hstack([x, [1.0]])`: NumPy reads the item `[1.0]` as an array)
                args = ([_jnp.asarray(v) if isinstance(v, (list, tuple)) else v
                         for v in args[0]], *args[1:])
            return self.device(*args, **kwargs)
        return self.host(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # ufunc methods: np.add.reduce, .outer
        return getattr(self.device, name)

    def __repr__(self) -> str:
        return f"<s2s jax.numpy dispatch of {self.name}>"


class Namespace(types.ModuleType):
    """A NumPy namespace (``numpy``, ``numpy.linalg``, ``numpy.fft``) over JAX's."""

    def __init__(self, name: str, host: Any, device: Any) -> None:
        super().__init__(name)
        self._host = host
        self._device = device

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = resolve(name, self._host, self._device, self.__name__)
        setattr(self, name, value)  # looked up once
        return value


def _sort_kind(fn: Any) -> Any:
    """``jnp.sort``/``jnp.argsort`` taking NumPy's ``kind=`` ("stable" and "mergesort"
    are stable sorts; JAX spells it ``stable=True``)."""
    def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, **kw: Any) -> Any:
        if order is not None:
            raise TypeError("order= of sort/argsort is not supported on the JAX backend")
        if kind is not None:
            kw.setdefault("stable", kind in ("stable", "mergesort"))
        return fn(a, axis=axis, **kw)

    sort.__name__ = fn.__name__
    return sort


def _tensordot_axes(fn: Any) -> Any:
    """``jnp.tensordot`` taking NumPy's axes given as ranges (``tensordot``'s VJP)."""
    def tensordot(a: Any, b: Any, axes: Any = 2, **kw: Any) -> Any:
        if isinstance(axes, (tuple, list)):
            axes = tuple(tuple(x) if isinstance(x, range) else x for x in axes)
        return fn(a, b, axes=axes, **kw)

    return tensordot


def _like_of_sequence(fn: Any) -> Any:
    """``jnp.zeros_like`` (and kin) of a list or tuple of arrays, as NumPy takes it.
    Of None (a name a branch not taken left None, whose tangent emitted code still
    makes: NumPy gives an unused object array) it gives None; of a string (an object's
    field ``self.name = "scaled"``, whose zero cotangent emitted code still makes and
    adds) NumPy's unused string array, as on the NumPy backend."""
    def like(a: Any, *args: Any, **kw: Any) -> Any:
        if a is None:
            return None
        if isinstance(a, (str, bytes)):
            return getattr(_onp, fn.__name__)(a, *args, **kw)
        if isinstance(a, (list, tuple)):
            a = _jnp.asarray(a)
        return fn(a, *args, **kw)

    like.__name__ = getattr(fn, "__name__", "like")
    return like


def _insert_positions(fn: Any) -> Any:
    """``jnp.insert`` taking NumPy's list or tuple of positions (an array to JAX)."""
    def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Any:
        if isinstance(obj, (list, tuple)):
            obj = _onp.asarray(obj)
        return fn(arr, obj, values, axis=axis)

    return insert


# ---- one LU factorization per matrix, as JAX's own VJPs have it --------------------
#
# Reverse mode of ``np.linalg.solve(k, y)`` and ``np.linalg.slogdet(k)`` emits
# ``np.linalg.solve(np.matrix_transpose(k), ...)`` and ``np.linalg.inv(
# np.matrix_transpose(k))``: on jax.numpy, an LU factorization of ``k.T`` beside the
# forward's of ``k`` (XLA merges the forward's two factorizations of ``k``, not these).
# JAX's VJPs solve with ``k``'s factors, transposed. While a jit traces (``transposes``
# holds a dict), each ``matrix_transpose`` of a 2-D matrix is remembered by its
# result (the result kept alive, so its id is not reused), and a solve or inverse of
# such a result uses ``lu_factor(k)`` (the forward's factorization, merged by XLA) and
# ``lu_solve(..., trans=1)``.

transposes: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "s2s_jax_transposes", default=None)


def _transposed_of(a: Any) -> Any:
    """The square 2-D inexact matrix ``a`` is the remembered transpose of, or None."""
    memo = transposes.get()
    found = memo.get(id(a)) if memo else None
    return found[1] if found is not None and found[0] is a else None


def _matrix_transpose(fn: Any) -> Any:
    def matrix_transpose(x: Any, **kw: Any) -> Any:
        out = fn(x, **kw)
        memo = transposes.get()
        if memo is not None and _onp.ndim(x) == 2 and x.shape[0] == x.shape[1] and \
                _jnp.issubdtype(x.dtype, _jnp.inexact):
            memo[id(out)] = (out, x)
        return out

    return matrix_transpose


def _solve_transposed(fn: Any) -> Any:
    def solve(a: Any, b: Any) -> Any:
        k = _transposed_of(a)
        if k is None or _onp.ndim(b) not in (1, 2) or b.shape[0] != k.shape[0] or \
                _jnp.result_type(a, b) != a.dtype:
            return fn(a, b)
        import jax.scipy.linalg as sla

        return sla.lu_solve(sla.lu_factor(k), b, trans=1)

    return solve


def _inv_transposed(fn: Any) -> Any:
    def inv(a: Any) -> Any:
        k = _transposed_of(a)
        if k is None:
            return fn(a)
        import jax.scipy.linalg as sla

        # (the identity as a select, as JAX's own VJP builds it, not jnp.eye's convert of
        # a boolean matrix: XLA's CPU code for that convert is the slower, 480.7k against
        # 468.4k instructions per call of gp_nll's gradient at 40 x 40; JAX's: 467.1k)
        i = _jnp.arange(k.shape[0])
        eye = _jnp.where(i[:, None] == i, _jnp.ones((), k.dtype), _jnp.zeros((), k.dtype))
        return sla.lu_solve(sla.lu_factor(k), eye, trans=1)

    return inv


_LINALG_ADAPT = {"solve": _solve_transposed, "inv": _inv_transposed}


# jax.numpy functions whose arguments NumPy spells differently in emitted code
_ADAPT = {
    "sort": _sort_kind, "argsort": _sort_kind, "tensordot": _tensordot_axes,
    "insert": _insert_positions, "matrix_transpose": _matrix_transpose,
    "zeros_like": _like_of_sequence, "ones_like": _like_of_sequence,
    "empty_like": _like_of_sequence, "full_like": _like_of_sequence,
}


_MISSING = object()


def resolve(name: str, host: Any, device: Any, where: str) -> Any:
    if getattr(host, name, _MISSING) is None:  # np.newaxis: a constant that is None
        return None
    h = getattr(host, name, None)
    d = getattr(device, name, None)
    if d is not None and where == __name__ and name in _ADAPT:
        d = _ADAPT[name](d)
    if d is not None and where == f"{__name__}.linalg" and name in _LINALG_ADAPT:
        d = _LINALG_ADAPT[name](d)
    if h is None and d is None:
        raise AttributeError(f"module {where!r} has no attribute {name!r}")
    if d is None:
        return h  # only NumPy has it (np.ndindex, np.errstate): the host's
    if h is None:
        return d
    if isinstance(h, types.ModuleType):
        if isinstance(d, types.ModuleType):
            return Namespace(f"{where}.{name}", h, d)
        return h
    if isinstance(h, type) or not callable(h):
        # dtypes and scalar types (jnp.float64(x) works on tracers, and as a dtype),
        # constants (np.pi, np.newaxis)
        return d if isinstance(h, type) and hasattr(d, "dtype") else h
    return Dispatch(name, h, d, name in CONSTRUCTORS)


_ROOT = Namespace(__name__, _onp, _jnp)


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    value = getattr(_ROOT, name)
    globals()[name] = value  # the next lookup is a plain module attribute
    return value


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """``np.gradient`` on JAX values: ``jax.numpy.gradient`` takes no ``edge_order``;
    ``edge_order=2`` replaces its one-sided first-order edges with NumPy's second-order
    ones (uniform spacings and coordinate arrays, NumPy's formulas)."""
    if not _has_jax((f, varargs)):
        return _onp.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    first = _jnp.gradient(f, *varargs, axis=axis)
    if edge_order == 1:
        return first
    if edge_order != 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    f = _jnp.asarray(f)
    axes = tuple(range(f.ndim)) if axis is None else (
        (axis,) if isinstance(axis, int) else tuple(axis))
    axes = tuple(a % f.ndim for a in axes)
    spacings = list(varargs) if len(varargs) == len(axes) else [
        varargs[0] if varargs else 1.0] * len(axes)
    outs = list(first) if isinstance(first, (list, tuple)) else [first]
    for k, (ax, h) in enumerate(zip(axes, spacings)):
        g = _jnp.moveaxis(outs[k], ax, 0)
        y = _jnp.moveaxis(f, ax, 0)
        if y.shape[0] < 3:  # (NumPy's error)
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        if _jnp.ndim(h) == 0:
            start = (-3 * y[0] + 4 * y[1] - y[2]) / (2 * h)
            end = (3 * y[-1] - 4 * y[-2] + y[-3]) / (2 * h)
        else:
            x = _jnp.asarray(h)
            d1, d2 = x[1] - x[0], x[2] - x[1]
            start = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * y[0] + (d1 + d2) / (d1 * d2) * y[1]
                     - d1 / (d2 * (d1 + d2)) * y[2])
            d1, d2 = x[-2] - x[-3], x[-1] - x[-2]
            end = (d2 / (d1 * (d1 + d2)) * y[-3] - (d1 + d2) / (d1 * d2) * y[-2]
                   + (2 * d2 + d1) / (d2 * (d1 + d2)) * y[-1])
        g = g.at[0].set(start).at[-1].set(end)
        outs[k] = _jnp.moveaxis(g, 0, ax)
    return tuple(outs) if isinstance(first, (list, tuple)) else outs[0]
