"""s2s's runtime helpers (``s2s/runtime.py``) for code running on the JAX backend.

Not a second copy: this module executes the text of ``s2s/runtime.py`` itself, with
``np`` bound to :mod:`s2s.backends.jax_numpy` (``jax.numpy``, host constants left to
NumPy), SciPy's special functions taken from ``jax.scipy.special``, and the few
in-place writes in it lowered to functional updates (``out[s] += v`` becomes
``out = out.at[s].add(v)``).  The SciPy helpers runtime.py imports from
``s2s/runtime_scipy.py`` come from that module's twin, :mod:`.jax_runtime_scipy`.  The lowered text is registered under its own file name,
so tracebacks through a helper show the lines that ran.
"""

from __future__ import annotations

import inspect

from .. import runtime as _numpy_runtime
from ..emit.code import compile_module
from .jax_runtime_scipy import HEADER_IMPORT, lowered_source  # noqa: F401  (shared)

SOURCE = lowered_source(inspect.getsource(_numpy_runtime))

_namespace: dict = {"__name__": __name__}
compile_module(SOURCE, _namespace, "runtime_jax")
__all__ = list(_numpy_runtime.__all__)
globals().update({name: _namespace[name] for name in __all__})
