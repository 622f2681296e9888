"""The det helper of ``s2s/runtime_linalg.py`` for code running on the JAX backend:
that module's text with ``np`` bound to :mod:`s2s.backends.jax_numpy`, and
``det_cofactor`` its both-branches form ``cofactor_svd`` (the NumPy one's shortcut
tests values in Python, which does not trace)."""

from __future__ import annotations

import inspect

from .. import runtime_linalg as _numpy_runtime_linalg
from ..emit.code import compile_module
from .jax_runtime_scipy import lowered_source

SOURCE = lowered_source(inspect.getsource(_numpy_runtime_linalg))

_namespace: dict = {"__name__": __name__}
compile_module(SOURCE, _namespace, "runtime_jax_linalg")
det_cofactor = _namespace["cofactor_svd"]
__all__ = list(_numpy_runtime_linalg.__all__)
