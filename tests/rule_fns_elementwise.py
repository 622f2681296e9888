"""Functions for the elementwise and binary rows of the rule table (see
rule_rows_elementwise.py).  Outputs are weighted by fixed, non-uniform constants so a
rule cannot pass with a cotangent of all ones.  Keep the import as it is: the JAX twin
rewrites it.
"""

import numpy as np

W23 = np.array([[0.3, -1.2, 0.7], [1.5, 0.4, -0.8]])
SIGNS = np.array([[1.0, -1.0, -0.0], [0.0, -2.0, 3.0]])  # signed zeros included
STEPS = np.array([[0.0, 1.0, -2.0], [0.0, -0.5, 0.0]])


# ---- one array --------------------------------------------------------------------


def f_inverse_hyperbolic(x):
    # x in (-0.9, 0.9): inside every domain
    return np.sum((np.arcsinh(x) + np.arccosh(x + 2.0) * x + np.arctanh(x) ** 2) * W23)


def f_exp2_cbrt(x):
    return np.sum((np.exp2(x) + np.cbrt(x) * x) * W23)


def f_angle_units(x):
    return np.sum(
        (np.sin(np.deg2rad(x * 50.0)) + np.cos(np.radians(x * 50.0)) * np.rad2deg(x)
         + np.degrees(x) ** 2 * 0.01) * W23
    )


def f_sinc_fabs(x):
    return np.sum((np.sinc(x) + np.fabs(x) * x) * W23)


def f_predicates(x):
    # boolean-valued functions choose branches; no derivative flows through them
    y = np.where(np.signbit(x), x**2, np.sin(x))
    y = np.where(np.isinf(y), 0.0, y)
    y = np.where(np.isposinf(x * 1e308), y, y * 2.0)
    y = np.where(np.isneginf(x * 1e308), y * 3.0, y)
    y = np.where(np.iscomplex(x), 0.0, y)
    y = np.where(np.isreal(x), y, 0.0)
    return np.sum(y * W23)


def f_fix(x):
    # fix (round toward zero) is piecewise constant: x * fix(3x) has gradient fix(3x)
    return np.sum(x * np.fix(x * 3.0) * W23)


# ---- two arrays: x has shape (2, 3), y shape (3,) --------------------------------


def f_logaddexp(x, y):
    return np.sum((np.logaddexp(x, y) + np.logaddexp2(x, y) * x) * W23)


def f_arctan2_hypot(x, y):
    return np.sum((np.arctan2(x, y) + np.hypot(x, y) * x) * W23)


def f_copysign(x, y):
    return np.sum(np.copysign(x, y) * W23)


def f_copysign_broadcast(x):
    # SIGNS has shape (2, 3), x shape (3,): x's cotangent is summed over rows
    return np.sum(np.copysign(x, SIGNS) * W23)


def f_remainder_fmod(x, y):
    # np.mod is np.remainder
    remainders = np.mod(x, y) + np.fmod(x, y) ** 2
    return np.sum(remainders * W23) + np.sum(np.remainder(y, 0.7))


def f_fmax_fmin(x, y):
    return np.sum((np.fmax(x, y) + np.fmin(x, y) ** 2) * W23)


def f_float_power(x, y):
    return np.sum(np.float_power(x, y) * W23)


def f_clip(x, y):
    # array bounds: every operand gets a derivative
    return np.sum(np.clip(x, -y, y + 0.5) * W23)


def f_clip_method(x):
    return np.sum(x.clip(-0.5, 0.8) * W23)


def f_clip_one_sided(x):
    return np.sum(np.clip(x, None, 0.3) * W23) + np.sum(np.clip(x, -0.2, None) ** 2)


def f_heaviside(x):
    # heaviside(STEPS, v): v's derivative is 1 where STEPS == 0
    return np.sum(np.heaviside(STEPS, x * 2.0) * W23)


def f_heaviside_broadcast(x):
    # x has shape (3,), STEPS (2, 3): x's cotangent is summed over rows
    return np.sum(np.heaviside(STEPS, np.sin(x)) * W23)
