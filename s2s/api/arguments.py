"""The transforms' argument checks, with JAX's semantics and messages, and the fixing
up of their results: which arguments may be differentiated (``argnums``, floating
inputs, array types), jvp's tangents and a VJP function's cotangent against what they
stand for, and gradients cast to their primal's dtype and never the caller's array
(nor a view of one).  The entry points (s2s/api/transformed.py) call them."""

from __future__ import annotations

import functools
import types
from typing import Any, Callable, Sequence

import numpy as np

from ..ir.kinds import kind_of
from .methods import float0
from .overlaps import PAIRS_PER_EXTENT, Disjoint, Extents, any_overlap
from .trees import _leaves, _rebuild, _sorted_kind, _sorted_leaves


def _dtype_of(leaf: Any, argname: str) -> np.dtype:
    if isinstance(leaf, (str, bytes)) or leaf is None or not _is_arraylike(leaf):
        raise TypeError(
            f"Argument '{leaf}' of type {type(leaf)} is not a valid JAX type."
        )
    return np.result_type(leaf)


def _is_arraylike(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic, int, float, complex, bool)) or hasattr(
        x, "__array__"
    )


def check_array_types(name: str, args: Any) -> None:
    """Refuse array subclasses whose operators mean something else than the plain
    arrays the emitted code is written for: ``np.matrix`` (``*`` multiplies matrices,
    ``**`` takes matrix powers, a row stays 2-D) and masked arrays (operations skip
    the masked entries).  JAX takes neither; the derivative s2s would compute for
    them is not theirs."""
    for leaf in _leaves(args):
        if not isinstance(leaf, np.ndarray) or type(leaf) is np.ndarray or \
                isinstance(leaf, np.memmap):
            continue
        if isinstance(leaf, np.ma.MaskedArray):
            raise TypeError(
                f"{name} of a masked array (numpy.ma.MaskedArray) is not supported: its "
                "operations skip the masked entries, the emitted NumPy code's would not. "
                "Instead: pass np.ma.getdata(x) and the mask np.ma.getmaskarray(x) as "
                "arrays, and write the masking in the function (np.where(mask, ...), "
                "x[~mask])."
            )
        if isinstance(leaf, np.matrix):
            raise TypeError(
                f"{name} of a np.matrix is not supported: for it * and ** are matrix "
                "products and powers, where the emitted code is written for arrays. "
                "Instead: pass np.asarray(m) and write @ for matrix products."
            )
        raise TypeError(
            f"{name} of an array of type {type(leaf).__qualname__} (a subclass of "
            "np.ndarray) is not supported: its operators may not mean what a plain "
            "array's do. Instead: pass np.asarray(x)."
        )


def _check_float_inputs(name: str, args: Sequence[Any], argnums: tuple[int, ...],
                        holomorphic: bool = False, real_only: bool = False) -> None:
    """JAX's dtype rules for the differentiated arguments: floating or complex ones
    (complex only with ``holomorphic=True`` where ``real_only``: jacfwd, hessian),
    complex ones only under ``holomorphic=True``."""
    check_array_types(name, args)
    for i in argnums:
        for leaf in _leaves(args[i]):
            dtype = _dtype_of(leaf, f"{i}")
            if dtype == np.dtype(object):
                raise TypeError(
                    f"Argument '{leaf}' of type {type(leaf)} is not a valid JAX type. "
                    "Instead: pass a NumPy array of a numeric dtype "
                    "(np.asarray(x, dtype=float))."
                )
            complex_ = np.issubdtype(dtype, np.complexfloating)
            if holomorphic and not complex_:
                raise TypeError(
                    f"{name} with holomorphic=True requires inputs with complex dtype, "
                    f"but got {dtype.name}."
                )
            if real_only and not holomorphic and not np.issubdtype(dtype, np.floating):
                raise TypeError(
                    f"{name} requires real-valued inputs (input dtype that is a sub-dtype "
                    f"of np.floating), but got {dtype.name}. For holomorphic "
                    "differentiation, pass holomorphic=True. For differentiation of "
                    "non-holomorphic functions involving complex inputs or integer "
                    "inputs, use s2s.jvp directly."
                )
            if not np.issubdtype(dtype, np.inexact):
                raise TypeError(
                    f"{name} requires real- or complex-valued inputs (input dtype that "
                    f"is a sub-dtype of np.inexact), but got {dtype.name}. If you want "
                    "to use Boolean- or integer-valued inputs, use vjp or set allow_int "
                    "to True."
                )


def check_outputs(name: str, out: Any, holomorphic: bool) -> None:
    """JAX's dtype rule for a Jacobian's outputs: real ones (a complex output needs
    ``holomorphic=True``), and complex ones under ``holomorphic=True``."""
    for leaf in _leaves(out):
        if leaf is None or not _is_arraylike(leaf):
            continue
        dtype = np.result_type(leaf)
        complex_ = np.issubdtype(dtype, np.complexfloating)
        if holomorphic and not complex_:
            raise TypeError(
                f"{name} with holomorphic=True requires outputs with complex dtype, but "
                f"got {dtype.name}."
            )
        if complex_ and not holomorphic:
            raise TypeError(
                f"{name} requires real-valued outputs (output dtype that is a sub-dtype "
                f"of np.floating), but got {dtype.name}. For holomorphic "
                "differentiation, pass holomorphic=True. For differentiation of "
                "non-holomorphic functions involving complex outputs, use s2s.vjp "
                "directly."
            )


def _check_argnums(argnums: tuple[int, ...], as_tuple: bool, nargs: int) -> tuple[int, ...]:
    """Resolve negative argnums against the call, with JAX's errors."""
    for a in argnums:
        if a < -nargs and a < 0:
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have "
                "value greater than or equal to -len(args) and less than len(args), "
                f"but got value {a} for len(args) == {nargs}."
            )
    resolved = tuple(a % nargs if a < 0 else a for a in argnums)
    if any(a >= nargs for a in resolved):
        spec = argnums if as_tuple else argnums[0]
        raise TypeError(
            f"differentiating with respect to argnums={spec} requires at least "
            f"{max(resolved) + 1} positional arguments to be passed by the caller, "
            f"but got only {nargs} positional arguments."
        )
    return resolved


def _normalize_argnums(argnums: int | Sequence[int]) -> tuple[tuple[int, ...], bool]:
    if isinstance(argnums, int):
        return (argnums,), False
    nums = tuple(argnums)
    if not all(isinstance(a, int) for a in nums):
        raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
    return nums, True


def zero_d(tree: Any) -> Any:
    """``tree`` with each NumPy scalar leaf (``np.float64(2.0)``: what NumPy code gives
    for a 0-d value) a 0-d array, as JAX returns ``Array(2.0)``; tuples, lists and
    dicts rebuilt only where a leaf changed, anything else as it is."""
    t = type(tree)
    if t is np.ndarray:
        return tree
    if isinstance(tree, np.generic):
        return np.asarray(tree)
    if t is tuple or t is list:
        new = [zero_d(x) for x in tree]
        return tree if all(a is b for a, b in zip(new, tree)) else t(new)
    if t is dict:
        new_d = {k: zero_d(v) for k, v in tree.items()}
        return tree if all(new_d[k] is v for k, v in tree.items()) else new_d
    return tree


def _cast_like(grad_leaf: Any, primal_leaf: Any) -> np.ndarray:
    dtype = np.result_type(primal_leaf)
    if np.iscomplexobj(grad_leaf) and not np.issubdtype(dtype, np.complexfloating):
        grad_leaf = np.real(grad_leaf)  # a real primal's cotangent is real (JAX's)
    g = np.asarray(grad_leaf, dtype=dtype)
    if g.shape != np.shape(primal_leaf):
        g = np.broadcast_to(g, np.shape(primal_leaf))
    if not g.flags.writeable:
        g = g.copy()
    return g


def _as_is(g: Any, primal: Any, foreign: list[np.ndarray], fresh: bool = False) -> bool:
    """Is ``g`` already what casting it like ``primal`` would give (same structure,
    writeable arrays of the primal's dtypes and shapes), none of them sharing memory
    with the caller's arrays or the function's module arrays (``foreign``)?
    ``fresh``: the code made every array it returns (so they are writeable and share
    nothing)."""
    t = type(g)
    if t is np.ndarray:
        return type(primal) is np.ndarray and g.dtype == primal.dtype and \
            g.shape == primal.shape and (fresh or (
                g.flags.writeable and not _shares(g, foreign)))
    if t is dict:
        if type(primal) is not dict or list(g) != list(primal):
            return False
        for k, v in g.items():
            p = primal[k]
            if type(v) is np.ndarray and type(p) is np.ndarray and fresh:
                if v.dtype != p.dtype or v.shape != p.shape:
                    return False
            elif not _as_is(v, p, foreign, fresh):
                return False
        return True
    if t is tuple or t is list:
        return type(primal) is t and len(g) == len(primal) and \
            all(_as_is(a, b, foreign, fresh) for a, b in zip(g, primal))
    return False


class _Arrays(list):
    """The foreign arrays of a call (``_foreign``, ``_reachable``), with what ``_shares``
    has spent on them pairwise; past what indexing their extents costs, an index of
    them answers instead (api/overlaps.py: linear in their number, the same answers)."""

    __slots__ = ("spent", "indexed", "ids", "_views", "_every")

    def __init__(self, arrays: Any = ()) -> None:
        super().__init__(arrays)
        self.spent, self.indexed, self.ids = 0, False, frozenset()
        self._views: Extents | None = None
        self._every: Extents | None = None

    def views(self) -> Extents:
        """The extents of those that do not own their memory."""
        if self._views is None:
            self._views = Extents([a for a in self if a.base is not None])
        return self._views

    def every(self) -> Extents:
        if self._every is None:
            self._every = Extents(self)
        return self._every


class _Unbounded(_Arrays):
    """The foreign arrays of a call whose reachable objects were too many to walk:
    every array of the result is copied (``_shares`` says yes to anything)."""


def _shares(g: np.ndarray, foreign: list[np.ndarray]) -> bool:
    """May ``g`` share memory with one of the ``foreign`` arrays?  An array that owns
    its buffer shares it only with itself and with views of it."""
    if type(foreign) is _Unbounded:
        return True
    if type(foreign) is _Arrays:
        if foreign.indexed:
            if g.base is None:
                return id(g) in foreign.ids or foreign.views().overlaps(g)
            return foreign.every().overlaps(g)
        foreign.spent += len(foreign)
        if foreign.spent > PAIRS_PER_EXTENT * len(foreign) > 2 * PAIRS_PER_EXTENT ** 2:
            # (the next call indexes; a few arrays are tested pairwise, as before)
            foreign.indexed, foreign.ids = True, frozenset(map(id, foreign))
    if g.base is None:
        return any(a is g or (a.base is not None and np.may_share_memory(a, g))
                   for a in foreign)
    return any(np.may_share_memory(g, a) for a in foreign)


def _foreign(args: tuple, fn: Callable | None) -> list[np.ndarray]:
    """The arrays a gradient must not share memory with: the arguments' and those
    the emitted function ``fn`` can reach from the user's module or closure: held by a
    free name's value (an object's attribute, a NamedTuple's field, a function's
    default or closure cell, a global a function reads), or by a name the emitted
    module binds itself (``gdef_w = W0``, a callee's default passed on)."""
    out = _Arrays([a for a in _leaves(args) if isinstance(a, np.ndarray)])
    free = getattr(fn, "__s2s_free__", ())
    held = _held_names(fn) if fn is not None else ()
    if not free and not held:
        return out
    walk = _Reach(out)
    for _, var in free:
        try:
            value = var.read()
        except (KeyError, ValueError):
            continue
        walk.add(value, 0)
    names = fn.__globals__  # type: ignore[union-attr]
    for name in held:
        if name in names:
            walk.add(names[name], 0)
    return _Unbounded(out) if walk.over else out


def _reachable(values: Any) -> list[np.ndarray]:
    """The arrays ``values`` (an iterable of objects) can reach, as ``_foreign``
    walks them (an ``_Unbounded`` list where there were too many objects to walk)."""
    walk = _Reach(_Arrays())
    for value in values:
        walk.add(value, 0)
    return _Unbounded(walk.out) if walk.over else walk.out


_SKIPPED_MODULES = ("numpy", "scipy", "jax", "jaxlib", "s2s", "builtins", "math", "functools",
                    "operator", "itertools", "typing", "collections")


def _library(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0] in _SKIPPED_MODULES


def _held_names(fn: Callable) -> tuple[str, ...]:
    """The names the emitted module of ``fn`` binds itself to values that may hold an
    array (not its functions, NumPy or s2s's helpers), read once per function."""
    names = getattr(fn, "__s2s_held__", None)
    if names is None:
        code = getattr(fn, "__code__", None)
        names = ()
        if code is not None and code.co_filename.startswith("<s2s:"):
            free = {n for n, _ in getattr(fn, "__s2s_free__", ())}
            names = tuple(
                n for n, v in fn.__globals__.items()  # type: ignore[attr-defined]
                if n not in free and not n.startswith("__") and not isinstance(v, (
                    types.ModuleType, type)) and not _library(v)
                and not (isinstance(v, types.FunctionType)
                         and v.__code__.co_filename == code.co_filename))
        try:
            fn.__s2s_held__ = names  # type: ignore[attr-defined]
        except AttributeError:
            pass
    return names


class _Reach:
    """Collects the arrays a value can reach: containers' items, objects' attributes,
    functions' defaults, closure cells and the module names their code reads.  Past
    ``LIMIT`` objects it stops and says so (``over``): the caller then copies all."""

    LIMIT = 1000

    def __init__(self, out: list[np.ndarray]) -> None:
        self.out, self.seen, self.over = out, set(), False

    def add(self, value: Any, depth: int) -> None:
        t = type(value)
        if t is np.ndarray:
            self.out.append(value)
            return
        if t in _SCALARS or value is None or self.over:
            return
        if id(value) in self.seen:
            return
        if len(self.seen) >= self.LIMIT or depth > 32:
            self.over = True
            return
        self.seen.add(id(value))
        if isinstance(value, np.ndarray):
            self.out.append(value)
        elif isinstance(value, (tuple, list, set, frozenset)):
            for v in value:
                self.add(v, depth + 1)
        elif isinstance(value, dict):
            for v in value.values():
                self.add(v, depth + 1)
        elif isinstance(value, (np.generic, types.ModuleType, str, bytes)):
            return
        elif isinstance(value, types.FunctionType):
            if _library(value):
                return
            for v in (value.__defaults__ or ()):
                self.add(v, depth + 1)
            for v in (value.__kwdefaults__ or {}).values():
                self.add(v, depth + 1)
            for cell in value.__closure__ or ():
                try:
                    self.add(cell.cell_contents, depth + 1)
                except ValueError:  # an empty cell
                    pass
            names = value.__globals__
            for name in _code_names(value.__code__):
                if name in names:
                    self.add(names[name], depth + 1)
        elif isinstance(value, functools.partial):
            self.add(value.func, depth + 1)
            self.add(value.args, depth + 1)
            self.add(value.keywords, depth + 1)
        elif isinstance(value, types.MethodType):
            self.add(value.__self__, depth + 1)
            self.add(value.__func__, depth + 1)
        elif isinstance(value, type):
            if not _library(value):
                for v in vars(value).values():
                    self.add(v, depth + 1)
        elif not _library(t):
            attrs = getattr(value, "__dict__", None)
            if attrs is not None:
                for v in attrs.values():
                    self.add(v, depth + 1)
            for slot in getattr(t, "__slots__", ()):
                if isinstance(slot, str) and hasattr(value, slot):
                    self.add(getattr(value, slot), depth + 1)
            self.add(t, depth + 1)  # (its class attributes)


_SCALARS = frozenset({int, float, complex, bool, str, bytes})


def _code_names(code: types.CodeType) -> list[str]:
    """The global names ``code`` and the functions and comprehensions nested in it read."""
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _code_names(const)
    return names


def _fix_one(g: Any, primal: Any, args: tuple, fresh: bool,
             fn: Callable | None = None) -> Any:
    """One gradient cast like its primal: an array already of the primal's dtype and
    shape, sharing no memory with the caller's arrays or the module arrays ``fn``
    reads, is the gradient as it is (so is a pytree of such arrays)."""
    t = type(g)
    if t is np.ndarray:
        if not fresh and _shares(g, _foreign(args, fn)):  # (fresh: made by the code)
            g = g.copy()
        elif type(primal) is np.ndarray and g.dtype == primal.dtype and \
                g.shape == primal.shape and g.flags.writeable:
            return g
    elif t is dict or t is tuple or t is list:
        foreign = [] if fresh else _foreign(args, fn)  # (made by the code: no look)
        if _as_is(g, primal, foreign, fresh):
            return g
        if foreign:
            g = _copy_shared(g, foreign)
    return _cast_tree(g, primal)


def _own_arrays(tree: Any) -> Any:
    """The gradient pytree with each array leaf its own: a leaf that is, or may share
    memory with, an earlier leaf is copied (``f(a, b) = sum(sin(a + b))`` computes one
    cotangent for both; a caller writing into one gradient must not change another)."""
    leaves = [x for x in _leaves(tree) if type(x) is np.ndarray]
    if len(leaves) < 2 or not any_overlap(leaves):
        return tree
    seen = Disjoint()  # (the leaves kept: a copy shares with none of them)

    def own(x: Any) -> Any:
        t = type(x)
        if t is dict:
            return {k: own(v) for k, v in x.items()}
        if t is tuple or t is list:
            return t(own(v) for v in x)
        if t is np.ndarray and seen.add_unless_overlapping(x):
            x = x.copy()
        return x

    return own(tree)


def _copy_shared(tree: Any, foreign: list[np.ndarray]) -> Any:
    """The pytree with a copy of each array leaf that may share memory with one of
    the ``foreign`` arrays."""
    t = type(tree)
    if t is dict:
        return {k: _copy_shared(v, foreign) for k, v in tree.items()}
    if t is tuple or t is list:
        return t(_copy_shared(v, foreign) for v in tree)
    if isinstance(tree, np.ndarray) and _shares(tree, foreign):
        return tree.copy()
    return tree


def _cast_tree(grad: Any, primal: Any) -> Any:
    kind = kind_of(primal)
    leaves = [_cast_like(g, p) for g, p in zip(_leaves(grad), _leaves(primal))]
    return _rebuild(kind, leaves)


def _split_aux(out: Any, has_aux: bool) -> tuple[Any, Any]:
    """``(out, aux)`` of a function's result (aux None without ``has_aux``), with
    JAX's TypeError when a has_aux function returns no pair."""
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(
            "expected function with aux output to return a two-element tuple, "
            f"but got type {type(out)} with value {out!r}"
        )
    return out[0], out[1]


def _inexact_args(primals: tuple) -> tuple[int, ...]:
    """The positions of the arguments whose every leaf is floating or complex (the
    others carry no derivative and get float0)."""
    return tuple(
        i for i, p in enumerate(primals)
        if p is not None  # (None is an empty pytree, as in JAX: no derivative)
        and all(np.issubdtype(_dtype_of(leaf, str(i)), np.inexact) for leaf in _leaves(p))
    )


def _check_tangents(primals: Any, tangents: Any) -> None:
    """JAX's checks of jvp's arguments, with JAX's messages."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "primal and tangent arguments to jax.jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    pk, tk = kind_of(tuple(primals)), kind_of(tuple(tangents))
    if _sorted_kind(pk) != _sorted_kind(tk):
        raise TypeError(
            "primal and tangent arguments to jax.jvp must have the same tree "
            f"structure; primals have tree structure PyTreeDef({pk!r}) whereas tangents "
            f"have tree structure PyTreeDef({tk!r})."
        )
    for p, t in zip(_sorted_leaves(list(primals)), _sorted_leaves(list(tangents))):
        if p is None or t is None:  # an empty pytree: only None matches it, as in JAX
            if p is not t:
                raise TypeError(
                    "primal and tangent arguments to jax.jvp must have the same tree "
                    f"structure; a primal {_short(p)} has the tangent {_short(t)}, and "
                    "None (an empty pytree) matches only None.")
            continue
        pd, td = _dtype_of(p, ""), np.result_type(t)
        want = pd if np.issubdtype(pd, np.inexact) else float0
        if td != want:
            raise TypeError(
                "primal and tangent arguments to jax.jvp do not match; dtypes must be "
                "equal, or in case of int/bool primal dtype the tangent dtype must be "
                f"float0.Got primal dtype {pd.name} and so expected tangent dtype "
                f"{want.name if want is not float0 else 'float0'}, but got tangent dtype "
                f"{td.name if td != float0 else 'float0'} instead."
            )
        if np.shape(p) != np.shape(t):
            raise ValueError(
                "jvp called with different primal and tangent shapes;Got primal shape "
                f"{np.shape(p)} and tangent shape as {np.shape(t)}"
            )


def _structure(x: Any) -> str:
    """A pytree's structure as JAX's PyTreeDef writes it: ``(*, {'a': *})``."""
    if x is None:
        return "None"
    if isinstance(x, (tuple, list)) and not hasattr(x, "_fields"):
        inner = ", ".join(_structure(v) for v in x)
        if isinstance(x, list):
            return f"[{inner}]"
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_structure(v)}" for k, v in x.items()) + "}"
    return "*"


def _short(x: Any) -> str:
    return "None" if x is None else f"of shape {np.shape(x)}"


def _tangent_like(t: Any, out: Any) -> Any:
    """A tangent leaf in its output's shape and dtype (float0 for integer outputs)."""
    dtype = np.result_type(out)
    if not np.issubdtype(dtype, np.inexact):
        return np.zeros(np.shape(out), float0)
    return _cast_like(t, out)


def _check_cotangent(ct: Any, out: Any) -> None:
    if _sorted_kind(kind_of(ct)) != _sorted_kind(kind_of(out)):
        raise ValueError(
            "unexpected tree structure.\n\nThe argument to a VJP function returned by "
            "`vjp` must match the pytree structure of the differentiated function's "
            f"output, {_structure(out)}, but got {_structure(ct)} (`*` is an array or "
            "number).")
    for c, o in zip(_sorted_leaves(ct), _sorted_leaves(out)):
        cs, os_ = np.shape(c), np.shape(o)
        cd, od = np.result_type(c), np.result_type(o)
        if cs != os_ or cd != od:
            got = f"{cd.name}{list(cs)}".replace(" ", "")
            want = f"{od.name}{list(os_)}".replace(" ", "")
            raise ValueError(
                "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: "
                f"got {got}, but expected {want} because the corresponding output of "
                f"the differentiated function had JAX type {want}"
            )


def output_error(fn: Callable, has_aux: bool, args: tuple, kwargs: dict) -> TypeError:
    """JAX's message for a grad whose function returned the wrong structure, showing
    the value (``fn`` run again on ``args``, copies of the caller's)."""
    out = fn(*args, **kwargs)
    if has_aux:
        return TypeError(
            "expected function with aux output to return a two-element tuple, "
            f"but got type {type(out)} with value {out!r}"
        )
    return TypeError(
        f"Gradient only defined for scalar-output functions. Output was {out!r}."
    )
