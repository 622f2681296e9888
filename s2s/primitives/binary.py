"""Binary arithmetic with NumPy broadcasting, and ``where``.

A broadcasting operator's cotangent for each operand is summed back to that operand's
shape by ``unbroadcast``; that is the only place broadcasting is undone.
"""

import operator

import numpy as np

from ..runtime import unbroadcast
from .registry import defjvp, defprim, defvjp, infix, is_integer_constant

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


@defjvp("multiply", "x1")
def multiply_jvp_x1(x1_dot, ans, x1, x2):
    return x1_dot * x2


@defjvp("multiply", "x2")
def multiply_jvp_x2(x2_dot, ans, x1, x2):
    return x1 * x2_dot


defprim(
    "divide", np.divide, "(x1, x2)", family="binary", spelling=infix("/"),
    aliases=(operator.truediv,),
)


@defvjp("divide")
def divide_vjp(g, ans, x1, x2):
    return unbroadcast(g / x2, x1), unbroadcast(-g * ans / x2, x2)


@defjvp("divide", "x1")
def divide_jvp_x1(x1_dot, ans, x1, x2):
    return x1_dot / x2


@defjvp("divide", "x2")
def divide_jvp_x2(x2_dot, ans, x1, x2):
    return -x2_dot * ans / x2


defprim(
    "power", np.power, "(x1, x2)", family="binary", spelling=infix("**"),
    aliases=(operator.pow,),
    note="x ** k for a constant integer k is a polynomial: its derivative at 0 is "
    "finite (0 for k > 1), as JAX's integer_pow; d/dx2 uses log(x1) with x1 = 0 "
    "replaced by 1, as JAX",
)


@defvjp("power")
def power_vjp(g, ans, x1, x2):
    if is_integer_constant(x2) and x2 == 0:
        x1_bar = np.zeros_like(g * x1)
    elif is_integer_constant(x2) and x2 == 1:
        x1_bar = g
    elif is_integer_constant(x2) and x2 == 2:
        x1_bar = g * (2 * x1)
    else:
        x1_bar = g * (x2 * x1 ** (x2 - 1))
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
    return x1_dot * (x2 * x1 ** (x2 - 1))


@defjvp("power", "x2")
def power_jvp_x2(x2_dot, ans, x1, x2):
    return x2_dot * ans * np.log(np.where(x1 == 0, 1, x1))


defprim(
    "maximum", np.maximum, "(x1, x2)", family="binary",
    note="where x1 == x2 each side gets half the cotangent, as JAX",
)


@defvjp("maximum")
def maximum_vjp(g, ans, x1, x2):
    x1_share = np.where(x1 == ans, np.where(x2 == ans, 0.5, 1.0), 0.0)
    x2_share = np.where(x2 == ans, np.where(x1 == ans, 0.5, 1.0), 0.0)
    return unbroadcast(g * x1_share, x1), unbroadcast(g * x2_share, x2)


@defjvp("maximum", "x1")
def maximum_jvp_x1(x1_dot, ans, x1, x2):
    return x1_dot * np.where(x1 == ans, np.where(x2 == ans, 0.5, 1.0), 0.0)


@defjvp("maximum", "x2")
def maximum_jvp_x2(x2_dot, ans, x1, x2):
    return x2_dot * np.where(x2 == ans, np.where(x1 == ans, 0.5, 1.0), 0.0)


defprim(
    "minimum", np.minimum, "(x1, x2)", family="binary",
    note="where x1 == x2 each side gets half the cotangent, as JAX",
)


@defvjp("minimum")
def minimum_vjp(g, ans, x1, x2):
    x1_share = np.where(x1 == ans, np.where(x2 == ans, 0.5, 1.0), 0.0)
    x2_share = np.where(x2 == ans, np.where(x1 == ans, 0.5, 1.0), 0.0)
    return unbroadcast(g * x1_share, x1), unbroadcast(g * x2_share, x2)


@defjvp("minimum", "x1")
def minimum_jvp_x1(x1_dot, ans, x1, x2):
    return x1_dot * np.where(x1 == ans, np.where(x2 == ans, 0.5, 1.0), 0.0)


@defjvp("minimum", "x2")
def minimum_jvp_x2(x2_dot, ans, x1, x2):
    return x2_dot * np.where(x2 == ans, np.where(x1 == ans, 0.5, 1.0), 0.0)


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
