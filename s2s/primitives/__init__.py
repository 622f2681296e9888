"""Primitive rules, grouped by family.  Importing this package registers them all."""

import math

from . import binary, elementwise, indexing, linalg, reductions, shape, special, structure  # noqa: F401
from .registry import BY_OBJECT, PRIMITIVES, Primitive, lookup_object

# ``math`` functions on Python floats are the same primitives as NumPy's.
for _math_fn, _prim in (
    (math.sin, "sin"), (math.cos, "cos"), (math.tan, "tan"), (math.exp, "exp"),
    (math.log, "log"), (math.log1p, "log1p"), (math.expm1, "expm1"),
    (math.sqrt, "sqrt"), (math.tanh, "tanh"), (math.sinh, "sinh"),
    (math.cosh, "cosh"), (math.asin, "arcsin"), (math.acos, "arccos"),
    (math.atan, "arctan"), (math.fabs, "absolute"), (math.log2, "log2"),
    (math.log10, "log10"), (math.floor, "floor"), (math.ceil, "ceil"),
):
    BY_OBJECT[id(_math_fn)] = _prim

__all__ = ["PRIMITIVES", "Primitive", "lookup_object"]
