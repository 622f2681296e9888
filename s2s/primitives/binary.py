"""Binary arithmetic with NumPy broadcasting, and ``where``.

A broadcasting operator's cotangent for each operand is summed back to that operand's
shape by ``unbroadcast``; that is the only place broadcasting is undone.
"""

import math
import operator

import numpy as np

from ..ir.nodes import Const, Let, Var
from ..ir.spelling import atom_text
from ..runtime import unbroadcast
from .batching import Batch, NoBatchRule, _with_batch, args_text, batch_rule, broadcasting, operand
from .registry import (
    Refused,
    call_spelling,
    defbilinear,
    defjvp,
    deflinear,
    defprim,
    defvjp,
    infix,
    is_integer_constant,
    is_number_constant,
)

defprim(
    "add", np.add, "(x1, x2)", family="binary", spelling=infix("+"),
    aliases=(operator.add,),
)


@defvjp("add")
def add_vjp(g, ans, x1, x2):
    return unbroadcast(g, x1), unbroadcast(g, x2)


@defjvp("add", "x1")
def add_jvp_x1(x1_dot, ans, x1, x2):
    return x1_dot


@defjvp("add", "x2")
def add_jvp_x2(x2_dot, ans, x1, x2):
    return x2_dot


defprim(
    "subtract", np.subtract, "(x1, x2)", family="binary", spelling=infix("-"),
    aliases=(operator.sub,),
)


@defvjp("subtract")
def subtract_vjp(g, ans, x1, x2):
    return unbroadcast(g, x1), unbroadcast(-g, x2)


@defjvp("subtract", "x1")
def subtract_jvp_x1(x1_dot, ans, x1, x2):
    return x1_dot


@defjvp("subtract", "x2")
def subtract_jvp_x2(x2_dot, ans, x1, x2):
    return -x2_dot


defprim(
    "multiply", np.multiply, "(x1, x2)", family="binary", spelling=infix("*"),
    aliases=(operator.mul,),
)


@defvjp("multiply")
def multiply_vjp(g, ans, x1, x2):
    return unbroadcast(g * x2, x1), unbroadcast(g * x1, x2)


defbilinear("multiply", "x1", "x2")


defprim(
    "divide", np.divide, "(x1, x2)", family="binary", spelling=infix("/"),
    aliases=(operator.truediv,),
)


@defvjp("divide")
def divide_vjp(g, ans, x1, x2):
    return unbroadcast(g / x2, x1), unbroadcast(-g * ans / x2, x2)


deflinear("divide", "x1")


@defjvp("divide", "x2")
def divide_jvp_x2(x2_dot, ans, x1, x2):
    return -x2_dot * ans / x2


defprim(
    "power", np.power, "(x1, x2)", family="binary", spelling=infix("**"),
    aliases=(operator.pow,),
    note="x ** k for a constant integer k is a polynomial: its derivative at 0 is "
    "finite (0 for k > 1), as JAX's integer_pow; an exponent known only at run time "
    "(an argument, a loop's k) has k * x ** (k - 1) with the exponent k - 1 kept at 0 "
    "where k = 0, so 0 (not 0 * inf) at x = 0, as JAX's pow of an integer exponent, "
    "to every order (a run-time float k = 0.0 too, where JAX's float pow is NaN; "
    "x ** 0.0 known now is JAX's NaN); d/dx2 uses log(x1) with x1 = 0 replaced by 1, "
    "as JAX",
)


@defvjp("power")
def power_vjp(g, ans, x1, x2):
    if is_integer_constant(x2) and x2 == 0:
        x1_bar = np.zeros_like(g * x1)
    elif is_integer_constant(x2) and x2 == 1:
        x1_bar = g
    elif is_integer_constant(x2) and x2 == 2:
        x1_bar = g * (2 * x1)
    elif is_integer_constant(x2) and x2 > 2:  # a polynomial: ** never divides
        x1_bar = g * (x2 * x1 ** (x2 - 1))
    elif is_number_constant(x2):  # np.power: a Python-float 0.0 ** -0.5 is inf (** raises)
        x1_bar = g * (x2 * np.power(x1, x2 - 1))  # (x ** 0.0: NaN at 0, as JAX's float pow)
    else:  # k known at run time: where k = 0, k * x ** 0 is 0 (x ** -1 is inf at 0)
        x1_bar = g * (x2 * np.power(x1, x2 - (x2 != 0)))
    x2_bar = g * ans * np.log(np.where(x1 == 0, 1, x1))
    return unbroadcast(x1_bar, x1), unbroadcast(x2_bar, x2)


@defjvp("power", "x1")
def power_jvp_x1(x1_dot, ans, x1, x2):
    if is_integer_constant(x2) and x2 == 0:
        return np.zeros_like(x1_dot * x1)
    if is_integer_constant(x2) and x2 == 1:
        return x1_dot
    if is_integer_constant(x2) and x2 == 2:
        return x1_dot * (2 * x1)
    if is_integer_constant(x2) and x2 > 2:  # a polynomial: ** never divides
        return x1_dot * (x2 * x1 ** (x2 - 1))
    if is_number_constant(x2):
        return x1_dot * (x2 * np.power(x1, x2 - 1))
    return x1_dot * (x2 * np.power(x1, x2 - (x2 != 0)))  # (0, not 0 * inf, at k = 0)


@defjvp("power", "x2")
def power_jvp_x2(x2_dot, ans, x1, x2):
    return x2_dot * ans * np.log(np.where(x1 == 0, 1, x1))


# np.power(x1, x2) written as a call stays a call: on Python floats ``0.0 ** -1.0``
# raises ZeroDivisionError where np.power gives inf (the rules above use np.power)
defprim(
    "numpy.power", np.power, "(x1, x2)", family="binary",
    spelling=call_spelling("np.power"),
    note="power's rules; spelled np.power, so Python floats keep NumPy's semantics",
)
defvjp("numpy.power")(power_vjp)
defjvp("numpy.power", "x1")(power_jvp_x1)
defjvp("numpy.power", "x2")(power_jvp_x2)


defprim(
    "maximum", np.maximum, "(x1, x2)", family="binary",
    note="where x1 == x2 each side gets half the cotangent, as JAX",
)


@defvjp("maximum")
def maximum_vjp(g, ans, x1, x2):
    # minimum shares these rules: only which side equals ``ans`` matters
    x1_share = np.where(x1 == ans, np.where(x2 == ans, 0.5, 1.0), 0.0)
    x2_share = np.where(x2 == ans, np.where(x1 == ans, 0.5, 1.0), 0.0)
    return unbroadcast(g * x1_share, x1), unbroadcast(g * x2_share, x2)


@defjvp("maximum", "x1")
def maximum_jvp_x1(x1_dot, ans, x1, x2):
    # the share in ans's dtype, as JAX's: 0.5 and 1.0 alone make float64 (a float32
    # tangent batched by jacfwd would be promoted)
    share = np.where(x1 == ans, np.where(x2 == ans, 0.5, 1.0), 0.0)
    return x1_dot * share.astype(ans.dtype)


@defjvp("maximum", "x2")
def maximum_jvp_x2(x2_dot, ans, x1, x2):
    # the share in ans's dtype, as JAX's: 0.5 and 1.0 alone make float64 (a float32
    # tangent batched by jacfwd would be promoted)
    share = np.where(x2 == ans, np.where(x1 == ans, 0.5, 1.0), 0.0)
    return x2_dot * share.astype(ans.dtype)


defprim(
    "minimum", np.minimum, "(x1, x2)", family="binary",
    note="where x1 == x2 each side gets half the cotangent, as JAX",
)


# The same rules as maximum's: each side's share is decided by equality with the output.
defvjp("minimum")(maximum_vjp)
defjvp("minimum", "x1")(maximum_jvp_x1)
defjvp("minimum", "x2")(maximum_jvp_x2)


defprim("where", np.where, "(condition, x, y)", diff=("x", "y"), family="binary")


@defvjp("where")
def where_vjp(g, ans, condition, x, y):
    return (
        unbroadcast(np.where(condition, g, 0), x),
        unbroadcast(np.where(condition, 0, g), y),
    )


@defjvp("where", "x")
def where_jvp_x(x_dot, ans, condition, x, y):
    return np.where(condition, x_dot, 0)


@defjvp("where", "y")
def where_jvp_y(y_dot, ans, condition, x, y):
    return np.where(condition, 0, y_dot)


@batch_rule("where")
def where_rule(b: Batch, s: Let) -> str:
    return broadcasting(b, s)


# ---- comparisons and integer arithmetic: no derivative flows --------------------

for _name, _op, _pyop in (
    ("less", "<", operator.lt),
    ("less_equal", "<=", operator.le),
    ("greater", ">", operator.gt),
    ("greater_equal", ">=", operator.ge),
    ("equal", "==", operator.eq),
    ("not_equal", "!=", operator.ne),
    ("floor_divide", "//", operator.floordiv),
):
    defprim(
        _name, getattr(np, _name), "(x1, x2)", family="comparison",
        spelling=infix(_op), nondiff=True, aliases=(_pyop,),
        note="boolean or integer-valued: no derivative flows",
    )


# ---- logarithms of sums, angles, magnitudes ---------------------------------------

defprim(
    "logaddexp", np.logaddexp, "(x1, x2)", family="binary",
    note="exp(x - ans) for each side, an operand at ans = +inf weighing 1 (not inf - "
    "inf, NaN: JAX's 1 too); the other operand's weight exp(x - inf) is 0, the limit "
    "(JAX gives 1 for a finite one: it replaces the +inf in ans by 0); at x1 = x2 = "
    "-inf NaN, as JAX; at x1 = x2 = +inf 1 and 1, as JAX",
)


@defvjp("logaddexp")
def logaddexp_vjp(g, ans, x1, x2):
    at_inf = np.isposinf(ans)
    w1 = np.exp(np.where(at_inf & (x1 == ans), 0.0, x1 - ans))
    w2 = np.exp(np.where(at_inf & (x2 == ans), 0.0, x2 - ans))
    return unbroadcast(g * w1, x1), unbroadcast(g * w2, x2)


@defjvp("logaddexp", "x1")
def logaddexp_jvp_x1(x1_dot, ans, x1, x2):
    return x1_dot * np.exp(np.where(np.isposinf(ans) & (x1 == ans), 0.0, x1 - ans))


@defjvp("logaddexp", "x2")
def logaddexp_jvp_x2(x2_dot, ans, x1, x2):
    return x2_dot * np.exp(np.where(np.isposinf(ans) & (x2 == ans), 0.0, x2 - ans))


defprim(
    "logaddexp2", np.logaddexp2, "(x1, x2)", family="binary",
    note="2 ** (x - ans) for each side, an operand at ans = +inf weighing 1 and the "
    "other 0 (as logaddexp); at x1 = x2 = -inf NaN, as JAX",
)


@defvjp("logaddexp2")
def logaddexp2_vjp(g, ans, x1, x2):
    at_inf = np.isposinf(ans)
    w1 = np.exp2(np.where(at_inf & (x1 == ans), 0.0, x1 - ans))
    w2 = np.exp2(np.where(at_inf & (x2 == ans), 0.0, x2 - ans))
    return unbroadcast(g * w1, x1), unbroadcast(g * w2, x2)


@defjvp("logaddexp2", "x1")
def logaddexp2_jvp_x1(x1_dot, ans, x1, x2):
    return x1_dot * np.exp2(np.where(np.isposinf(ans) & (x1 == ans), 0.0, x1 - ans))


@defjvp("logaddexp2", "x2")
def logaddexp2_jvp_x2(x2_dot, ans, x1, x2):
    return x2_dot * np.exp2(np.where(np.isposinf(ans) & (x2 == ans), 0.0, x2 - ans))


defprim(
    "arctan2", np.arctan2, "(x1, x2)", family="binary", aliases=(math.atan2,),
    note="NaN for both operands at x1 = x2 = 0, as JAX",
)


@defvjp("arctan2")
def arctan2_vjp(g, ans, x1, x2):
    g_scaled = g / (x1**2 + x2**2)
    return unbroadcast(g_scaled * x2, x1), unbroadcast(-g_scaled * x1, x2)


@defjvp("arctan2", "x1")
def arctan2_jvp_x1(x1_dot, ans, x1, x2):
    return x1_dot * x2 / (x1**2 + x2**2)


@defjvp("arctan2", "x2")
def arctan2_jvp_x2(x2_dot, ans, x1, x2):
    return -x2_dot * x1 / (x1**2 + x2**2)


defprim(
    "hypot", np.hypot, "(x1, x2)", family="binary", aliases=(math.hypot,),
    note="x / ans for each side; at x1 = x2 = 0 each side gets half, as JAX; where "
    "a side is inf, JAX's: NaN for both sides in reverse mode, 0 in forward mode",
)


@defvjp("hypot")
def hypot_vjp(g, ans, x1, x2):
    # at an infinite side both sides NaN: JAX's (its where's other branch, x1 * sqrt(1
    # + (x2 / x1) ** 2) at x1 = inf, passes 0 * inf back to both); a factor, not a
    # where, so that its derivative is NaN there too (JAX's Hessian)
    safe_ans = np.where(ans == 0, 1, ans)
    nan_at_inf = np.where(np.isinf(x1) | np.isinf(x2), np.nan, 1.0)
    x1_bar = g * np.where(ans == 0, 0.5, x1 / safe_ans * nan_at_inf)
    x2_bar = g * np.where(ans == 0, 0.5, x2 / safe_ans * nan_at_inf)
    return unbroadcast(x1_bar, x1), unbroadcast(x2_bar, x2)


@defjvp("hypot", "x1")
def hypot_jvp_x1(x1_dot, ans, x1, x2):
    # at an infinite side 0: JAX's (the tangent of its where's constant inf)
    at_inf = np.isinf(x1) | np.isinf(x2)
    share = np.where(ans == 0, 0.5, x1 / np.where((ans == 0) | at_inf, 1, ans))
    return x1_dot * np.where(at_inf, 0.0, share)


@defjvp("hypot", "x2")
def hypot_jvp_x2(x2_dot, ans, x1, x2):
    at_inf = np.isinf(x1) | np.isinf(x2)
    share = np.where(ans == 0, 0.5, x2 / np.where((ans == 0) | at_inf, 1, ans))
    return x2_dot * np.where(at_inf, 0.0, share)


defprim(
    "copysign", np.copysign, "(x1, x2)", diff=("x1",), family="binary",
    aliases=(math.copysign,),
    note="d/dx1 is abs'(x1) (1 at x1 = 0, as JAX) times x2's sign bit; no derivative "
    "flows to x2 (piecewise constant), as JAX",
)


@defvjp("copysign")
def copysign_vjp(g, ans, x1, x2):
    # a local, not a returned unbroadcast(...): x2 may broadcast x1 too
    x1_bar = unbroadcast(np.where(x1 >= 0, g, -g) * np.copysign(1.0, x2), x1)
    return x1_bar


@defjvp("copysign", "x1")
def copysign_jvp_x1(x1_dot, ans, x1, x2):
    return np.where(x1 >= 0, x1_dot, -x1_dot) * np.copysign(1.0, x2)


# ---- remainders ---------------------------------------------------------------------

defprim(
    "remainder", np.remainder, "(x1, x2)", family="binary", aliases=(operator.mod,),
    spelling=infix("%"),  # (as written: of two ints an int, as Python's; np.remainder's
    # is a NumPy int, which turned a float32 result float64)
    note="np.mod is the same ufunc; x1 - floor(x1 / x2) * x2, so d/dx2 is "
    "-floor_divide(x1, x2), as JAX",
)


@defvjp("remainder")
def remainder_vjp(g, ans, x1, x2):
    return unbroadcast(g, x1), unbroadcast(-g * np.floor_divide(x1, x2), x2)


@defjvp("remainder", "x1")
def remainder_jvp_x1(x1_dot, ans, x1, x2):
    return np.broadcast_to(x1_dot, np.shape(ans))


@defjvp("remainder", "x2")
def remainder_jvp_x2(x2_dot, ans, x1, x2):
    return -x2_dot * np.floor_divide(x1, x2)


defprim(
    "fmod", np.fmod, "(x1, x2)", family="binary", aliases=(math.fmod,),
    note="x1 - trunc(x1 / x2) * x2, so d/dx2 is -trunc(x1 / x2), as JAX",
)


@defvjp("fmod")
def fmod_vjp(g, ans, x1, x2):
    return unbroadcast(g, x1), unbroadcast(-g * np.trunc(x1 / x2), x2)


@defjvp("fmod", "x1")
def fmod_jvp_x1(x1_dot, ans, x1, x2):
    return np.broadcast_to(x1_dot, np.shape(ans))


@defjvp("fmod", "x2")
def fmod_jvp_x2(x2_dot, ans, x1, x2):
    return -x2_dot * np.trunc(x1 / x2)


# ---- NaN-ignoring maximum and minimum -----------------------------------------------

defprim(
    "fmax", np.fmax, "(x1, x2)", family="binary",
    note="as JAX: x1's where x1 > x2 or x2 is NaN, else x2's (ties go to x2, unlike "
    "maximum)",
)


@defvjp("fmax")
def fmax_vjp(g, ans, x1, x2):
    from_x1 = (x1 > x2) | np.isnan(x2)
    return (
        unbroadcast(np.where(from_x1, g, 0), x1),
        unbroadcast(np.where(from_x1, 0, g), x2),
    )


@defjvp("fmax", "x1")
def fmax_jvp_x1(x1_dot, ans, x1, x2):
    return np.where((x1 > x2) | np.isnan(x2), x1_dot, 0)


@defjvp("fmax", "x2")
def fmax_jvp_x2(x2_dot, ans, x1, x2):
    return np.where((x1 > x2) | np.isnan(x2), 0, x2_dot)


defprim(
    "fmin", np.fmin, "(x1, x2)", family="binary",
    note="as JAX: x1's where x1 < x2 or x2 is NaN, else x2's (ties go to x2, unlike "
    "minimum)",
)


@defvjp("fmin")
def fmin_vjp(g, ans, x1, x2):
    from_x1 = (x1 < x2) | np.isnan(x2)
    return (
        unbroadcast(np.where(from_x1, g, 0), x1),
        unbroadcast(np.where(from_x1, 0, g), x2),
    )


@defjvp("fmin", "x1")
def fmin_jvp_x1(x1_dot, ans, x1, x2):
    return np.where((x1 < x2) | np.isnan(x2), x1_dot, 0)


@defjvp("fmin", "x2")
def fmin_jvp_x2(x2_dot, ans, x1, x2):
    return np.where((x1 < x2) | np.isnan(x2), 0, x2_dot)


# ---- powers in float64, clipping, step ----------------------------------------------

defprim(
    "float_power", np.float_power, "(x1, x2)", family="binary",
    note="as JAX's pow: d/dx1 = x2 * x1 ** (x2 - 1) (NaN at 0 ** 0); d/dx2 uses "
    "log(x1) with x1 = 0 replaced by 1",
)


@defvjp("float_power")
def float_power_vjp(g, ans, x1, x2):
    x1_bar = g * x2 * np.float_power(x1, x2 - 1)
    x2_bar = g * ans * np.log(np.where(x1 == 0, 1, x1))
    return unbroadcast(x1_bar, x1), unbroadcast(x2_bar, x2)


@defjvp("float_power", "x1")
def float_power_jvp_x1(x1_dot, ans, x1, x2):
    return x1_dot * x2 * np.float_power(x1, x2 - 1)


@defjvp("float_power", "x2")
def float_power_jvp_x2(x2_dot, ans, x1, x2):
    return x2_dot * ans * np.log(np.where(x1 == 0, 1, x1))


def _clip_bounds(args, kwargs):
    """NumPy 2.1's keywords ``min=``/``max=`` are ``a_min``/``a_max``; a bound not
    given is None (``np.clip(x, max=1.0)``), as NumPy's."""
    for short, long, place in (("min", "a_min", 1), ("max", "a_max", 2)):
        if short in kwargs:
            if long in kwargs or len(args) > place:
                raise Refused(f"`{short}=` and `{long}` both given (NumPy refuses it too)",
                              f"give the bound once: {short}=...")
            kwargs[long] = kwargs.pop(short)
    if len(args) < 2 and "a_min" not in kwargs:
        kwargs["a_min"] = Const(None, "None")
    if len(args) < 3 and "a_max" not in kwargs:
        kwargs["a_max"] = Const(None, "None")
    return args, kwargs


defprim(
    "clip", np.clip, "(a, a_min, a_max)", family="binary", methods=("clip",),
    canonical=_clip_bounds,
    note="as JAX's minimum(a_max, maximum(a_min, a)): the gradient passes to a "
    "strictly inside the bounds, to the bound that is hit outside; at a boundary "
    "tie each side gets half; a_min or a_max may be None; NumPy 2.1's min=/max= "
    "are a_min/a_max",
)


@defvjp("clip")
def clip_vjp(g, ans, a, a_min, a_max):
    # ans = minimum(a_max, lifted) with lifted = maximum(a_min, a); each tie shares
    if a_min is None:
        lifted = a
        a_share = 1.0
    else:
        lifted = np.maximum(a_min, a)
        a_share = np.where(a == lifted, np.where(a_min == lifted, 0.5, 1.0), 0.0)
    if a_max is None:
        lifted_share = 1.0
    else:
        lifted_share = np.where(lifted == ans, np.where(a_max == ans, 0.5, 1.0), 0.0)
    g_lifted = g * lifted_share
    a_min_share = np.where(a_min == lifted, np.where(a == lifted, 0.5, 1.0), 0.0)
    a_max_share = np.where(a_max == ans, np.where(lifted == ans, 0.5, 1.0), 0.0)
    return (
        unbroadcast(g_lifted * a_share, a),
        unbroadcast(g_lifted * a_min_share, a_min),
        unbroadcast(g * a_max_share, a_max),
    )


@defjvp("clip", "a")
def clip_jvp_a(a_dot, ans, a, a_min, a_max):
    if a_min is None:
        lifted = a
        a_share = 1.0
    else:
        lifted = np.maximum(a_min, a)
        a_share = np.where(a == lifted, np.where(a_min == lifted, 0.5, 1.0), 0.0)
    if a_max is None:
        lifted_share = 1.0
    else:
        lifted_share = np.where(lifted == ans, np.where(a_max == ans, 0.5, 1.0), 0.0)
    return np.broadcast_to(a_dot * a_share * lifted_share, np.shape(ans))


@defjvp("clip", "a_min")
def clip_jvp_a_min(a_min_dot, ans, a, a_min, a_max):
    lifted = np.maximum(a_min, a)
    a_min_share = np.where(a_min == lifted, np.where(a == lifted, 0.5, 1.0), 0.0)
    if a_max is None:
        lifted_share = 1.0
    else:
        lifted_share = np.where(lifted == ans, np.where(a_max == ans, 0.5, 1.0), 0.0)
    return np.broadcast_to(a_min_dot * a_min_share * lifted_share, np.shape(ans))


@defjvp("clip", "a_max")
def clip_jvp_a_max(a_max_dot, ans, a, a_min, a_max):
    if a_min is None:
        lifted = a
    else:
        lifted = np.maximum(a_min, a)
    return a_max_dot * np.where(a_max == ans, np.where(lifted == ans, 0.5, 1.0), 0.0)


defprim(
    "heaviside", np.heaviside, "(x1, x2)", diff=("x2",), family="binary",
    note="piecewise constant in x1 (no derivative flows to x1); its value at x1 == 0 "
    "is x2, so d/dx2 is 1 there and 0 elsewhere, as JAX",
)


@defvjp("heaviside")
def heaviside_vjp(g, ans, x1, x2):
    # a local, not a returned unbroadcast(...): x1 may broadcast x2 too
    x2_bar = unbroadcast(np.where(x1 == 0, g, 0), x2)
    return x2_bar


@defjvp("heaviside", "x2")
def heaviside_jvp_x2(x2_dot, ans, x1, x2):
    return np.where(x1 == 0, x2_dot, 0)


# ---- scaling by a power of two ----------------------------------------------------

defprim(
    "ldexp", np.ldexp, "(x1, x2)", diff=("x1",), family="binary",
    note="x1 * 2**x2 with integer x2 (no derivative): exact, in x1's dtype",
)


@defvjp("ldexp")
def ldexp_vjp(g, ans, x1, x2):
    return unbroadcast(np.ldexp(g, x2), x1)


deflinear("ldexp", "x1")


# ---- piecewise-linear interpolation -----------------------------------------------
# As JAX: x lies in segment i = clip(searchsorted(xp, x, 'right'), 1, n - 1), so at a
# knot the segment to its right is used (the last knot: the last segment); outside
# [xp[0], xp[-1]] the value is left/right (fp[0]/fp[-1] by default), constant in x and
# xp.  f = fp[i-1] (1 - t) + fp[i] t, t = (x - xp[i-1]) / (xp[i] - xp[i-1]); a segment
# of zero width gives fp[i-1].  Cotangents for fp and xp are gathered per knot with a
# one-hot matrix (knots == i), the transpose of np.take.

defprim(
    "interp", np.interp, "(x, xp, fp, left=None, right=None)", diff=("x", "xp", "fp"),
    family="binary",
    note="1-D xp (increasing) and fp; no period; left/right constants.  At a knot the "
    "right-hand segment's slope, 0 outside the knots, as JAX",
)


@defvjp("interp")
def interp_vjp(g, ans, x, xp, fp, left=None, right=None):
    n = np.size(xp)
    i = np.clip(np.searchsorted(xp, x, side="right"), 1, n - 1)
    width = np.take(xp, i) - np.take(xp, i - 1)
    flat = width == 0
    width = np.where(flat, 1.0, width)
    t = np.where(flat, 0.0, (x - np.take(xp, i - 1)) / width)
    slope = np.where(flat, 0.0, (np.take(fp, i) - np.take(fp, i - 1)) / width)
    inside = np.logical_and(x >= np.take(xp, 0), x <= np.take(xp, n - 1))
    g_in = np.where(inside, g, 0.0)
    knots = np.arange(n)
    at_low = np.expand_dims(i - 1, -1) == knots
    at_high = np.expand_dims(i, -1) == knots
    to_fp = np.expand_dims(g_in * (1.0 - t), -1) * at_low
    to_fp = to_fp + np.expand_dims(g_in * t, -1) * at_high
    if left is None:
        below = np.expand_dims(g * (x < np.take(xp, 0)), -1)
        to_fp = to_fp + below * (knots == 0)
    if right is None:
        above = np.expand_dims(g * (x > np.take(xp, n - 1)), -1)
        to_fp = to_fp + above * (knots == n - 1)
    to_xp = np.expand_dims(g_in * slope * (t - 1.0), -1) * at_low - np.expand_dims(
        g_in * slope * t, -1) * at_high
    fp_bar = np.sum(np.reshape(to_fp, (-1, n)), axis=0)
    xp_bar = np.sum(np.reshape(to_xp, (-1, n)), axis=0)
    return g_in * slope, xp_bar, fp_bar


@defjvp("interp", "x")
def interp_jvp_x(x_dot, ans, x, xp, fp, left=None, right=None):
    n = np.size(xp)
    i = np.clip(np.searchsorted(xp, x, side="right"), 1, n - 1)
    width = np.take(xp, i) - np.take(xp, i - 1)
    flat = width == 0
    slope = np.where(flat, 0.0, (np.take(fp, i) - np.take(fp, i - 1)) / np.where(
        flat, 1.0, width))
    inside = np.logical_and(x >= np.take(xp, 0), x <= np.take(xp, n - 1))
    return np.where(inside, x_dot * slope, 0.0)


@defjvp("interp", "xp")
def interp_jvp_xp(xp_dot, ans, x, xp, fp, left=None, right=None):
    n = np.size(xp)
    i = np.clip(np.searchsorted(xp, x, side="right"), 1, n - 1)
    width = np.take(xp, i) - np.take(xp, i - 1)
    flat = width == 0
    width = np.where(flat, 1.0, width)
    t = np.where(flat, 0.0, (x - np.take(xp, i - 1)) / width)
    slope = np.where(flat, 0.0, (np.take(fp, i) - np.take(fp, i - 1)) / width)
    inside = np.logical_and(x >= np.take(xp, 0), x <= np.take(xp, n - 1))
    moved = (t - 1.0) * np.take(xp_dot, i - 1) - t * np.take(xp_dot, i)
    return np.where(inside, slope * moved, 0.0)


@defjvp("interp", "fp")
def interp_jvp_fp(fp_dot, ans, x, xp, fp, left=None, right=None):
    if left is not None:
        left = 0.0
    if right is not None:
        right = 0.0
    return np.interp(x, xp, fp_dot, left, right)


@batch_rule("interp")
def interp_rule(b: Batch, s: Let) -> str:
    """Unbatched knots: np.interp works elementwise in x.  Knots that differ per
    example: each x's segment counted per example (``sum(xp <= x)``), its ends read
    with one-hot sums, and JAX's formula written out."""
    x, xp, fp = s.args[:3]
    if not (b.batched(xp) or b.batched(fp)):
        return args_text(s, [atom_text(a) for a in s.args])
    left, right = operand(s, "left"), operand(s, "right")
    if any(isinstance(e, Var) and b.batched(e) for e in (left, right)):
        raise NoBatchRule("np.interp with left/right values that differ per example")
    n, r, t = b.use_batch_size(), b.rank(x), s.target
    shape = f"({n},{' 1,' * r} -1)"
    xs = f"np.expand_dims({_with_batch(b, x)}, -1)"
    knots_x = f"np.reshape({_with_batch(b, xp)}, {shape})"
    knots_f = f"np.reshape({_with_batch(b, fp)}, {shape})"
    count = f"np.shape({knots_x})[-1]"
    seg = f"np.clip(np.sum({knots_x} <= {xs}, axis=-1), 1, {count} - 1)"
    low = f"(np.arange({count}) == np.expand_dims({seg} - 1, -1))"
    high = f"(np.arange({count}) == np.expand_dims({seg}, -1))"
    x0, f0 = f"np.sum({knots_x} * ({t}_lo := {low}), axis=-1)", \
        f"np.sum({knots_f} * {t}_lo, axis=-1)"
    x1, f1 = f"np.sum({knots_x} * ({t}_hi := {high}), axis=-1)", \
        f"np.sum({knots_f} * {t}_hi, axis=-1)"
    width = f"(({t}_w := {x1} - ({t}_x0 := {x0})) == 0)"
    body = (f"np.where({width}, ({t}_f0 := {f0}), {t}_f0 + ({_with_batch(b, x)} - {t}_x0)"
            f" / np.where({t}_w == 0, 1.0, {t}_w) * ({f1} - {t}_f0))")
    xv = _with_batch(b, x)
    first_f = f"{knots_f}[..., 0]" if left is None or (
        isinstance(left, Const) and left.value is None) else atom_text(left)
    last_f = f"{knots_f}[..., -1]" if right is None or (
        isinstance(right, Const) and right.value is None) else atom_text(right)
    body = f"np.where({xv} < {knots_x}[..., 0], {first_f}, {body})"
    return f"np.where({xv} > {knots_x}[..., -1], {last_f}, {body})"


defprim(
    "divmod", np.divmod, "(x1, x2)", family="binary", results=2,
    note="(floor_divide, remainder): the quotient is piecewise constant; the "
    "remainder's derivatives as np.remainder's, as JAX",
)


@defvjp("divmod")
def divmod_vjp(g, ans, x1, x2):
    return unbroadcast(g[1], x1), unbroadcast(-g[1] * ans[0], x2)


@defjvp("divmod", "x1")
def divmod_jvp_x1(x1_dot, ans, x1, x2):
    return np.zeros_like(ans[0]), np.broadcast_to(x1_dot, np.shape(ans[1]))


@defjvp("divmod", "x2")
def divmod_jvp_x2(x2_dot, ans, x1, x2):
    return np.zeros_like(ans[0]), -x2_dot * ans[0]
