"""One small function per primitive, for tests/test_rules.py.

Each is differentiated end to end by ``s2s.grad`` and compared with ``jax.grad`` of the
same source (``support.jax_twin`` rebinds the NumPy import below) and with finite
differences.  Outputs are weighted by fixed, non-uniform constants so that a rule
cannot pass by accident with a cotangent of all ones.  Keep the import as it is: the
twin rewrites it.
"""

import numpy as np

W23 = np.array([[0.3, -1.2, 0.7], [1.5, 0.4, -0.8]])  # weights for (2, 3) outputs
W2 = np.array([0.9, -1.3])
W3 = np.array([-0.6, 1.1, 0.25])
W32 = np.array([[0.5, -0.7], [1.2, 0.1], [-0.4, 0.8]])
W22 = np.array([[0.6, -1.1], [0.2, 1.4]])
IDX = np.array([0, 2, 2, 1, 0, 2])  # repeats: its cotangent must accumulate
ROWS = np.array([1, 1, 0])


# ---- elementwise: x has shape (2, 3) ----------------------------------------------


def f_sin(x):
    return np.sum(np.sin(x) * W23)


def f_cos(x):
    return np.sum(np.cos(x) * W23)


def f_tan(x):
    return np.sum(np.tan(x) * W23)


def f_arcsin(x):
    return np.sum(np.arcsin(x) * W23)


def f_arccos(x):
    return np.sum(np.arccos(x) * W23)


def f_arctan(x):
    return np.sum(np.arctan(x) * W23)


def f_sinh(x):
    return np.sum(np.sinh(x) * W23)


def f_cosh(x):
    return np.sum(np.cosh(x) * W23)


def f_tanh(x):
    return np.sum(np.tanh(x) * W23)


def f_exp(x):
    return np.sum(np.exp(x) * W23)


def f_expm1(x):
    return np.sum(np.expm1(x) * W23)


def f_log(x):
    return np.sum(np.log(x) * W23)


def f_log1p(x):
    return np.sum(np.log1p(x) * W23)


def f_log2(x):
    return np.sum(np.log2(x) * W23)


def f_log10(x):
    return np.sum(np.log10(x) * W23)


def f_sqrt(x):
    return np.sum(np.sqrt(x) * W23)


def f_square(x):
    return np.sum(np.square(x) * W23)


def f_reciprocal(x):
    return np.sum(np.reciprocal(x) * W23)


def f_absolute(x):
    return np.sum(np.absolute(x) * W23) + np.sum(abs(x) * W23 * 0.5)


def f_negative(x):
    return np.sum(np.negative(x) * W23) + np.sum(-x * W23 * x)


def f_positive(x):
    return np.sum(np.positive(x) * W23) + np.sum(+x * W23 * x)


# ---- binary: x (2, 3) with y (3,), broadcasting ----------------------------------


def f_add(x, y):
    return np.sum(np.add(x, y) * W23) + np.sum((x + y) ** 2)


def f_subtract(x, y):
    return np.sum(np.subtract(x, y) * W23) + np.sum((x - y) ** 2)


def f_multiply(x, y):
    return np.sum(np.multiply(x, y) * W23) + np.sum((x * y) * x)


def f_divide(x, y):
    return np.sum(np.divide(x, y) * W23) + np.sum((x / y) * x)


def f_power(x, y):
    return np.sum(np.power(x, y) * W23) + np.sum((x**y) * x)


def f_power_constants(x):
    return np.sum((x**2 + x**3 + x**0.5 + x**1 + x**0 + x**-1.5) * W23)


def f_maximum(x, y):
    return np.sum(np.maximum(x, y) * W23)


def f_minimum(x, y):
    return np.sum(np.minimum(x, y) * W23)


def f_where(x, y):
    return np.sum(np.where(x > 0.1, x * y, y**2) * W23)


# ---- reductions: x has shape (2, 3) ------------------------------------------------


def f_sum(x):
    return (
        np.sum(x * W23) + np.sum(np.sum(x, axis=0) * W3)
        + np.sum(x.sum(axis=-1) ** 2)
    )


def f_sum_keepdims(x):
    return np.sum(np.sum(x, axis=(0, 1), keepdims=True) * x) + np.sum(
        np.sum(x, axis=1, keepdims=True) * W23
    )


def f_mean(x):
    return (
        np.mean(x * W23) + np.sum(np.mean(x, axis=0) * W3)
        + np.sum(x.mean(axis=-1) ** 2)
    )


def f_mean_keepdims(x):
    return np.sum(np.mean(x, axis=(0, 1), keepdims=True) * x) + np.sum(
        np.mean(x, axis=1, keepdims=True) * W23
    )


def f_max(x):
    return (
        np.max(x * W23) + np.sum(np.max(x, axis=0) * W3)
        + np.sum(x.max(axis=-1) ** 2)
    )


def f_max_keepdims(x):
    return np.sum(np.max(x, axis=1, keepdims=True) * W23) + np.amax(x, axis=(0, 1))


def f_min(x):
    return (
        np.min(x * W23) + np.sum(np.min(x, axis=0) * W3)
        + np.sum(x.min(axis=-1) ** 2)
    )


def f_min_keepdims(x):
    return np.sum(np.min(x, axis=1, keepdims=True) * W23) + np.amin(x, axis=(0, 1))


def f_prod(x):
    return np.prod(x) + np.sum(np.prod(x, axis=0) * W3) + np.sum(x.prod(axis=-1) ** 2)


def f_prod_keepdims(x):
    return np.sum(np.prod(x, axis=(0, 1), keepdims=True) * x) + np.sum(
        np.prod(x, axis=1, keepdims=True) * W23
    )


# ---- linear algebra ---------------------------------------------------------------


def f_matmul(a, b):
    # a (2, 3), b (3, 2): matrix-matrix, matrix-vector and vector-vector products
    return np.sum((a @ b) * W22) + np.sum(np.matmul(a, b[:, 0]) * W2) + b[:, 1] @ a[0]


def f_matmul_batched(a, b):
    # a (2, 3), b (3, 2): a stacked batch against a broadcast matrix
    stack = np.reshape(a, (2, 1, 3)) * np.reshape(W3, (1, 3, 1))
    return np.sum(np.tanh(stack @ b))


def f_dot(a, b):
    matrix = np.sum(np.dot(a, b) * W22)
    return matrix + np.sum(a.dot(b[:, 0]) * W2) + np.dot(2.0, a[0, 0])


# ---- shape and indexing -----------------------------------------------------------


def f_reshape(x):
    flat = x.reshape(-1) * np.ravel(W23)
    return np.sum(np.reshape(x, (3, 2)) * W32) + np.sum(flat * x.ravel())


def f_transpose(x):
    return np.sum(np.transpose(x) * W32) + np.sum(x.transpose((1, 0)) * W32 * W32)


def f_T(x):
    return np.sum(x.T * W32)


def f_ravel(x):
    return np.sum(np.ravel(x) * np.ravel(W23)) + np.sum(x.flatten() ** 2)


def f_copy(x):
    return np.sum(np.copy(x) * W23) + np.sum(x.copy() * x)


def f_array(x):
    stacked = np.array([x[0, 0], x[1, 2], x[0, 0]])
    return np.sum(np.array(x) * W23) + np.sum(stacked * W3)


def f_asarray(x):
    return np.sum(np.asarray(x) * W23 * x)


def f_getitem_basic(x):
    slices = np.sum(x[1:, ::2] * W2) + np.sum(x[:, None, 1])
    return slices + np.sum(x[0] * W3) + x[-1, -1] * 2.0


def f_getitem_repeated(x):
    idx = np.array([0, 2, 2, 1, 0, 2])
    return np.sum(x[0, idx] * np.linspace(-1.0, 1.5, 6)) + np.sum(x[:, idx] ** 2)


def f_getitem_constant_index(x):
    # the same, indexing with a module-level constant array
    return np.sum(x[0, IDX] * np.linspace(-1.0, 1.5, 6)) + np.sum(x[ROWS] ** 2)


def f_float(x):
    return float(np.sum(x * W23)) * 2.0


def f_identity(x):
    y = x
    return np.sum(y * W23)


# ---- structure: containers and calls ----------------------------------------------


def f_make_tuple(x):
    pair = (np.sin(x), x * 2.0)
    a, b = pair
    return np.sum(a * b * W23)


def f_make_list(x):
    items = [np.sin(x), x * 2.0]
    return np.sum(items[0] * items[1] * W23)


def f_make_dict(x):
    d = {"s": np.sin(x), "t": x * 2.0}
    return np.sum(d["s"] * d["t"] * W23)


def helper(a, w):
    return np.cos(a) * w


def f_call(x):
    return np.sum(helper(x, W23) * x)


# ---- special values: conventions JAX fixes where the derivative is not defined ----


def s_abs(x):
    return np.sum(np.abs(x))


def s_sqrt(x):
    return np.sum(np.sqrt(x))


def s_maximum(x, y):
    return np.sum(np.maximum(x, y) * W3)


def s_minimum(x, y):
    return np.sum(np.minimum(x, y) * W3)


def s_max(x):
    return np.max(x) + np.sum(np.max(x, axis=1) * W2)


def s_min(x):
    return np.min(x) + np.sum(np.min(x, axis=1) * W2)


def s_square_pow(x):
    return np.sum(x**2)


def s_zero_pow(x):
    return np.sum(x**0.0)


def s_int_zero_pow(x):
    return np.sum(x**0)


def s_pow_exponent(p, x):
    return np.sum(x**p)


def s_where_sqrt(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


def s_prod(x):
    return np.prod(x) + np.sum(np.prod(x, axis=0) * W3)


# ---- piecewise constant (nondiff=True): gradient flows only through ``* x`` ---------


def nd_floor(x):
    return np.sum(np.floor(x) * x)


def nd_ceil(x):
    return np.sum(np.ceil(x) * x)


def nd_round(x):
    return np.sum(np.round(x) * x)


def nd_rint(x):
    return np.sum(np.rint(x) * x)


def nd_trunc(x):
    return np.sum(np.trunc(x) * x)


def nd_sign(x):
    return np.sum(np.sign(x) * x)


def nd_floor_divide(x):
    return np.sum((x // 0.5) * x)


# ---- axes held in names: a rule's ``if axis is None`` is decided when it runs -----


def f_sum_axis_variable(x):
    ax = 1
    return np.sum(np.sum(x, axis=ax) * W3)


def f_max_axis_variable(x):
    ax = 1
    return np.sum(np.max(x, axis=ax) * W3)


def f_mean_axis_argument(x, ax):
    return np.sum(np.mean(x, axis=ax) * W3)


def f_transpose_axes_argument(x, axes):
    return np.sum(np.transpose(x, axes) * W32)


try:  # scipy.special's piecewise-constant function (SciPy is optional)
    if np.__name__ == "jax.numpy":  # the JAX twin
        import jax.scipy.special as _sp
    else:
        import scipy.special as _sp
except ImportError:  # pragma: no cover
    _sp = None


def nd_gammasgn(x):
    return np.sum(_sp.gammasgn(x) * x)


globals()["nd_scipy.special.gammasgn"] = nd_gammasgn  # (looked up by primitive name)
