"""Rule-table entries for casts (astype, np.float64(x), asarray's dtype=) and for
calls whose outputs are constants of their arguments (logspace, geomspace) or carry
no derivative (isclose, allclose, triu/tril/diag_indices).

Direct rows keep float64 (JAX's vjp wants a float32 output's cotangent in float32,
and an integer output's in float0, which the directly-called table does not draw);
casts to float32 and to integer dtypes run end to end here and, at float32's
tolerance, in tests/test_rules_dtypes.py."""

import numpy as np

import rule_fns_dtypes as F
from rule_table import E2ECase, Row, const, normal, uniform

positive = uniform(0.5, 2.0)


def _jax_astype(x, dtype):  # jnp.astype takes dtype by position only
    import jax.numpy as jnp

    return jnp.astype(x, dtype)


def _jax_dtype_type(dtype, x):  # (d.type(v): NumPy's scalar type of a tracer fails)
    import jax.numpy as jnp

    return jnp.asarray(x, dtype=dtype)[()]


ROWS = [
    Row("astype", "float64", (normal(2, 3), const("float64")), jax=_jax_astype),
    Row("float64", "matrix", (normal(2, 3),)),
    Row("dtype.type", "matrix", (const(np.dtype(np.float64)), normal(2, 3)), jax=_jax_dtype_type),
    Row("dtype.type", "scalar", (const(np.dtype(np.float64)), normal()), jax=_jax_dtype_type),
    Row("asarray", "dtype", (normal(2, 3),), {"dtype": "float64"}),
    Row("logspace", "scalars", (normal(), normal()), {"num": 5}),
    Row("logspace", "vectors_base2", (normal(3), normal(3)),
        {"num": 4, "endpoint": False, "base": 2.0}),
    Row("logspace", "broadcast", (normal(3), normal()), {"num": 3}),
    Row("geomspace", "scalars", (positive(), positive()), {"num": 5}),
    Row("geomspace", "vectors", (positive(2), positive(2)),
        {"num": 3, "endpoint": False}),
]

E2E = [
    E2ECase(F.f_astype_mask, ("astype", "dtype")),
    E2ECase(F.f_astype_to_int, ("astype",)),
    E2ECase(F.f_astype_to_bool, ("astype",)),
    E2ECase(F.f_float64_call, ("float64",)),
    E2ECase(F.f_dtype_type_constant, ("dtype.type", "dtype")),
    E2ECase(F.f_asarray_dtype, ("asarray",)),
    E2ECase(F.f_like_dtype, ("ones_like", "zeros_like", "zeros")),
    E2ECase(F.f_logspace, ("logspace",), (normal(2),)),
    E2ECase(F.f_logspace_vectors, ("logspace",), (normal(2, 3),)),
    E2ECase(F.f_geomspace, ("geomspace", "astype"), (positive(2),)),
    E2ECase(F.f_geomspace_no_endpoint, ("geomspace", "astype"), (positive(2),)),
    E2ECase(F.f_triu_indices, ("triu_indices",), (normal(3),)),
    E2ECase(F.f_tril_indices, ("tril_indices",), (normal(3),)),
    E2ECase(F.f_diag_indices, ("diag_indices",), (normal(3),)),
    E2ECase(F.f_isclose, ("isclose",), (normal(3),)),
    E2ECase(F.f_allclose, ("allclose",), (normal(3),)),
]
