"""Products of arrays.  Their cotangents depend on the operands' ranks, which emitted
code learns only when it runs, so they call small rank-aware helpers from the runtime.
"""

import operator

import numpy as np

from ..runtime import dot_lhs_bar, dot_rhs_bar, matmul_lhs_bar, matmul_rhs_bar
from .registry import defjvp, defprim, defvjp, infix

defprim(
    "matmul", np.matmul, "(x1, x2)", family="linalg", spelling=infix("@"),
    aliases=(operator.matmul,),
)


@defvjp("matmul")
def matmul_vjp(g, ans, x1, x2):
    return matmul_lhs_bar(g, x1, x2), matmul_rhs_bar(g, x1, x2)


@defjvp("matmul", "x1")
def matmul_jvp_x1(x1_dot, ans, x1, x2):
    return x1_dot @ x2


@defjvp("matmul", "x2")
def matmul_jvp_x2(x2_dot, ans, x1, x2):
    return x1 @ x2_dot


defprim("dot", np.dot, "(a, b)", family="linalg", methods=("dot",))


@defvjp("dot")
def dot_vjp(g, ans, a, b):
    return dot_lhs_bar(g, a, b), dot_rhs_bar(g, a, b)


@defjvp("dot", "a")
def dot_jvp_a(a_dot, ans, a, b):
    return np.dot(a_dot, b)


@defjvp("dot", "b")
def dot_jvp_b(b_dot, ans, a, b):
    return np.dot(a, b_dot)
