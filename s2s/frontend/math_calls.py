"""A ``math`` function's call (``math.log(v)``): NumPy's primitive (``np.log(v)``),
then its value in the dtype ``math`` gives.  ``math.log`` returns a Python float, weak
in NumPy's promotion (``2.0 * x`` of a float32 ``x`` is float32); ``np.log`` of a Python
float is a float64 NumPy scalar, which made the function's float32 results float64."""

from __future__ import annotations

import math
from typing import Any

from ..errors import UnsupportedCallError
from ..ir.names import simple_text, stem
from ..ir.nodes import Atom, Const, Var
from ..primitives import lookup_object

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
    if getattr(obj, "__module__", None) in ("_operator", "operator"):  # (`operator.add`:
        return lambda *call: operator_made(n, n.calls.apply(*call))  # Python's `+`)
    return n.calls.apply


def operator_made(n: Any, atom: Atom) -> Atom:
    """``atom``, the result of arithmetic written with a Python operator (or
    ``operator.add``, the builtin ``sum``'s additions): marked
    (``Function.operators``), so that a transform that learns from the call that an
    operand is a tuple or list computes Python's meaning (``xs + ys`` concatenates,
    ``xs / 2`` raises a TypeError), where NumPy's function converts it
    (``np.divide(xs, 2)``, ``np.add(xs, ys)``: transforms/list_operands.py)."""
    if isinstance(atom, Var):
        n.__dict__.setdefault("operators", set()).add(atom.name)
    return atom


def math_call(n: Any, name: str, args: list[Atom], kwargs: dict[str, Atom], node: Any,
              target: str | None, text: str) -> Atom:
    """``math.log(v)``: ``np.log(v)``, then ``python_float`` of it: a Python float
    (weak, as math's result: it keeps a float32 array float32) where NumPy gave a
    NumPy scalar, an array (a batch, a JAX value) as it is."""
    value = n.calls.apply(name, args, kwargs, node, None, text)
    return n.emit(n.exprs.target(target, f"{stem(n.named(value))}_"), "python_float",
                  (value,), {}, node)


def folds(obj: Any, node: Any) -> bool:
    """Whether a call of ``obj`` is one ``folded`` lowers: a ``math`` function with no
    NumPy primitive (``math.prod`` aside: pyvalues'), or ``math.log`` with a base."""
    return getattr(obj, "__module__", None) == "math" and callable(obj) and (
        obj is not math.prod and lookup_object(obj) is None or (
            obj is math.log and len(node.args) == 2))


def folded(n: Any, obj: Any, text: str, node: Any, target: str | None) -> Atom:
    """``math.gamma(2.5)``, ``math.isclose(t, 0.3)``, ``math.log(8.0, 2)``: a ``math``
    function with no NumPy primitive (or ``math.log`` with a base) over constants, its
    value computed when s2s transforms the function (the emitted code spells the call
    where an operand is a module name, so each run reads it again); over a value known
    only when the function runs (``math.isclose(t, 0.3)`` of a float parameter), the
    call kept as Python in the forward computation, refused (transforms/analysis.py,
    vmap) where an operand carries a derivative or a batch axis, as JAX refuses a
    traced value."""
    args, kwargs = n.calls.call_args(node)
    atoms = [*args, *kwargs.values()]
    name = getattr(obj, "__name__", text)
    if not all(isinstance(a, Const) for a in atoms):
        # Python's own call where the code runs, carrying no derivative: the transforms
        # refuse it, located, where an operand carries one or a batch axis (JAX refuses
        # a traced value); `t` a float parameter not differentiated runs, as under JAX
        return n.calls.python_expression(node, target, n.names.fresh(name), values=text)
    try:
        value = obj(*(a.value for a in args), **{k: a.value for k, a in kwargs.items()})
    except Exception as exc:  # (what Python would raise when the function runs)
        raise UnsupportedCallError(f"`{text}(...)` raises {type(exc).__name__}: {exc}",
                                   n.loc(node), "call it with the values it takes",
                                   n.display) from None
    texts = [a.text for a in args] + [f"{k}={a.text}" for k, a in kwargs.items()]
    if not all(simple_text(a.text) for a in atoms):
        n.resolver.bind_namespace(text.split(".")[0], node)
    return n.pyvalues.constant(value, f"{text}({', '.join(texts)})",
                               [a.text for a in atoms], target, node)
