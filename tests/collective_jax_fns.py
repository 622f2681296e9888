"""Collectives spelled as JAX spells them (``jax.lax.psum``, ``from jax.lax import
pmean``) and over tuples of axis names, for tests/test_collectives.py: s2s reads
JAX's functions as its own collectives inside a function it transforms.  The same
text runs under JAX (tests/support.py ``jax_twin``)."""

import jax
import jax.lax
import numpy as np
from jax.lax import pmean


def jax_spelled(x):
    return (x - jax.lax.pmean(x, "batch")) / jax.lax.psum(x * 0 + 1, "batch")


def imported_pmean(x):
    return x * pmean(x ** 2, "batch") + jax.lax.pmax(x, "batch")


def both_axes(x):
    total = jax.lax.psum(x, ("rows", "cols"))
    return x - jax.lax.pmean(x, ("rows", "cols")) + total / jax.lax.axis_size(("rows", "cols"))


def both_axes_extremes(x):
    return jax.lax.pmax(x, ("cols", "rows")) - jax.lax.pmin(x, ("rows", "cols")) + x


def both_axes_loss(x):
    return np.sum(np.sin(x) * jax.lax.psum(x ** 2, ("rows", "cols")))


def empty_axes(x):
    return jax.lax.psum(x, ()) * 2


def gather_two(x):
    return jax.lax.all_gather(x, ("rows", "cols"))


def gather_two_swapped(x):
    return jax.lax.all_gather(x, ("cols", "rows"), axis=1)


def gather_two_loss(x):
    return np.sum(jax.lax.all_gather(x, ("rows", "cols")) ** 2 * np.cos(x))


def index_two(x):
    return x * jax.lax.axis_index(("rows", "cols")).astype(x.dtype)


def index_two_swapped(x):
    return x * jax.lax.axis_index(("cols", "rows")).astype(x.dtype) + x


def stopped(x):
    return np.sum(x * jax.lax.stop_gradient(x) ** 2)
