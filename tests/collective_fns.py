"""Functions with collectives over named vmap axes, for tests/test_collectives.py.

The same text runs under JAX (tests/support.py ``jax_twin``: numpy is jax.numpy
there, and ``lax`` is ``jax.lax``)."""

import numpy as np

if np.__name__.startswith("jax"):
    from jax import lax
else:
    from s2s import lax


def centred(x):
    return x - lax.pmean(x, "batch")


def batch_norm(x):
    mean = lax.pmean(x, "batch")
    var = lax.pmean((x - mean) ** 2, "batch")
    return (x - mean) / np.sqrt(var + 1e-5)


def share(x):
    return x / lax.psum(x, "batch") * lax.axis_size("batch")


def spread(x):
    return lax.pmax(x, "batch") - lax.pmin(x, "batch") + x


def gathered(x):
    index = lax.axis_index("batch").astype(x.dtype)  # (NumPy's int64 would promote)
    return np.sum(lax.all_gather(x, "batch") ** 2, axis=0) * index


def psum_of_constant(x):
    return x * lax.psum(1.0, "batch")


def centred_loss(x):
    return np.sum((x - lax.pmean(x, "batch")) ** 2 * np.cos(x))


def psum_loss(x):
    return np.sum(lax.psum(x, "batch") * np.sin(x))


def gather_loss(x):
    index = lax.axis_index("batch").astype(x.dtype)
    return np.sum(lax.all_gather(x, "batch") ** 2) * (index + 1)


def two_names(x):
    index = lax.axis_index("cols").astype(x.dtype)
    return x - lax.pmean(x, "rows") + lax.psum(x, "cols") * index


def unbound(x):
    return lax.psum(x, "nowhere")
