"""``s2s.checkpoint``: mark a function so that reverse mode recomputes its loops in
segments instead of taping every iteration (the transform is in
s2s/transforms/checkpoint.py; this is the decorator users call)."""

from __future__ import annotations

import functools
import types
from typing import Any, Callable

from ..transforms.checkpoint import MARK
from .display import display_checkpointed

__all__ = ["checkpoint"]


def checkpoint(fun: Callable | None = None, *, every: int | str = "sqrt") -> Any:
    """Mark ``fun`` so that reverse mode checkpoints its loops (see s2s/transforms/checkpoint.py).

    ``every="sqrt"`` saves the loop's carried values every ``int(sqrt(n)) + 1``
    iterations (``n`` the loop's number of iterations); an int ``every=k`` every
    ``k``.  Returns a new function object that runs ``fun``'s own code (``fun``
    itself is not changed); usable as ``@checkpoint`` or ``@checkpoint(every=100)``,
    and as ``s2s.grad(s2s.checkpoint(f))``.

    Checkpointed loops are the outermost ``for i in range(...)`` loops of ``fun`` (a
    positive constant step, if any).  A ``while`` loop, a loop that can ``break`` (or
    ``return``), or one that writes into an array or list made before it is refused
    with a TransformError when ``fun`` is differentiated: move such a loop into a
    function of its own.
    """
    if every != "sqrt" and not (type(every) is int and every > 0):
        raise ValueError(f"every must be 'sqrt' or a positive int, got {every!r}")
    if fun is None:
        return functools.partial(checkpoint, every=every)
    if not isinstance(fun, types.FunctionType):
        raise TypeError(
            f"s2s.checkpoint takes a Python function, got {fun!r}; checkpoint the "
            "function before transforming it: s2s.grad(s2s.checkpoint(f))"
        )
    marked = types.FunctionType(
        fun.__code__, fun.__globals__, fun.__name__, fun.__defaults__, fun.__closure__
    )
    marked.__kwdefaults__ = fun.__kwdefaults__
    marked.__dict__.update(fun.__dict__)
    marked.__qualname__ = fun.__qualname__
    marked.__module__ = fun.__module__
    marked.__doc__ = fun.__doc__
    marked.__annotations__ = dict(getattr(fun, "__annotations__", {}))
    setattr(marked, MARK, every)
    display_checkpointed(marked)
    return marked
