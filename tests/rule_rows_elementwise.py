"""Rule-table entries for elementwise and binary additions (rule_fns_elementwise.py).

Special points where JAX defines a convention (abs'(0), sinc'(0), hypot at the origin,
signed zeros for copysign, ties and NaNs for fmax/fmin, clip at its bounds, heaviside
at 0) have rows of their own; the expected values all come from JAX.
"""

import numpy as np

import rule_fns_elementwise as F
from rule_table import E2ECase, Row, const, nonzero, normal, uniform


def choice(*values):
    """Draw each element from ``values``: ties and exact zeros on purpose."""
    return lambda *shape: lambda r: r.choice(np.array(values, dtype=float), size=shape)


def with_nans(*shape):
    return lambda r: np.where(r.random(shape) < 0.3, np.nan, r.normal(size=shape))


def operand(draw, shape):
    return (lambda r: float(draw()(r))) if shape is None else draw(*shape)


UNARY = {  # name -> drawer of a valid input of a given shape
    "arcsinh": normal, "arccosh": uniform(1.2, 3.0), "arctanh": uniform(-0.9, 0.9),
    "exp2": normal, "cbrt": nonzero, "deg2rad": normal, "radians": normal,
    "rad2deg": normal, "degrees": normal, "sinc": normal, "fabs": nonzero,
}
BINARY = {  # name -> (drawer of x1, drawer of x2)
    "logaddexp": (normal, normal), "logaddexp2": (normal, normal),
    "arctan2": (normal, nonzero), "hypot": (normal, normal),
    "copysign": (nonzero, normal), "remainder": (uniform(-3.0, 3.0), nonzero),
    "fmod": (uniform(-3.0, 3.0), nonzero), "fmax": (normal, normal),
    "fmin": (normal, normal), "float_power": (uniform(0.3, 2.0), normal),
}
BROADCASTS = {  # variant -> (shape of x1, shape of x2); None is a Python float
    "col_row": ((3, 1), (4,)),
    "scalar_array": ((), (2, 3)),
    "python_float": ((2, 3), None),
}
A = np.array
ZEROS = A([[0.0, -0.0, 1.5], [-2.0, 0.0, 0.25]])

ROWS = (
    [Row(name, "matrix", (domain(2, 3),)) for name, domain in UNARY.items()]
    + [Row("cbrt", "scalar", (nonzero(),))]
    + [
        Row("fabs", "at_zero", (const(ZEROS),)),
        Row("sinc", "at_zero", (const(ZEROS),)),
        # derivatives that are infinite at the domain's edge: inf, as JAX
        Row("cbrt", "at_zero", (const(A([0.0, 8.0, -0.125])),)),
        Row("arccosh", "at_one", (const(A([1.0, 2.0, 1.5])),)),
        Row("arctanh", "at_one", (const(A([1.0, 0.5, -1.0])),)),
    ]
    + [
        Row(name, variant, (operand(d1, s1), operand(d2, s2)))
        for name, (d1, d2) in BINARY.items()
        for variant, (s1, s2) in BROADCASTS.items()
    ]
    + [
        Row("hypot", "at_origin", (const(A([0.0, -0.0, 0.0, 3.0])),
                                   const(A([0.0, 0.0, -0.0, 0.0])))),
        Row("copysign", "signed_zeros", (const(ZEROS), const(-ZEROS[::-1]))),
        Row("copysign", "x2_stretches_x1", (nonzero(3), normal(2, 3))),
        Row("fmax", "ties", (choice(-1, 0, 1)(2, 3), choice(-1, 0, 1)(2, 3))),
        Row("fmin", "ties", (choice(-1, 0, 1)(2, 3), choice(-1, 0, 1)(2, 3))),
        Row("fmax", "nans", (with_nans(2, 3), with_nans(2, 3))),
        Row("fmin", "nans", (with_nans(2, 3), with_nans(2, 3))),
        Row("remainder", "negative_divisor", (uniform(-3.0, 3.0)(2, 3), const(-0.7))),
        Row("fmod", "negative_divisor", (uniform(-3.0, 3.0)(2, 3), const(-0.7))),
        Row("float_power", "integer_exponent", (nonzero(2, 3), const(3.0))),
        # 0 ** y: d/dx1 is 0 for y > 1, inf for y < 1, NaN for y = 0; d/dx2 is 0
        Row("float_power", "zero_base", (const(A([0.0, 0.0, 0.0, 2.0])),
                                         const(A([2.0, 0.5, 0.0, 0.0])))),
        Row("arctan2", "at_origin", (const(A([0.0, 1.0])), const(A([0.0, -2.0])))),
        Row("logaddexp", "both_neg_inf", (const(A([-np.inf, 1.0])),
                                          const(A([-np.inf, 1.0])))),
    ]
    + [
        Row("clip", "python_bounds", (normal(2, 3), const(-0.5), const(0.5))),
        Row("clip", "array_bounds", (normal(2, 3), uniform(-1.0, -0.2)(3),
                                     uniform(0.2, 1.0)(2, 1))),
        Row("clip", "crossed_bounds", (normal(2, 3), normal(3), normal(2, 3))),
        Row("clip", "bounds_stretch_a", (normal(3), uniform(-1.0, -0.2)(2, 3),
                                         const(0.5))),
        Row("clip", "at_bounds", (choice(-1.0, -0.5, 0.0, 0.5, 1.0)(3, 4),
                                  choice(-0.5, 0.0)(4), choice(0.0, 0.5)(3, 1))),
        Row("clip", "no_min", (normal(2, 3), const(None), normal(3)),
            wrt=("a", "a_max")),
        Row("clip", "no_max", (normal(2, 3), normal(3), const(None)),
            wrt=("a", "a_min")),
        Row("clip", "equal_bounds", (choice(0.0, 1.0)(2, 3), const(0.0), const(0.0))),
    ]
    + [
        Row("heaviside", "same", (const(ZEROS), normal(2, 3))),
        Row("heaviside", "x1_stretches_x2", (const(ZEROS), normal(3))),
        Row("heaviside", "python_float", (const(ZEROS), const(0.5))),
    ]
)

E2E = [
    E2ECase(F.f_inverse_hyperbolic, ("arcsinh", "arccosh", "arctanh"),
            (uniform(-0.9, 0.9)(2, 3),)),
    E2ECase(F.f_exp2_cbrt, ("exp2", "cbrt"), (nonzero(2, 3),)),
    E2ECase(F.f_angle_units, ("deg2rad", "radians", "rad2deg", "degrees")),
    E2ECase(F.f_sinc_fabs, ("sinc", "fabs"), (nonzero(2, 3),)),
    E2ECase(F.f_predicates, ("signbit", "isinf", "isposinf", "isneginf", "iscomplex",
                             "isreal")),
    # jax.numpy has no fix any more (its trunc): finite differences only
    E2ECase(F.f_fix, ("fix",), jax=False),
    E2ECase(F.f_logaddexp, ("logaddexp", "logaddexp2"), (normal(2, 3), normal(3))),
    E2ECase(F.f_arctan2_hypot, ("arctan2", "hypot"), (normal(2, 3), nonzero(3))),
    E2ECase(F.f_copysign, ("copysign",), (nonzero(2, 3), normal(3))),
    E2ECase(F.f_copysign_broadcast, ("copysign",), (nonzero(3),)),
    E2ECase(F.f_remainder_fmod, ("remainder", "fmod"), (uniform(-3.0, 3.0)(2, 3),
                                                        nonzero(3))),
    E2ECase(F.f_fmax_fmin, ("fmax", "fmin"), (normal(2, 3), normal(3))),
    E2ECase(F.f_float_power, ("float_power",), (uniform(0.3, 2.0)(2, 3), normal(3))),
    E2ECase(F.f_clip, ("clip",), (normal(2, 3), uniform(0.2, 1.0)(3))),
    E2ECase(F.f_clip_method, ("clip",)),
    E2ECase(F.f_clip_one_sided, ("clip",)),
    E2ECase(F.f_heaviside, ("heaviside",)),
    E2ECase(F.f_heaviside_broadcast, ("heaviside",), (normal(3),)),
]
