"""The emitted function a transform runs for a given call, without running it.

``s2s.grad(f)(x)`` checks its arguments (with JAX's errors), generates (or finds) the
emitted code for the call's structure, runs it and casts the result.  A backend
wants the middle step alone: :func:`emitted_for` makes the very same call with the
transform's ``_generate`` intercepted, so every argument check and the choice of
specialization stay the transform's own, and returns ``(text, fn)`` before anything
runs.  Under ``jax.jit`` the arguments are tracers: :func:`shadow` stands NumPy
arrays of the same shapes and dtypes in for them (generation reads only structure,
and the checks only dtypes).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from .transformed import Transformed

_LOCK = threading.RLock()


class _Generated(Exception):
    """Raised by the intercepted ``_generate`` to stop the call before it runs code."""

    def __init__(self, found: tuple[str, Callable]) -> None:
        super().__init__("generated")
        self.found = found


def emitted_for(t: Transformed, args: tuple, kwargs: dict) -> tuple[str, Callable]:
    """``(text, fn)``: the emitted module and function ``t(*args, **kwargs)`` runs."""
    original = type(t)._generate

    def intercept(*a: Any, **k: Any) -> Any:
        raise _Generated(original(t, *a, **k))

    with _LOCK:
        fast = getattr(t, "_fast", None)
        t._generate = intercept  # type: ignore[method-assign]
        if fast is not None:
            t._fast = {}  # vmap's shortcut would skip generation: go the long way
        try:
            t(*args, **kwargs)
        except _Generated as done:
            return done.found
        finally:
            del t._generate
            if fast is not None:
                t._fast = fast
    raise RuntimeError(f"{t!r} ran without generating code")  # pragma: no cover


def is_array_leaf(x: Any) -> bool:
    """An array-like leaf that is not a plain Python value (a NumPy or JAX array)."""
    return hasattr(x, "shape") and hasattr(x, "dtype")


def shadow(tree: Any) -> Any:
    """``tree`` with each array leaf (tracers included) replaced by NumPy zeros of its
    shape and dtype; Python values (static arguments) are kept."""
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return tuple(shadow(v) for v in tree)
    if isinstance(tree, list):
        return [shadow(v) for v in tree]
    if isinstance(tree, dict):
        return {k: shadow(v) for k, v in tree.items()}
    if is_array_leaf(tree) and not isinstance(tree, np.ndarray):
        return np.zeros(np.shape(tree), np.dtype(tree.dtype))
    return tree


def shape_key(tree: Any, dynamic: bool = True) -> Any:
    """Structure and shapes (what emitted code is specialised on), hashable.

    A ``dynamic`` argument's Python scalars count as arrays of shape ``()`` (JAX
    traces them so); a static argument counts by value.
    """
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return ("t",) + tuple(shape_key(v, dynamic) for v in tree)
    if isinstance(tree, list):
        return ("l",) + tuple(shape_key(v, dynamic) for v in tree)
    if isinstance(tree, dict):
        # sorted: jax.jit hands the traced function dicts rebuilt in sorted key order
        items = sorted(tree.items(), key=lambda kv: (type(kv[0]).__name__, repr(kv[0])))
        return ("d",) + tuple((k, shape_key(v, dynamic)) for k, v in items)
    if is_array_leaf(tree):
        return ("a", tuple(np.shape(tree)))
    if dynamic and isinstance(tree, (bool, int, float, complex)):
        return ("a", ())
    return ("v", tree)
