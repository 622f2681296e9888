"""Rule-table entries for the complex parts (rule_fns_complex.py): np.imag, np.angle,
np.real_if_close and complex(a, b), on real inputs here; tests/test_rules_complex.py
runs their rows (and every other row whose rule takes complex values) on complex ones.

JAX has no real_if_close (its row compares with np.real's derivative, the one it has
for a result that comes out real) and cannot trace complex() of a traced value: their
end-to-end cases are checked against finite differences."""

import jax.numpy as jnp
import rule_fns_complex as F
from rule_table import E2ECase, Row, normal, uniform

ROWS = [
    Row("imag", "matrix", (normal(2, 3),)),
    Row("angle", "matrix", (normal(2, 3),)),
    Row("angle", "deg", (normal(3),), {"deg": True}),
    Row("real_if_close", "matrix", (normal(2, 3),), jax=lambda a: jnp.real(a)),
    Row("complex", "scalars", (lambda r: float(r.normal()), lambda r: float(r.normal())),
        jax=lambda real, imag: real + 1j * imag),
]

E2E = [
    E2ECase(F.f_imag, ("imag",), (normal(2, 3),)),
    E2ECase(F.f_angle, ("angle",), (uniform(0.5, 2.0)(2, 3),)),
    E2ECase(F.f_imag_attribute, ("imag", "real", "conjugate"), (normal(4),)),
    E2ECase(F.f_real_if_close, ("real_if_close",), (normal(2, 3),), jax=False),
    E2ECase(F.f_real_if_close_stays_complex, ("real_if_close",), (normal(3),), jax=False),
    E2ECase(F.f_complex, ("complex",), (normal(3),), jax=False),
]
