"""Primitive rules, grouped by family.  Importing this package registers them all,
except ``scipy.special``'s, ``scipy.stats``', ``scipy.linalg``'s and ``scipy.signal``'s,
registered the first time a function from SciPy (or one of ``math``'s special
functions) is looked up, so ``import s2s`` does not import SciPy."""

import math

# The families register in this order: np.power is named by two primitives ("power"
# in binary, "numpy.power" in runtime_prims), and a call to it finds the later one.
# isort: off
from . import binary, elementwise, indexing, linalg, reductions, shape, structure  # noqa: F401
from . import linalg_solve  # noqa: F401  (inverses, solves, factorisations, norms)
from . import shape_join  # noqa: F401  (joining and splitting)
from . import runtime_prims  # noqa: F401  (the runtime's helpers: rules for higher order)
from . import runtime_products  # noqa: F401  (the runtime's product cotangents)
from . import dtypes  # noqa: F401  (casts, and calls whose outputs are constants)
from . import fft  # noqa: F401  (np.fft: transforms whose adjoints are transforms)
from . import collectives  # noqa: F401  (psum, pmean, ...: over a named vmap axis)
from . import numpy_more  # noqa: F401  (partition, frexp, gradient, insert)
from . import scans  # noqa: F401  (np.maximum.accumulate, np.minimum.accumulate)
from . import ufunc_reduce  # noqa: F401  (np.logaddexp.reduce, np.logaddexp2.reduce)
from . import forms  # noqa: F401  (calls that are other primitives': np.add.reduce, ...)
from . import forms_reduce  # noqa: F401  (np.sum's where=/initial=, np.diff's prepend=)
from . import ode  # noqa: F401  (scipy.integrate's odeint and solve_ivp: a callee's ODE)
# isort: on
from .registry import BY_OBJECT, PRIMITIVES, Primitive, lookup_object


def load_all() -> None:
    """Register every family now, SciPy's included (for listings and tests)."""
    from . import scipy_linalg, special, stats  # noqa: F401

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

__all__ = ["PRIMITIVES", "Primitive", "lookup_object", "load_all"]
