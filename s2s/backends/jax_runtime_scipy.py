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
    text = re.sub(r"^from \.runtime_ode import ", "from s2s.backends.jax_runtime_ode import ",
                  text, flags=re.M)  # (its own twin: jax.experimental.ode's odeint)
    text = re.sub(r"^from \.runtime_linalg import ", "from s2s.backends.jax_runtime_linalg "
                  "import ", text, flags=re.M)  # (det_cofactor: its both-branches form)
    return lower_inplace(text)


SOURCE = lowered_source(inspect.getsource(_numpy_runtime_scipy))

_namespace: dict = {"__name__": __name__}
compile_module(SOURCE, _namespace, "runtime_jax_scipy")
__all__ = list(_numpy_runtime_scipy.__all__)
globals().update({name: _namespace[name] for name in __all__})


def linalg_sqrtm(a):
    """``scipy.linalg.sqrtm`` on JAX.  ``jax.scipy.linalg.sqrtm`` returns a complex root
    whatever its input, where SciPy's root of a real matrix is real when it can be (no
    eigenvalue on the negative real axis): a real ``a``'s root is that real part here,
    the same dtype as SciPy's, and NaN where the root has an imaginary part (SciPy's
    would be complex: a dtype JAX must know before it runs).  Leading axes are a batch
    (JAX's takes one matrix)."""
    import jax.numpy as jnp
    from jax.scipy import linalg

    root = jnp.vectorize(linalg.sqrtm, signature="(n,n)->(n,n)")(a)
    if jnp.iscomplexobj(a):
        return root
    real = jnp.real(root)
    scale = jnp.max(jnp.abs(root), axis=(-2, -1), keepdims=True)
    tol = 100 * jnp.finfo(real.dtype).eps * jnp.maximum(scale, 1.0)
    ok = jnp.max(jnp.abs(jnp.imag(root)), axis=(-2, -1), keepdims=True) <= tol
    return jnp.where(ok, real, jnp.nan).astype(jnp.result_type(a, jnp.float32))


_namespace["linalg_sqrtm"] = linalg_sqrtm  # (what the other helpers call, too)
