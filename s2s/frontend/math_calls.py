"""A ``math`` function's call (``math.log(v)``): NumPy's primitive (``np.log(v)``),
then its value in the dtype ``math`` gives.  ``math.log`` returns a Python float, weak
in NumPy's promotion (``2.0 * x`` of a float32 ``x`` is float32); ``np.log`` of a Python
float is a float64 NumPy scalar, which made the function's float32 results float64."""

from __future__ import annotations

from typing import Any

from ..ir.names import stem
from ..ir.nodes import Atom

# math's functions whose results are bools (NumPy's are too: left as they are);
# ``math.floor(v)``/``ceil``/``trunc`` give an int, which no array op can: their
# ``np.floor(v)`` is made a Python float, weak as an int is in NumPy's promotion
# (``x * math.floor(v)`` keeps a float32 ``x`` float32, as Python and ``jnp.floor`` do;
# a NumPy float64 scalar made it float64)
NOT_FLOAT = ("isinf", "isnan", "isfinite")


def applier(n: Any, obj: Any) -> Any:
    """How a call of the primitive ``obj`` is lowered: ``n.calls.apply``, or for a
    ``math`` function with a float result (``math.log(v)``) ``math_call``."""
    if getattr(obj, "__module__", None) == "math" and getattr(obj, "__name__", "") not in (
            NOT_FLOAT):
        return lambda *call: math_call(n, *call)
    return n.calls.apply


def math_call(n: Any, name: str, args: list[Atom], kwargs: dict[str, Atom], node: Any,
              target: str | None, text: str) -> Atom:
    """``math.log(v)``: ``np.log(v)``, then ``python_float`` of it: a Python float
    (weak, as math's result: it keeps a float32 array float32) where NumPy gave a
    NumPy scalar, an array (a batch, a JAX value) as it is."""
    value = n.calls.apply(name, args, kwargs, node, None, text)
    return n.emit(n.exprs.target(target, f"{stem(n.named(value))}_"), "python_float",
                  (value,), {}, node)
