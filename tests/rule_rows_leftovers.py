"""Rule-table entries for NumPy's remaining functions (s2s/primitives/numpy_more.py,
the cross keywords in linalg.py, the forms in forms.py): rows call each rule directly
against JAX; the E2E functions (rule_fns_leftovers.py) go through s2s and JAX on the
same source: grad, jvp, vmap, second order, float32.

np.partition's element order within each side is NumPy's own (JAX's differs): its
rows draw a fixed array and JAX's twin takes the elements in the order
np.argpartition gives for it, so JAX differentiates the same rearrangement through
take_along_axis.  Its E2E functions are sums over each side, the same in any order.
"""

import jax
import jax.numpy as jnp
import numpy as np
import rule_fns_leftovers as F
from rule_table import E2ECase, Row, const, normal, rng_for

# ---- np.partition: a fixed array each, and JAX taking NumPy's order -------------------


def _partition_row(variant, shape, kth, **params):
    a = rng_for("partition-" + variant).normal(size=shape)
    axis = params.get("axis", -1)

    def twin(x, kth, axis=-1, kind="introselect", order=None):
        taken = np.argpartition(a, kth, axis=axis)
        if axis is None:
            return jnp.ravel(x)[taken]
        return jnp.take_along_axis(x, taken, axis=axis)

    assert np.array_equal(np.partition(a, kth, axis=axis),
                          np.ravel(a)[np.argpartition(a, kth, axis=None)] if axis is None
                          else np.take_along_axis(a, np.argpartition(a, kth, axis=axis),
                                                  axis=axis))
    return Row("partition", variant, (const(a), const(kth)), params, jax=twin)


def _atleast_nd_twin(a, ndim):
    return jnp.reshape(a, (1,) * max(ndim - a.ndim, 0) + a.shape)


def _gradient_bar_twin(cot, f, *varargs, axis=None, edge_order=1):
    return jax.vjp(lambda v: jnp.gradient(v, *varargs, axis=axis), f)[1](cot)[0]


def _gradient_bar_row(variant, shape, *spacing, **params):
    return Row("gradient_bar", variant, (normal(*shape), normal(*shape),
                                        *(const(h) for h in spacing)),
               params, jax=_gradient_bar_twin)


ROWS = [
    _partition_row("kth", (3, 7), 2),
    _partition_row("kth_last", (2, 5), 4),
    _partition_row("kth_negative", (2, 5), -2),
    _partition_row("kth_list", (2, 6), [1, 3]),
    _partition_row("axis0", (5, 3), 1, axis=0),
    _partition_row("axis_neg", (2, 5, 3), 2, axis=-2),
    _partition_row("axis_none", (3, 4), 5, axis=None),
    _partition_row("size_one_axis", (1, 4), 0, axis=0),
    _partition_row("size_zero_batch", (0, 4), 1),
    _partition_row("vector", (6,), 3),
    Row("atleast_nd", "vector", (normal(3), const(3)), jax=_atleast_nd_twin),
    # (zero for real x; complex x: test_leftovers.py's second derivatives of norms)
    Row("sign_turn", "real", (normal(2, 3), normal(2, 3)), wrt=("t",),
        jax=lambda x, t: jnp.zeros(jnp.broadcast_shapes(x.shape, t.shape))),
    Row("atleast_nd", "matrix", (normal(2, 3), const(4)), jax=_atleast_nd_twin),
    Row("atleast_nd", "deep_enough", (normal(2, 1, 3), const(2)), jax=_atleast_nd_twin),
    Row("gradient", "vector", (normal(6),)),
    Row("gradient", "spacing", (normal(3, 5), const(0.5)), {"axis": 1}),
    Row("gradient", "axis_neg", (normal(4, 3, 2), const(2.0)), {"axis": -3}),
    Row("gradient", "two_points", (normal(2, 3),), {"axis": 0}),
    Row("gradient", "size_one_other", (normal(1, 4),), {"axis": 1}),
    Row("gradient", "size_zero_other", (normal(0, 4), const(0.3)), {"axis": -1}),
    Row("gradient", "coordinates", (normal(3, 5), const(np.array([0.0, 0.3, 1.0, 1.2, 2.0]))),
        {"axis": 1}),
    _gradient_bar_row("vector", (5,)),
    _gradient_bar_row("spacing_axis", (3, 4), 0.5, axis=1),
    _gradient_bar_row("axis_neg", (4, 3), 2.0, axis=-2),
    _gradient_bar_row("coordinates", (4, 3), np.array([0.0, 0.5, 2.0]), axis=-1),
    Row("insert", "scalar_obj_axis1", (normal(3, 4), const(1), normal(3)), {"axis": 1}),
    Row("insert", "array_obj_rows", (normal(3, 4), const(np.array([0, 2, 2])), normal(4)),
        {"axis": 0}),
    Row("insert", "flattened", (normal(2, 3), const(4), normal(2))),
    Row("insert", "two_rows_negative", (normal(3, 2), const(-1), normal(2, 2)),
        {"axis": -2}),
    Row("insert", "slice_obj", (normal(4,), const(slice(0, 4, 2)), normal(2))),
    Row("insert", "size_one", (normal(1, 1), const(0), normal(1)), {"axis": 0}),
    Row("insert", "size_zero", (normal(0, 3), const(0), normal(3)), {"axis": 0}),
    Row("cross", "axisa_axisb", (normal(3, 4), normal(4, 3)), {"axisa": 0, "axisb": 1},
        jax=lambda a, b, **k: jnp.cross(a, b, **k)),
    Row("cross", "axisc", (normal(4, 3), normal(4, 3)), {"axisc": 0}),
    Row("cross", "all_three", (normal(3, 2, 1), normal(2, 3)),
        {"axisa": 0, "axisb": -1, "axisc": -2}),
    Row("cross", "size_zero", (normal(0, 3), normal(3)), {}),
]

E2E = [
    E2ECase(F.f_svd_values, ("linalg.svdvals",), (normal(4, 3),)),
    E2ECase(F.f_svd_keywords_pass_on, ("linalg.svd",), (normal(3, 3),)),
    E2ECase(F.f_row_stack, ("vstack",), (normal(2, 3),)),
    E2ECase(F.f_ufunc_reduce, ("sum", "prod", "max", "min"), (normal(3, 4),)),
    E2ECase(F.f_ufunc_accumulate, ("cumsum", "cumprod"), (normal(3, 4),)),
    E2ECase(F.f_select, ("where",), (normal(3, 4),)),
    E2ECase(F.f_sign_turn, ("sign_turn",), (normal(2, 3),)),
    E2ECase(F.f_block_deep, ("concatenate", "atleast_nd"), (normal(2, 3), normal(2, 3))),
    E2ECase(F.f_block, ("concatenate", "atleast_1d", "atleast_2d"),
            (normal(2, 3), normal(2, 3))),
    E2ECase(F.f_partition, ("partition",), (normal(3, 7),)),
    E2ECase(F.f_partition_kth_list_flat, ("partition",), (normal(3, 7),), jax=False),
    E2ECase(F.f_frexp, ("frexp",), (normal(3, 4),)),
    E2ECase(F.f_gradient, ("gradient",), (normal(3, 5),)),
    E2ECase(F.f_gradient_edge_order_2, ("gradient",), (normal(3, 5),), jax=False),
    E2ECase(F.f_gradient_bar, ("gradient_bar",), (normal(3, 4), normal(3, 4))),
    E2ECase(F.f_gradient_every_axis, ("gradient",), (normal(4, 5),)),
    E2ECase(F.f_gradient_every_axis_edge_2, ("gradient",), (normal(4, 5),), jax=False),
    E2ECase(F.f_gradient_axes, ("gradient", "make_tuple"), (normal(4, 5),)),
    E2ECase(F.f_gradient_coordinates, ("gradient", "make_tuple"), (normal(4, 5),),
            jax=False),
    E2ECase(F.f_insert, ("insert",), (normal(3, 3), normal(4))),
    E2ECase(F.f_insert_bars, ("insert_bars",), (normal(3, 6), normal(3, 4), normal(3, 2))),
    E2ECase(F.f_cross_axes, ("cross",), (normal(3, 4), normal(4, 3))),
]
