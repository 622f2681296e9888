"""Functions for the dtype and constant-output rows of the rule table (see
rule_rows_dtypes.py).  JAX runs the same source (numpy bound to jax.numpy)."""

import numpy as np

W = np.array([0.5, -1.0, 2.0])


def f_astype_mask(x):
    # the everyday mask: a bool cast to x's dtype carries no derivative, x does
    return np.sum((x > 0).astype(x.dtype) * np.sin(x) + x.astype(x.dtype) ** 2)


def f_astype_to_int(x):
    # a cast to an integer dtype passes zero derivative (JAX's float0)
    return np.sum(np.astype(x * 3.0, "int32").astype(x.dtype) * x)


def f_astype_to_bool(x):
    return np.sum(x.astype("bool").astype(x.dtype) * np.cos(x))


def f_float64_call(x):
    return np.sum(np.float64(x) ** 2 * np.sin(x))


def f_dtype_type_constant(x):  # (of x itself: JAX's twin cannot, a NumPy scalar of a tracer)
    return np.sum(np.sin(x) * x.dtype.type(2.5))


def f_asarray_dtype(x):
    return np.sum(np.asarray(x, dtype=x.dtype) * np.tanh(x))


def f_like_dtype(x):
    ones = np.ones_like(x, dtype=x.dtype)
    zeros = np.zeros_like(x, dtype="int32")
    return np.sum((ones + x) ** 2 + zeros) + np.sum(np.zeros(3, dtype=x.dtype) + W)


def f_logspace(x):
    return np.sum(np.sin(np.logspace(x[0], x[1], 5)))


def f_logspace_vectors(x):
    # start and stop are vectors: the fractions run along a new axis 0
    return np.sum(np.logspace(x[0], x[1], 3, endpoint=False, base=2.0) ** 2 * W)


def f_geomspace(x):
    # NumPy's geomspace of float32 numbers is float64 (JAX's is float32): cast it back
    return np.sum(np.geomspace(x[0], x[1], 4).astype(x.dtype) ** 0.5)


def f_geomspace_no_endpoint(x):
    return np.sum(np.sin(np.geomspace(x[0], x[1], 5, endpoint=False).astype(x.dtype)))


def f_triu_indices(x):
    i, j = np.triu_indices(3, 1)
    return np.sum(np.outer(x, x * W)[i, j] ** 2)


def f_tril_indices(x):
    i, j = np.tril_indices(3)
    return np.sum(np.sin(np.outer(x, W)[i, j]))


def f_diag_indices(x):
    i, j = np.diag_indices(3)
    return np.sum(np.outer(x, x)[i, j] * W)


def f_isclose(x):
    near = np.isclose(x, 0.5, atol=0.3)
    return np.sum(np.where(near, x, x**2))


def f_allclose(x):
    return np.allclose(x, 0.0) * x[0] + np.sum(x**2) + np.allclose(x, x) * x[1]
