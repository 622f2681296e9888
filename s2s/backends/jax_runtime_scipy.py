"""The SciPy helpers (``s2s/runtime_scipy.py``) for code running on the JAX backend,
and the lowering both runtime twins share (:func:`lowered_source`).

As :mod:`.jax_runtime` does for runtime.py: the module's own text, executed with ``np``
bound to :mod:`s2s.backends.jax_numpy` and ``from scipy import special`` (``stats``,
``linalg``, ``signal``) reading ``jax.scipy.special`` (``jax.scipy.stats``, ...).
:mod:`.jax_runtime` imports these names where runtime.py imports them from
runtime_scipy.
"""

from __future__ import annotations

import inspect
import re

from .. import runtime_scipy as _numpy_runtime_scipy
from ..emit.code import compile_module
from .lower import lower_inplace

HEADER_IMPORT = "import s2s.backends.jax_numpy as np"


def lowered_source(text: str) -> str:
    """NumPy module text as it runs on JAX: imports rebound (SciPy's to jax.scipy's,
    runtime_scipy's to this module), in-place writes lowered."""
    text = re.sub(r"^import numpy as np$", HEADER_IMPORT, text, flags=re.M)
    text = re.sub(r"^(\s*)from scipy import (special|stats|linalg|signal)$",
                  r"\1from jax.scipy import \2", text, flags=re.M)
    text = re.sub(r"^from \.runtime_scipy import ", f"from {__name__} import ", text,
                  flags=re.M)
    return lower_inplace(text)


SOURCE = lowered_source(inspect.getsource(_numpy_runtime_scipy))

_namespace: dict = {"__name__": __name__}
compile_module(SOURCE, _namespace, "runtime_jax_scipy")
__all__ = list(_numpy_runtime_scipy.__all__)
globals().update({name: _namespace[name] for name in __all__})
