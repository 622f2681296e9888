"""Elementwise functions of one array: one block per primitive, VJP beside JVP.

In every rule ``g`` is the output's cotangent, ``ans`` the forward output and ``x``
the input; ``x_dot`` is the input's tangent.  Where the output is cheaper to reuse
than the input (``exp``, ``tanh``, ``sqrt``) the rule reads ``ans``.
"""

import ast
import math
import operator

import numpy as np

from .. import runtime
from ..runtime import sinc_taylor, unbroadcast
from .registry import call_spelling, defjvp, deflinear, defprim, defvjp, prefix

# ---- trigonometric --------------------------------------------------------------

defprim("sin", np.sin, "(x)", family="elementwise")


@defvjp("sin")
def sin_vjp(g, ans, x):
    return g * np.cos(x)


@defjvp("sin", "x")
def sin_jvp(x_dot, ans, x):
    return x_dot * np.cos(x)


defprim("cos", np.cos, "(x)", family="elementwise")


@defvjp("cos")
def cos_vjp(g, ans, x):
    return -g * np.sin(x)


@defjvp("cos", "x")
def cos_jvp(x_dot, ans, x):
    return -x_dot * np.sin(x)


defprim("tan", np.tan, "(x)", family="elementwise")


@defvjp("tan")
def tan_vjp(g, ans, x):
    return g * (1 + ans**2)


@defjvp("tan", "x")
def tan_jvp(x_dot, ans, x):
    return x_dot * (1 + ans**2)


defprim("arcsin", np.arcsin, "(x)", family="elementwise")


@defvjp("arcsin")
def arcsin_vjp(g, ans, x):
    return g / np.sqrt(1 - x**2)


@defjvp("arcsin", "x")
def arcsin_jvp(x_dot, ans, x):
    return x_dot / np.sqrt(1 - x**2)


defprim("arccos", np.arccos, "(x)", family="elementwise")


@defvjp("arccos")
def arccos_vjp(g, ans, x):
    return -g / np.sqrt(1 - x**2)


@defjvp("arccos", "x")
def arccos_jvp(x_dot, ans, x):
    return -x_dot / np.sqrt(1 - x**2)


defprim("arctan", np.arctan, "(x)", family="elementwise")


@defvjp("arctan")
def arctan_vjp(g, ans, x):
    return g / (1 + x**2)


@defjvp("arctan", "x")
def arctan_jvp(x_dot, ans, x):
    return x_dot / (1 + x**2)


# ---- hyperbolic -----------------------------------------------------------------

defprim("sinh", np.sinh, "(x)", family="elementwise")


@defvjp("sinh")
def sinh_vjp(g, ans, x):
    return g * np.cosh(x)


@defjvp("sinh", "x")
def sinh_jvp(x_dot, ans, x):
    return x_dot * np.cosh(x)


defprim("cosh", np.cosh, "(x)", family="elementwise")


@defvjp("cosh")
def cosh_vjp(g, ans, x):
    return g * np.sinh(x)


@defjvp("cosh", "x")
def cosh_jvp(x_dot, ans, x):
    return x_dot * np.sinh(x)


defprim("tanh", np.tanh, "(x)", family="elementwise")


@defvjp("tanh")
def tanh_vjp(g, ans, x):
    return g * (1 - ans**2)


@defjvp("tanh", "x")
def tanh_jvp(x_dot, ans, x):
    return x_dot * (1 - ans**2)


# ---- exponential and logarithmic ------------------------------------------------

defprim("exp", np.exp, "(x)", family="elementwise")


@defvjp("exp")
def exp_vjp(g, ans, x):
    return g * ans


@defjvp("exp", "x")
def exp_jvp(x_dot, ans, x):
    return x_dot * ans


defprim("expm1", np.expm1, "(x)", family="elementwise")


@defvjp("expm1")
def expm1_vjp(g, ans, x):
    return g * (ans + 1)


@defjvp("expm1", "x")
def expm1_jvp(x_dot, ans, x):
    return x_dot * (ans + 1)


defprim("log", np.log, "(x)", family="elementwise")


@defvjp("log")
def log_vjp(g, ans, x):
    return g / x


@defjvp("log", "x")
def log_jvp(x_dot, ans, x):
    return x_dot / x


defprim("log1p", np.log1p, "(x)", family="elementwise")


@defvjp("log1p")
def log1p_vjp(g, ans, x):
    return g / (1 + x)


@defjvp("log1p", "x")
def log1p_jvp(x_dot, ans, x):
    return x_dot / (1 + x)


defprim("log2", np.log2, "(x)", family="elementwise")


@defvjp("log2")
def log2_vjp(g, ans, x):
    return g / (x * np.log(2))


@defjvp("log2", "x")
def log2_jvp(x_dot, ans, x):
    return x_dot / (x * np.log(2))


defprim("log10", np.log10, "(x)", family="elementwise")


@defvjp("log10")
def log10_vjp(g, ans, x):
    return g / (x * np.log(10))


@defjvp("log10", "x")
def log10_jvp(x_dot, ans, x):
    return x_dot / (x * np.log(10))


# ---- powers and roots -----------------------------------------------------------

defprim("sqrt", np.sqrt, "(x)", family="elementwise", note="sqrt'(0) = inf, as in JAX")


@defvjp("sqrt")
def sqrt_vjp(g, ans, x):
    return g / (2 * ans)


@defjvp("sqrt", "x")
def sqrt_jvp(x_dot, ans, x):
    return x_dot / (2 * ans)


defprim("square", np.square, "(x)", family="elementwise")


@defvjp("square")
def square_vjp(g, ans, x):
    return g * (2 * x)


@defjvp("square", "x")
def square_jvp(x_dot, ans, x):
    return x_dot * (2 * x)


defprim("reciprocal", np.reciprocal, "(x)", family="elementwise")


@defvjp("reciprocal")
def reciprocal_vjp(g, ans, x):
    return -g * ans**2


@defjvp("reciprocal", "x")
def reciprocal_jvp(x_dot, ans, x):
    return -x_dot * ans**2


# ---- sign and magnitude ---------------------------------------------------------

defprim(
    "absolute",
    np.absolute,
    "(x)",
    family="elementwise",
    aliases=(abs, operator.abs),
    note="abs'(0) = 1, JAX's convention for real x, and +-1 at +-inf as JAX's (not "
    "inf / inf); of a complex x the derivative is conj(x) / |x| (JAX's convention), "
    "0 at x = 0 as JAX's (it was 1 until probe 13: a spectrum's zero bin); at a real "
    "NaN it is -1, JAX's (so a cotangent of 0 there, np.nansum's, gives 0, not NaN)",
)


# conj(x) / |x|: sign(x) for a real x; written with x itself (not np.sign, which
# carries no derivative) so that second derivatives through a complex x are right;
# at |x| = inf, where x / |x| is inf / inf = NaN, np.sign(x) (JAX's +-1 for a real x);
# at a NaN, -1, JAX's select(x >= 0, 1, -1): np.nansum(np.abs(p - t)) with a NaN in t
# hands that element a zero cotangent, and 0 * NaN made its gradient NaN (JAX's is 0)
@defvjp("absolute")
def absolute_vjp(g, ans, x):
    return np.real(g) * np.where(ans == 0, 0.0 if np.iscomplexobj(x) else 1.0, np.where(
        np.isinf(ans), np.sign(x), np.where(
            np.isnan(ans), -1.0, np.conj(x) / np.where(ans == 0, 1.0, ans))))


@defjvp("absolute", "x")
def absolute_jvp(x_dot, ans, x):
    return np.real(x_dot * np.where(ans == 0, 0.0 if np.iscomplexobj(x) else 1.0, np.where(
        np.isinf(ans), np.sign(x), np.where(
            np.isnan(ans), -1.0, np.conj(x) / np.where(ans == 0, 1.0, ans)))))


def _negative_spelling(args, params):
    # a literal tuple or list (roll's shift read back from an emitted gradient) keeps
    # the call: Python's ``-(1, -2)`` is a TypeError, np.negative's an array
    try:
        value = ast.literal_eval(args[0])
    except (ValueError, SyntaxError):
        value = None
    if isinstance(value, (tuple, list)):
        return f"np.negative({args[0]})"
    return f"-{args[0]}"


defprim("negative", np.negative, "(x)", family="elementwise", spelling=_negative_spelling,
        aliases=(operator.neg,))


@defvjp("negative")
def negative_vjp(g, ans, x):
    return -g


deflinear("negative", "x")


defprim("positive", np.positive, "(x)", family="elementwise", spelling=prefix("+"),
        aliases=(operator.pos,))


@defvjp("positive")
def positive_vjp(g, ans, x):
    return g


@defjvp("positive", "x")
def positive_jvp(x_dot, ans, x):
    return x_dot


# ---- piecewise constant: no derivative flows (JAX's derivative is 0) -------------

for _name in ("sign", "floor", "ceil", "round", "rint", "trunc"):
    defprim(
        _name,
        getattr(np, _name),
        "(x)" if _name != "round" else "(x, decimals=0)",
        family="piecewise-constant",
        nondiff=True,
        # np.around is np.round by another name; x.round(2) is np.round(x, 2)
        aliases=(np.around,) if _name == "round" else (),
        methods=("round",) if _name == "round" else (),
        note="derivative is zero wherever it exists; no gradient flows (as JAX)"
        + ("; np.around and x.round(decimals) are np.round" if _name == "round" else ""),
    )


# ---- inverse hyperbolic -----------------------------------------------------------

defprim(
    "arcsinh", np.arcsinh, "(x)", family="elementwise", aliases=(math.asinh,),
)


@defvjp("arcsinh")
def arcsinh_vjp(g, ans, x):
    return g / np.sqrt(x**2 + 1)


@defjvp("arcsinh", "x")
def arcsinh_jvp(x_dot, ans, x):
    return x_dot / np.sqrt(x**2 + 1)


defprim(
    "arccosh", np.arccosh, "(x)", family="elementwise", aliases=(math.acosh,),
    note="arccosh'(1) = inf, as JAX",
)


@defvjp("arccosh")
def arccosh_vjp(g, ans, x):
    return g / np.sqrt(x**2 - 1)


@defjvp("arccosh", "x")
def arccosh_jvp(x_dot, ans, x):
    return x_dot / np.sqrt(x**2 - 1)


defprim(
    "arctanh", np.arctanh, "(x)", family="elementwise", aliases=(math.atanh,),
    note="arctanh'(+-1) = inf, as JAX",
)


# 1 / ((1 + x) (1 - x)), as JAX factors it: at the poles x = +-1 the second derivative
# is then JAX's nan (inf - inf) rather than a signed inf


@defvjp("arctanh")
def arctanh_vjp(g, ans, x):
    return g / (1 + x) / (1 - x)


@defjvp("arctanh", "x")
def arctanh_jvp(x_dot, ans, x):
    return x_dot / (1 + x) / (1 - x)


# ---- more exponentials, roots, angle units ----------------------------------------

defprim("exp2", np.exp2, "(x)", family="elementwise", aliases=(math.exp2,))


@defvjp("exp2")
def exp2_vjp(g, ans, x):
    return g * ans * np.log(2)


@defjvp("exp2", "x")
def exp2_jvp(x_dot, ans, x):
    return x_dot * ans * np.log(2)


defprim(
    "cbrt", np.cbrt, "(x)", family="elementwise", aliases=(math.cbrt,),
    note="cbrt'(0) = inf, as JAX",
)


# ans ** -2 / 3, as JAX writes it: at 0 the second derivative is then JAX's -inf
# (a product of infinities) rather than nan (inf / inf)


@defvjp("cbrt")
def cbrt_vjp(g, ans, x):
    return g * ans**-2.0 / 3


@defjvp("cbrt", "x")
def cbrt_jvp(x_dot, ans, x):
    return x_dot * ans**-2.0 / 3


# deg2rad and radians (rad2deg and degrees) are distinct ufuncs computing the same
# thing: each keeps its own name, so emitted code spells what the user wrote.
defprim("deg2rad", np.deg2rad, "(x)", family="elementwise")


@defvjp("deg2rad")
def deg2rad_vjp(g, ans, x):
    return g * (np.pi / 180)


@defjvp("deg2rad", "x")
def deg2rad_jvp(x_dot, ans, x):
    return x_dot * (np.pi / 180)


defprim("radians", np.radians, "(x)", family="elementwise", aliases=(math.radians,))


@defvjp("radians")
def radians_vjp(g, ans, x):
    return g * (np.pi / 180)


@defjvp("radians", "x")
def radians_jvp(x_dot, ans, x):
    return x_dot * (np.pi / 180)


defprim("rad2deg", np.rad2deg, "(x)", family="elementwise")


@defvjp("rad2deg")
def rad2deg_vjp(g, ans, x):
    return g * (180 / np.pi)


@defjvp("rad2deg", "x")
def rad2deg_jvp(x_dot, ans, x):
    return x_dot * (180 / np.pi)


defprim("degrees", np.degrees, "(x)", family="elementwise", aliases=(math.degrees,))


@defvjp("degrees")
def degrees_vjp(g, ans, x):
    return g * (180 / np.pi)


@defjvp("degrees", "x")
def degrees_jvp(x_dot, ans, x):
    return x_dot * (180 / np.pi)


defprim(
    "sinc", np.sinc, "(x)", family="elementwise",
    note="sinc(x) = sin(pi x) / (pi x); sinc'(0) = 0, as JAX",
)


# sinc'(x) = (cos(pi x) - sinc(x)) / x away from 0; at 0 (where the quotient would
# divide by zero) the Maclaurin series' derivatives, whose own derivative rule gives
# the next order: so Hessians and higher are right at 0 too

@defvjp("sinc")
def sinc_vjp(g, ans, x):
    at_zero = x == 0
    return g * np.where(at_zero, sinc_taylor(1, x),
                        (np.cos(np.pi * x) - ans) / np.where(at_zero, 1, x))


@defjvp("sinc", "x")
def sinc_jvp(x_dot, ans, x):
    at_zero = x == 0
    return x_dot * np.where(at_zero, sinc_taylor(1, x),
                            (np.cos(np.pi * x) - ans) / np.where(at_zero, 1, x))


defprim(
    "sinc_taylor", runtime.sinc_taylor, "(k, x)", family="elementwise",
    spelling=call_spelling("sinc_taylor"), diff=("x",),
    note="the k-th derivative of sinc at 0 (a constant); its derivative is the "
    "(k+1)-th, JAX's convention for sinc's derivatives at 0 (used there only)",
)


@defvjp("sinc_taylor")
def sinc_taylor_vjp(g, ans, k, x):
    return g * sinc_taylor(k + 1, x)


@defjvp("sinc_taylor", "x")
def sinc_taylor_jvp(x_dot, ans, k, x):
    return x_dot * sinc_taylor(k + 1, x)


defprim(
    "fabs", np.fabs, "(x)", family="elementwise",
    note="fabs'(0) = 1 (also at -0.0), JAX's convention",
)


@defvjp("fabs")
def fabs_vjp(g, ans, x):
    return np.where(x >= 0, g, -g)


@defjvp("fabs", "x")
def fabs_jvp(x_dot, ans, x):
    return np.where(x >= 0, x_dot, -x_dot)


# ---- predicates and truncation: no derivative flows (JAX's derivative is 0) --------

for _name, _alias in (
    ("signbit", None), ("isinf", math.isinf), ("isneginf", None),
    ("isposinf", None), ("iscomplex", None), ("isreal", None),
    ("iscomplexobj", None), ("isrealobj", None),
):
    defprim(
        _name, getattr(np, _name), "(x)", family="comparison", nondiff=True,
        aliases=(_alias,) if _alias is not None else (),
        note="boolean-valued: no derivative flows",
    )

defprim(
    "fix", np.fix, "(x)", family="elementwise", nondiff=True,
    note="rounds toward zero (as np.trunc): piecewise constant, no derivative flows "
    "(JAX's derivative is 0)",
)


# ---- complex parts, and cleaning non-finite values ---------------------------------
# JAX's convention (docs/complex.md): a cotangent g pairs with a tangent t as
# Re(sum(g * t)), without conjugation, so a complex-linear map's transpose is its plain
# transpose; a real value's cotangent is real (unbroadcast takes the real part where
# the operand is real).

defprim("real", np.real, "(val)", family="elementwise", attributes=("real",),
        note="the real part; of a real array the identity")


@defvjp("real")
def real_vjp(g, ans, val):
    return np.real(g)


@defjvp("real", "val")
def real_jvp(val_dot, ans, val):
    return np.real(val_dot)


defprim("conjugate", np.conjugate, "(x)", family="elementwise", aliases=(np.conj,),
        methods=("conj", "conjugate"), note="of a real array the identity")


@defvjp("conjugate")
def conjugate_vjp(g, ans, x):
    return np.conj(g)


@defjvp("conjugate", "x")
def conjugate_jvp(x_dot, ans, x):
    return np.conj(x_dot)


defprim("imag", np.imag, "(val)", family="elementwise", attributes=("imag",),
        note="the imaginary part; of a real array zero (JAX's cotangent -1j * g)")


# Re(g * imag(t)) = Re(-1j * g * t): the cotangent -1j * g, real part 0 for a real val
@defvjp("imag")
def imag_vjp(g, ans, val):
    return unbroadcast(-1j * np.real(g), val)


@defjvp("imag", "val")
def imag_jvp(val_dot, ans, val):
    return np.imag(val_dot)


defprim("angle", np.angle, "(z, deg=False)", diff=("z",), family="elementwise",
        note="arg z = Im(log z): d angle = Im(dz / z), cotangent -1j * g / z (JAX's); "
        "derivative 0 of a real z, NaN at 0 as JAX")


@defvjp("angle")
def angle_vjp(g, ans, z, deg=False):
    g = np.real(g)
    if deg:
        g = g * (180 / np.pi)
    return unbroadcast(-1j * g / z, z)


@defjvp("angle", "z")
def angle_jvp(z_dot, ans, z, deg=False):
    if deg:
        z_dot = z_dot * (180 / np.pi)
    return np.imag(z_dot / z)


defprim("real_if_close", np.real_if_close, "(a, tol=100)", diff=("a",),
        family="elementwise",
        note="the real part where every imaginary part is within tol (a real result: "
        "np.real's derivative), else the identity; JAX has no real_if_close")


@defvjp("real_if_close")
def real_if_close_vjp(g, ans, a, tol=100):
    return g


@defjvp("real_if_close", "a")
def real_if_close_jvp(a_dot, ans, a, tol=100):
    if np.iscomplexobj(ans):
        return a_dot
    return np.real(a_dot)


defprim(
    "nan_to_num", np.nan_to_num, "(x, copy=True, nan=0.0, posinf=None, neginf=None)",
    diff=("x",), family="elementwise",
    note="derivative 1 where x is finite, 0 where a NaN or infinity was replaced, "
    "as JAX",
)


@defvjp("nan_to_num")
def nan_to_num_vjp(g, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    return np.where(np.isfinite(x), g, 0.0)


@defjvp("nan_to_num", "x")
def nan_to_num_jvp(x_dot, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    return np.where(np.isfinite(x), x_dot, 0.0)


defprim(
    "unwrap", np.unwrap, "(p, discont=None, axis=-1, period=6.283185307179586)",
    diff=("p",), family="elementwise", batch="along_last_axis",
    note="p plus whole periods chosen by comparisons (piecewise constant): the "
    "derivative is the identity, as JAX; batched with its axis moved",
)


@defvjp("unwrap")
def unwrap_vjp(g, ans, p, discont=None, axis=-1, period=6.283185307179586):
    return g


@defjvp("unwrap", "p")
def unwrap_jvp(p_dot, ans, p, discont=None, axis=-1, period=6.283185307179586):
    return p_dot


defprim(
    "modf", np.modf, "(x)", family="elementwise", results=2,
    note="(fractional part, integral part): derivatives 1 and 0 (trunc), as JAX",
)


@defvjp("modf")
def modf_vjp(g, ans, x):
    return g[0]


@defjvp("modf", "x")
def modf_jvp(x_dot, ans, x):
    return x_dot, np.zeros_like(x_dot)
