"""A NumPy array a function has as a parameter's default, as code on JAX reads it.

Code ``s2s.jit(..., backend="jax")`` runs keeps a NumPy default as it is (Python's
operators on it stay NumPy's, concrete while JAX traces), except where it is indexed
by a value JAX traces (``grid[i]`` for ``i = np.searchsorted(grid, x) - 1``): NumPy's
indexing cannot read a tracer (TracerArrayConversionError), so :class:`Indexable`
indexes the default's values as a JAX constant there, as the ``jax.numpy`` twin whose
default is a JAX array does.  The values are the same; only the indexing is JAX's
(an index out of range is clamped, as JAX's is)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

__all__ = ["Indexable", "indexable"]


class Indexable(np.ndarray):
    """A view of a NumPy default whose indexing by a traced value is JAX's."""

    def __getitem__(self, index: Any) -> Any:
        items = index if type(index) is tuple else (index,)
        if any(isinstance(i, jax.Array) for i in items):
            return jax.numpy.asarray(self.view(np.ndarray))[index]
        return np.ndarray.__getitem__(self, index)


def indexable(value: Any) -> Any:
    """``value``, a numeric NumPy array, as an :class:`Indexable` view (else as is)."""
    if type(value) is np.ndarray and value.dtype.kind in "biufc":
        return value.view(Indexable)
    return value
