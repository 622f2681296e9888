"""JAX's dtypes for derivatives taken through a gradient.

JAX gives a gradient (and a reverse-mode Jacobian) the dtype of its input: a float32
argument meeting a float64 module constant computes in float64, and the gradient comes
back float32.  s2s's ``grad`` casts where it returns, in the API, outside the code it
emits; a transform of that code (``jvp``/``vmap``/``jacfwd`` of a gradient, the Hessian)
and ``jacrev``, which runs the emitted VJP itself, returned the float64 they computed.
These helpers cast such results down to their inputs' dtype, where every
differentiated input has one floating dtype narrower than float64 (float32, float16,
complex64) and the result is wider; anything else is left as it is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .arguments import _leaves


def input_dtype(args: tuple, argnums: Any) -> np.dtype | None:
    """The one narrow floating dtype of the differentiated inputs, or None."""
    # (called on every call of a vmapped or jvp'd gradient: a plain array's dtype is
    # read directly, np.result_type costs a microsecond a leaf)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    found = None
    for i in nums:
        if not -len(args) <= i < len(args):
            continue
        arg = args[i]
        for leaf in ((arg,) if type(arg) is np.ndarray else _leaves(arg)):
            if type(leaf) is np.ndarray:
                dtype = leaf.dtype
            elif hasattr(leaf, "dtype"):  # (a JAX array or tracer: its dtype as is)
                dtype = np.dtype(leaf.dtype)
            else:
                continue
            if dtype.kind not in "fc":
                continue
            if found is None:
                found = dtype
            elif dtype != found:
                return None  # two floating dtypes: none is the inputs' one
    if found is None:
        return None
    return found if found.itemsize < (16 if found.kind == "c" else 8) else None


def cast_down(tree: Any, dtype: np.dtype) -> Any:
    """``tree`` with each wider leaf of ``dtype``'s kind cast to ``dtype`` (NumPy
    arrays, and JAX arrays and tracers on the JAX backend)."""
    if isinstance(tree, (np.ndarray, np.generic)) or (
            hasattr(tree, "dtype") and hasattr(tree, "astype")):
        found = np.dtype(tree.dtype)
        if found.kind == dtype.kind and found.itemsize > dtype.itemsize:
            return tree.astype(dtype)
        return tree
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):  # a NamedTuple
        return type(tree)(*(cast_down(t, dtype) for t in tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(cast_down(t, dtype) for t in tree)
    if isinstance(tree, dict):
        return type(tree)((k, cast_down(v, dtype)) for k, v in tree.items())
    return tree


def _gradient_part(fn: Any) -> tuple[Any, int | None] | None:
    """``(argnums, index)`` where ``fn`` returns gradients: the whole result (index
    None), or its item ``index`` (value_and_grad's, has_aux's); None otherwise."""
    mode = getattr(fn, "mode", None) or getattr(fn, "suffix", None)
    if getattr(fn, "display_kind", None) == "hessian":
        mode = "hessian"
    if mode in ("grad", "jacrev", "hessian"):
        return fn.argnums, (0 if getattr(fn, "has_aux", False) else None)
    if mode == "value_and_grad":
        return fn.argnums, 1
    return None


def _at(result: Any, index: int | None, dtype: np.dtype) -> Any:
    if index is None:
        return cast_down(result, dtype)
    if not isinstance(result, tuple) or len(result) <= index:
        return result
    return result[:index] + (cast_down(result[index], dtype),) + result[index + 1:]


def through(fn: Any, args: tuple, result: Any) -> Any:
    """``result`` of ``fn`` (a jacrev), or of a transform of ``fn`` whose results have
    ``fn``'s structure (vmap's, jvp's, jacfwd's), with the gradients in its inputs'
    dtype; anything else as it is."""
    down = target(fn, args)
    return result if down is None else _at(result, down[0], down[1])


def target(fn: Any, args: tuple) -> tuple[int | None, np.dtype] | None:
    """``(index, dtype)``: where ``through`` casts the results of ``fn``'s transforms
    called with ``args`` and to what, or None where it leaves them as they are."""
    part = _gradient_part(fn)
    if part is None:
        return None
    dtype = input_dtype(args, part[0])
    return None if dtype is None else (part[1], dtype)


def cast_at(down: tuple[int | None, np.dtype] | None, result: Any) -> Any:
    """``result`` cast as ``target`` said (``through`` in two steps)."""
    return result if down is None else _at(result, down[0], down[1])
