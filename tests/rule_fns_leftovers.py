"""Functions for the rows of NumPy's remaining functions (rule_rows_leftovers.py): the
calls that are other primitives' in other words (svd's values, row_stack, the ufunc
methods, select, block), partition, frexp, gradient and cross's axis keywords.  The
JAX twin (support.jax_twin) runs the same source with jax.numpy."""

import numpy as np

# no array constants: NumPy would promote a float32 input's values to float64 where
# JAX keeps float32; weights come from sin/cos of the values instead

# jax.numpy has no row_stack (NumPy 2 deprecates it): the twin reads vstack
row_stack = np.row_stack if hasattr(np, "row_stack") else np.vstack

if np.__name__ == "jax.numpy":  # the twin: gradient_bar from what it means
    import jax

    def gradient_bar(cot, f, *varargs, axis=None):
        return jax.vjp(lambda v: np.gradient(v, *varargs, axis=axis), f)[1](cot)[0]

    def sign_turn(x, t):  # (of real x: zero)
        return np.zeros(np.broadcast_shapes(np.shape(x), np.shape(t)))
else:
    from s2s.runtime import gradient_bar, sign_turn


def f_svd_values(x):
    s = np.linalg.svd(x, compute_uv=False)
    return np.sum(np.sin(s)) + s[0] * s[-1]


def f_svd_keywords_pass_on(x):
    # compute_uv=True (and hermitian=False) is np.linalg.svd's own primitive
    u, s, vt = np.linalg.svd(x, full_matrices=False, compute_uv=True, hermitian=False)
    return np.sum(np.sin(u * s @ vt)) + np.sum(s**2)


def f_row_stack(x):
    return np.sum(np.sin(row_stack([x, x * 2.0, x[0]])) ** 2)


def f_ufunc_reduce(x):
    total = np.sum(np.add.reduce(x) ** 2) + np.sum(np.multiply.reduce(np.cos(x), axis=1))
    total = total + np.sum(np.maximum.reduce(x, axis=-1, keepdims=True) * np.cos(x))
    return total + np.minimum.reduce(x, axis=None) + np.sum(np.add.reduce(x, 1) * x[0, 0])


def f_ufunc_accumulate(x):
    return np.sum(np.sin(np.add.accumulate(x))) + np.sum(np.multiply.accumulate(x, axis=1))


def f_select(x):
    y = np.select([x > 0.5, x < -0.5], [x**2, np.sin(x)], np.cos(x))
    z = np.select([x > 0.0], [np.exp(x)])  # default 0
    w = np.select((x > 1.0, x < 0.2), (1.5, x * 3.0), default=x[0])  # constant, broadcast
    return np.sum(y * z) + np.sum(w**2)


def f_block_deep(x, y):
    """Lists three and four deep: each block gets axes of length 1 in front first."""
    b = np.block([[[x, y]], [[y, x * 2.0]]])
    c = np.block([[[[x[0]]], [[y[1]]]]])
    return np.sum(b**2 * np.cos(b)) + np.sum(np.sin(c) * c[..., ::-1])


def f_block(x, y):
    m = np.block([[x, y], [np.sin(y), x * 2.0]])
    v = np.block([x[0], y[1], x[1, :1] * 2.0])
    return np.sum(np.sin(m) * np.cos(m)) + np.sum(v**3)


def f_partition(x):
    # sums over each block: the same whatever order the blocks' elements come in
    p = np.partition(x, 2)
    total = np.sum(np.sin(p[..., :2])) + np.sum(p[..., 2] ** 2) + np.sum(np.exp(p[..., 3:]))
    r = np.partition(x, 1, axis=0)
    return total + np.sum(r[1] * np.cos(x[0])) + np.sum(np.partition(x, -3)[:, -3:] ** 2)


def f_partition_kth_list_flat(x):
    # (JAX's partition takes one kth and an axis: finite differences only)
    q = np.partition(x, (1, 3), axis=-1)
    total = np.sum(q[:, 1] * q[:, 3]) + np.sum(q[:, 2] ** 3) + np.sum(np.sin(q[:, :1]))
    return total + np.sum(np.partition(x, 4, axis=None)[4:] ** 2)


def f_frexp(x):
    m, e = np.frexp(x)
    return np.sum(m**2 * np.cos(x)) + np.sum(np.ldexp(m, e) * x)


def f_gradient(x):
    total = np.sum(np.sin(np.gradient(x, 0.5, axis=1)) ** 2) + np.sum(np.gradient(x[0]) ** 3)
    return total + np.sum(np.gradient(x, axis=-2) * np.cos(x))


def f_gradient_edge_order_2(x):
    # (JAX's gradient has no edge_order: finite differences only)
    total = np.sum(np.sin(np.gradient(x, 0.25, axis=1, edge_order=2)) ** 2)
    return total + np.sum(np.gradient(x[:, 0], edge_order=2) ** 3)


X5 = np.array([0.0, 0.3, 1.0, 1.2, 2.0])  # coordinates, unevenly spaced


def f_gradient_axes(x):
    """axis= a tuple: one gradient per axis, each with its spacing, as the tuple NumPy
    returns."""
    gx, gy = np.gradient(x, 0.5, 0.25, axis=(0, 1))
    both = np.gradient(x, axis=(1, 0))
    return np.sum(gx**2) + np.sum(np.sin(gy)) + np.sum(both[0] * both[1])


def f_gradient_coordinates(x):
    # (JAX's gradient has no edge_order, and promotes float32 values to the coordinates'
    # float64 where NumPy keeps float32: finite differences here, the rule rows check
    # coordinates against JAX)
    gx, gy = np.gradient(x, 0.5, X5, axis=(0, 1), edge_order=2)
    total = np.sum(gx * gy) + np.sum(np.gradient(x, X5, axis=-1, edge_order=2) ** 2)
    return total + np.sum(np.sin(np.gradient(x, 0.5, X5, axis=(0, 1))[1]))


def f_gradient_every_axis(x):
    """axis= left out on 2-D and 3-D values: one gradient per axis (a spacing for all,
    one per axis, edge_order=2), unpacked, indexed and summed whole."""
    gx, gy = np.gradient(x * x, 0.5, 2.0)
    cube = np.reshape(np.sin(x), (2, 2, 5))
    g = np.gradient(cube)
    total = np.sum(gx * np.cos(gy)) + np.sum(g[0] * g[2]) + np.sum(g[1] ** 2)
    return total + np.sum(np.gradient(x)[1] ** 3)


def f_gradient_every_axis_edge_2(x):
    # (JAX's gradient has no edge_order, and jnp.sum takes no list: finite differences)
    gx, gy = np.gradient(x, edge_order=2)
    return np.sum(gx * np.sin(gy)) + np.sum(np.square(np.gradient(x, 0.25)))


def f_gradient_unpacked(x):
    gx, gy = np.gradient(x * x, 0.5, 2.0)
    return np.sum(gx * np.cos(gy)) + np.sum(np.gradient(x)[1] ** 3)


def f_gradient_per_axis(x):
    """The per-axis results themselves, as NumPy returns them (a tuple)."""
    return np.gradient(np.sin(x), 0.5, 2.0)


def f_gradient_bar(cot, f):
    return np.sum(np.sin(gradient_bar(cot * f, f, 0.5, axis=1)) ** 2)


def f_cross_axes(x, y):
    c = np.cross(x, y, axisa=0, axisb=-1, axisc=0)
    d = np.cross(y, x.T, axis=1)
    return np.sum(np.sin(c) ** 2) + np.sum(d * y)


def f_insert(x, v):
    a = np.insert(x, 1, v[0], axis=1)  # one value broadcast down a column
    b = np.insert(x, np.array([0, 2, 2]), v[:3], axis=0)  # three rows, each v[:3]
    c = np.insert(x, 2, v[:2] * 3.0)  # flattened, two values at one place
    d = np.insert(x, -1, np.stack([v[:3], v[1:]]), axis=0)  # two rows (scalar obj)
    return np.sum(np.sin(a) ** 2) + np.sum(b * np.cos(b)) + np.sum(c**3) + np.sum(d**2 * v[0])


if np.__name__ == "jax.numpy":  # the twin: insert_bars from what it means

    def insert_bars(cot, arr, obj, values, axis=None):
        pullback = jax.vjp(lambda a, v: np.insert(a, obj, v, axis=axis), arr, values)[1]
        return pullback(cot)
else:
    from s2s.runtime import insert_bars


def f_insert_bars(cot, x, v):
    bars = insert_bars(cot * cot, x, np.array([1, 3]), v, axis=1)
    return np.sum(np.sin(bars[0]) * x) + np.sum(bars[1] ** 2)


def f_sign_turn(t):
    """The helper of norms' second derivatives, of a real x (zero): its t-derivative is
    zero, its value too (it has none in x)."""
    return np.sum(sign_turn(np.cos(X5[:3]), t * t) + t)


# second derivatives of norms with the order written in the call (tests/test_leftovers.py)


def norm_nuclear(z):
    return np.linalg.norm(z, ord="nuc")


def norm_3(z):
    return np.linalg.norm(z, ord=3) + np.linalg.vector_norm(z, ord=0.5)


def norm_spectral(z):
    return np.linalg.norm(z, ord=2) + np.linalg.matrix_norm(z, ord="nuc")


def norm_smallest_rows(z):
    return np.sum(np.linalg.norm(z[None], ord=-2, axis=(1, 2)))


# eig at repeated eigenvalues (tests/test_leftovers.py)


def eig_values_only(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.real(w) ** 2)


def eigvals_only(a):
    return np.sum(np.real(np.linalg.eigvals(a)) ** 2)


def eig_vectors_read(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.real(w)) + np.sum(np.real(v[0]))
