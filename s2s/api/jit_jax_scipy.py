"""SciPy's modules as code translated for the JAX backend reads them (``jit_jax``'s
``Translator``): ``scipy.linalg`` and ``scipy.special`` JAX's, what JAX lacks SciPy's."""

from __future__ import annotations

import types
from typing import Callable

from ..backends import jax_runtime_scipy


def scipy_linalg_on_jax() -> types.ModuleType:
    """``scipy.linalg`` as code on JAX reads it: ``jax.scipy.linalg``, with ``sqrtm``
    giving SciPy's dtype (``jax_runtime_scipy.linalg_sqrtm``); what JAX lacks stays
    SciPy's."""
    import jax.scipy.linalg

    module = types.ModuleType("scipy.linalg")
    module.__dict__.update(vars(jax.scipy.linalg), sqrtm=jax_runtime_scipy.linalg_sqrtm)
    return module


def scipy_on_jax(scipy: types.ModuleType, translate: Callable) -> types.ModuleType:
    """The package ``scipy`` as code on JAX reads it (``import scipy.special``, then
    ``scipy.special.erf(x)`` in a callee): its ``special`` and ``linalg``, where
    imported, as ``translate`` gives a module imported by those names; the rest
    SciPy's."""
    module = types.ModuleType("scipy")
    module.__dict__.update(vars(scipy))
    for sub in ("special", "linalg"):
        if isinstance(vars(scipy).get(sub), types.ModuleType):
            setattr(module, sub, translate(vars(scipy)[sub]))
    return module
