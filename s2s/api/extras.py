"""The rest of JAX's transformation API, built on jvp and vjp: ``linearize``,
``linear_transpose``, ``stop_gradient``; ``eval_shape`` (with ``ShapeDtypeStruct``)
is its own transform (api/shapes.py)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..runtime import ShapeDtypeStruct, stop_gradient
from . import tree_util
from .arguments import zero_d
from .linear import FrozenJVP
from .outputs import owned_by
from .pullbacks import frozen_function
from .shapes import eval_shape
from .transformed import vjp
from .trees import _copies

__all__ = ["linearize", "linear_transpose", "eval_shape", "ShapeDtypeStruct",
           "stop_gradient"]


def _is_struct(x: Any) -> bool:
    return isinstance(x, ShapeDtypeStruct)


def linearize(fun: Callable, *primals: Any) -> tuple[Any, Callable]:
    """``(out, f_jvp)``, as ``jax.linearize``: ``f_jvp(*tangents)`` is ``fun``'s JVP at
    ``primals``.  Each ``f_jvp`` call runs the emitted forward-mode code of the
    ``linearize()`` point again (primal and tangent together): s2s keeps no
    linearized program."""
    # (on copies of the caller's arrays, as every transform runs the user's code; a
    # module array it returns copied: api/outputs.py; a NumPy scalar a 0-d array)
    out = zero_d(owned_by(fun(*_copies(primals)), fun))
    # (as JAX's, at the point of now: the emitted JVP code of now on its own copy of
    # the objects the function reads, module names, closure cells and an object's
    # attributes, on copies of the primals: api/linear.py)
    then = FrozenJVP(frozen_function(fun), primals)

    def f_jvp(*tangents: Any) -> Any:
        if len(tangents) != len(primals):
            raise TypeError(f"linearized function takes {len(primals)} tangents, got "
                            f"{len(tangents)}")
        return then.tangent(tangents)

    return out, f_jvp


def linear_transpose(fun: Callable, *primals: Any,
                     reduce_axes: tuple = ()) -> Callable:
    """The transpose of a linear ``fun``, as ``jax.linear_transpose``: ``primals``
    (arrays or ShapeDtypeStructs) give the input shapes and dtypes; the transpose of
    ``cotangent`` is a tuple, one per primal.  s2s does not check that ``fun`` is
    linear: for a linear function the VJP at any point is its transpose (zeros here)."""
    if reduce_axes:
        raise TypeError("linear_transpose's reduce_axes is not supported by s2s")
    points = tree_util.tree_map(
        lambda x: np.zeros(np.shape(x), np.result_type(x.dtype if _is_struct(x) else x)),
        primals, is_leaf=_is_struct)
    _, vjp_fn = vjp(fun, *points)

    def transposed(cotangent: Any) -> tuple[Any, ...]:
        return vjp_fn(cotangent)

    return transposed
