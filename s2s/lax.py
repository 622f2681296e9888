"""``s2s.lax``: JAX's collectives over a named ``s2s.vmap`` axis.

    def f(x):
        return x - s2s.lax.pmean(x, "batch")

    s2s.vmap(f, axis_name="batch")(xs)   # each row minus the mean row

JAX's own ``jax.lax.psum`` (and the rest) written in a function s2s transforms are
read as these (``primitives/registry.py`` ``JAX_SPELLINGS``).
"""

from .primitives.collectives import (
    all_gather,
    axis_index,
    axis_size,
    pmax,
    pmean,
    pmin,
    psum,
)

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size"]
