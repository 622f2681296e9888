"""Functions for rule_rows_uncommon_forms.py: each primitive called in the argument
forms NumPy accepts beside the common one.  An array where a sequence is expected (NumPy iterates
its rows: ``np.vstack(x)``), rows of rank 0 to 2, axes of length 1 and 0.

Each output is scored with a weight per position, so that a cotangent sent to the
wrong element (a transposed or repeated row) shows.  Keep the import as it is: the JAX
twin rebinds it to jax.numpy.
"""

import numpy as np

if np.__name__ == "jax.numpy":  # this module's JAX twin: the helpers' twins are JAX's
    import jax

    def inner_lhs_bar(cot, a, b):
        return jax.vjp(lambda a: np.inner(a, b), a)[1](cot)[0]

    def inner_rhs_bar(cot, a, b):
        return jax.vjp(lambda b: np.inner(a, b), b)[1](cot)[0]
else:
    from s2s.runtime import inner_lhs_bar, inner_rhs_bar


def scored(v):
    """sum(sin(v) * w), w a fixed weight per position of v."""
    return np.sum(np.sin(v) * np.reshape(np.cos(np.arange(np.size(v))), np.shape(v)))


# ---- an array where a sequence of arrays is expected: its rows are joined ----------
# x is (2, 3): x[0] has scalar rows, x[:, :, None] rows of rank 2, x[:1] one row,
# x[:, :0] rows of length 0


def f_vstack_rows(x):
    total = scored(np.vstack(x)) + scored(np.vstack(x[0])) + scored(np.vstack(x[:1]))
    return total + scored(np.vstack(x[:, :, None] * x[0])) + scored(np.vstack(x[:, :0]))


def f_hstack_rows(x):
    total = scored(np.hstack(x)) + scored(np.hstack(x[0])) + scored(np.hstack(x[:1]))
    return total + scored(np.hstack(x[:, :, None] * x[0])) + scored(np.hstack(x[:, :0]))


def f_column_stack_rows(x):
    total = scored(np.column_stack(x)) + scored(np.column_stack(x[0]))
    total = total + scored(np.column_stack(x[:1])) + scored(np.column_stack(x[:, :0]))
    return total + scored(np.column_stack(x[:, :, None] * x[0]))


def f_dstack_rows(x):
    total = scored(np.dstack(x)) + scored(np.dstack(x[0])) + scored(np.dstack(x[:1]))
    total = total + scored(np.dstack(x[:, :, None] * x[0])) + scored(np.dstack(x[:, :0]))
    return total + scored(np.dstack(x[:, :, None, None] * x[0]))


def f_stack_rows(x):
    total = scored(np.stack(x)) + scored(np.stack(x, axis=1)) + scored(np.stack(x[0]))
    total = total + scored(np.stack(x[:, :, None] * x[0], axis=-1))
    return total + scored(np.stack(x[:1], axis=-2)) + scored(np.stack(x[:, :0], axis=1))


def f_concatenate_rows(x):
    total = scored(np.concatenate(x)) + scored(np.concatenate(x[:1]))
    total = total + scored(np.concatenate(x[:, :, None] * x[0], axis=1))
    total = total + scored(np.concatenate(x[:, :, None] * x[0], axis=-1))
    return total + scored(np.concatenate(x[:, :0])) + scored(np.concatenate(x, axis=None))


def f_array_rows(x):
    return scored(np.array(x)) + scored(np.asarray(x[:1])) + scored(np.array(x[:, :0]))


def f_joins_of_lists_of_rows(x):
    """list(x): the same rows, as a list the code builds when it runs."""
    total = scored(np.vstack(list(x))) + scored(np.hstack(list(x[0])))
    total = total + scored(np.column_stack(list(x))) + scored(np.dstack(list(x[0])))
    return total + scored(np.concatenate(list(x), axis=-1)) + scored(np.stack(list(x), 1))


def f_vstack_sin(x):
    """The form autograd's tests found: np.vstack of one array argument."""
    return np.sum(np.sin(np.vstack(x)))


def j_joins_of_rows(x):
    """Several joins of an array's rows, one array out (for vjp and vmap)."""
    v = np.vstack(x) * 2.0 + np.column_stack(x).T
    return np.concatenate([np.hstack(x), np.ravel(v), np.ravel(np.dstack(x))]) * np.sin(
        np.concatenate(x, axis=None)[0])


# ---- np.linspace: linear in start and stop -------------------------------------------


def f_linspace_sin(a):
    """The form autograd's tests found: the derivative in start was 0."""
    return np.sum(np.sin(np.linspace(a, 3.4, 5)))


def f_linspace_forms(x):
    """Scalar and array ends, endpoint=False, an axis, one and no samples."""
    total = scored(np.linspace(x[0, 0], x[1, 2], 7)) + scored(np.linspace(x[0], x[1], 4))
    total = total + scored(np.linspace(x[0, 1], 2.5, num=6, endpoint=False))
    total = total + scored(np.linspace(x, x[0] * 2.0, 3, axis=-1))
    total = total + scored(np.linspace(x[1], -1.0, 5, axis=1))
    total = total + scored(np.linspace(x[0, :1], x[1, 0], 1)) + scored(np.linspace(x, 0.5, 0))
    return total + scored(np.linspace(-2.0, x[:, 1:], 4, False, axis=2))


def j_linspace(x):
    """Array ends, along the last axis and without the endpoint (for vjp and vmap)."""
    return np.linspace(x[0], np.sin(x[1]), 4, endpoint=False, axis=-1)


# ---- np.einsum in its interleaved form: sublists of axis numbers ---------------------


def f_einsum_sublists_transpose(x):
    return scored(np.einsum(x, [0, 1], [1, 0]))


def f_einsum_sublists(x, y):
    """Two operands, an output sublist, the implicit output, ... and a trace."""
    total = scored(np.einsum(x, [0, 1], y, [1, 2], [0, 2]))
    total = total + scored(np.einsum(x, [0, 1], y, [1, 2]))  # implicit: [0, 2]
    total = total + scored(np.einsum(x, [Ellipsis, 1], y, [1, Ellipsis]))
    total = total + scored(np.einsum(x[:, :2], [3, 3]))  # a trace, a scalar
    return total + scored(np.einsum(y, [30, 2], x, [2, 30], [30]))  # labels past 25


def r_einsum_sublist_name(x):
    """Refused: a sublist bound to a name (only one written in the call is read now)."""
    first = [0, 1]
    return np.sum(np.einsum(x, first, [1, 0]))


def r_einsum_label_out_of_range(x):
    return np.sum(np.einsum(x, [0, 1], [1, 60]))


def j_einsum_sublists(x):
    return np.einsum(x, [0, 1], np.cos(x), [2, 1], [2, 0])


# ---- x ** y at a Python-float 0.0 ----------------------------------------------------


def p_sqrt(x):
    return x**0.5


def p_power_2_5(x):
    return x**2.5


def p_power_float_one(x):
    return x**1.0


def p_power_float_zero(x):
    return x**0.0


def p_np_power_negative(x):
    return np.power(x, -1.0)


def p_np_power(x, y):
    return np.power(x, y)


def p_zero_base(y):
    return 0.0**y


def p_power_negative(x):
    return x**-1.0  # Python raises ZeroDivisionError at 0.0, as the function does


def f_np_power(x, y):
    return np.sum(np.power(x, y) * np.sin(y)) + np.sum(np.power(np.cos(x), 2.0))


# ---- np.repeat: zero counts, unit and empty axes, counts as lists ---------------------


def f_repeat_counts_of_zero(x):
    total = scored(np.repeat(x, 0)) + scored(np.repeat(x, 0, axis=1)) + scored(x * x)
    total = total + scored(np.repeat(x[:, :0], 2, axis=1)) + scored(np.repeat(x[:1], 3, 0))
    return total + scored(x.repeat(1, axis=-1)) + scored(np.repeat(x[0, 0], 2))


def f_repeat_count_lists(x):
    """Counts as a list (JAX asks for an array: checked by finite differences)."""
    total = scored(np.repeat(x, [2], axis=0)) + scored(np.repeat(x, [1, 0, 2], axis=1))
    return total + scored(np.repeat(x, [0, 0], axis=0)) + scored(x * 2.0)


# ---- np.inner: scalar operands multiply; vectors, matrices, 3-d, unit and empty axes --


def f_inner_forms(x, y):
    """x (2, 3), y (4, 3); np.inner's VJP crashed on a scalar operand."""
    total = scored(np.inner(x, y)) + scored(np.inner(x[0], y)) + scored(np.inner(x, y[1]))
    total = total + scored(np.inner(x[0, 0], y)) + scored(np.inner(x, y[0, 1]))
    total = total + scored(np.inner(x[0, 0], y[1, 1])) + scored(np.inner(x[:1], y[0]))
    total = total + scored(np.inner(x[:, :, None] * y[0], y[:2, :, None] * x[1]))
    return total + scored(np.inner(x[:, :0], y[:, :0])) + scored(np.inner(x[0], 2.0))


def f_inner_bars(cot, x, y):
    """The helpers np.inner's VJP calls, as emitted code calls them (cot (2, 4))."""
    total = scored(inner_lhs_bar(cot, x, y)) + scored(inner_rhs_bar(cot, x, y))
    total = total + scored(inner_lhs_bar(cot * y[0, 0], x[0, 0], cot))
    return total + scored(inner_rhs_bar(x[1], x[0], y[0, 0]))


def j_inner(x):
    """np.inner with a scalar operand on either side, and of matrices (array out)."""
    a, b = np.ravel(np.inner(x[0, 0], x)), np.inner(x, x[1])
    return np.concatenate([a, b, np.ravel(np.inner(x, x[0, 1])), np.ravel(np.inner(x, x))])


# ---- np.polyval of coefficients that are arrays (p's axes after the first broadcast) -


def f_polyval_coefficient_arrays(p, x):
    """p (3, 2): three coefficients, each a row of 2; x (2,)."""
    total = scored(np.polyval(p, x)) + scored(np.polyval(p, x[0]))
    total = total + scored(np.polyval(p[:, None, :], x[:, None])) + scored(np.polyval(p[:1], x))
    return total + scored(np.polyval(p[:, 0], x))


def f_polyval_coefficient_list(p, x):
    """A list of coefficient arrays (JAX asks for an array: finite differences)."""
    return scored(np.polyval([p[0], p[1] * 2.0, p[2]], x)) + scored(np.polyval([p[0, 0]], x))


def f_multi_dot_matrices(x):
    """np.linalg.multi_dot of one array of matrices, x (3, 2, 2): its rows are chained."""
    return scored(np.linalg.multi_dot(x)) + scored(np.linalg.multi_dot(x[:2] * 2.0))


# ---- shapes, axes and operands given as lists (vmap read only ints and tuples) -------


def f_lists_for_shapes_and_axes(x):
    """x (2, 3): a shape, axes and shifts as lists, as NumPy takes them."""
    total = scored(np.reshape(x, [3, 2])) + scored(x.reshape([6])) + scored(x.T.reshape([2, 3]))
    total = total + scored(np.moveaxis(x[:, :, None], [0, 1], [2, 0]))
    total = total + scored(np.flip(x, axis=[0, 1])) + scored(np.roll(x, [1, 2], axis=[0, 1]))
    total = total + scored(np.broadcast_to(x[0], [2, 2, 3])) + scored(np.expand_dims(x, [0, 3]))
    return total + scored(np.transpose(x, [1, 0]))


def f_lists_as_operands(x):
    """Constant lists and built lists where NumPy expects an array (JAX asks for
    arrays: checked by finite differences)."""
    total = scored(np.trapezoid(x[0], [0.0, 0.5, 2.0])) + scored(np.kron(x, [1.0, -2.0]))
    total = total + scored(np.append(x[0], [x[1, 0], 2.0]))
    return total + scored(np.trapezoid(x, [0.0, 0.5, 2.0], axis=-1))


# ---- reductions and copies over empty and size-1 axes ---------------------------------


def f_empty_axes(x):
    """x (2, 3); x[:0] and x[:, :0] have an axis of length 0 (mean's count was 0 / 0,
    prod's reshape to -1 undecided, tile's copies n // 0)."""
    total = scored(np.mean(x[:0], axis=1)) + scored(np.mean(x[:, :0], axis=0)) + scored(x)
    total = total + scored(np.prod(x[:0], axis=0)) + scored(np.prod(x[:, :0], axis=1))
    return total + scored(np.var(x[:0], axis=1)) + scored(np.std(x[:0], axis=-1))


def f_unit_axes(x):
    """Reductions over axes of length 1 (np.std of one element has JAX's nan
    derivative: test_rule_forms.py)."""
    total = scored(np.mean(x[:, :1], axis=1)) + scored(np.prod(x[:1], axis=0))
    total = total + scored(np.var(x[:1] * x[1], axis=0)) + scored(np.std(x, axis=1))
    return total + scored(np.average(x[:, :1], axis=-1)) + scored(np.prod(x[:1, :1]))


def f_tile_empty_and_unit_axes(x):
    """tile's copies were counted n // 0 on an empty axis."""
    total = scored(np.tile(x[:0], (2, 1))) + scored(np.tile(x[:, :0], 3))
    return total + scored(np.tile(x[:1], (2, 1))) + scored(np.tile(x, (1, 1, 2)))


def s_var_of_one_with_ddof(x):
    """np.var of one element with ddof=1 divides by 0 (nan): Python raised instead."""
    return np.sum(np.var(x[:, :1], axis=1, ddof=1)) + np.sum(np.std(x[:1], axis=0, ddof=1))


def j_repeat_polyval_and_empty_axes(x):
    """x (2, 3): zero counts, coefficient arrays and empty axes, one array out."""
    zero, twice = np.ravel(np.repeat(x, 0, axis=1)), np.repeat(x[0], 2)
    values, unit = np.polyval(x, x[1]), np.var(x[:, :1], axis=1)
    empty_mean, empty_prod = np.mean(x[:0], axis=1), np.prod(x[:, :0], axis=1)
    return np.concatenate([zero, twice, values, unit, empty_mean, empty_prod])
