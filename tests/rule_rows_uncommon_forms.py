"""Rule-table entries for the argument forms NumPy accepts beside the common one (see
rule_fns_forms.py): an array where a sequence of arrays is expected (its rows are
joined), rows of rank 0 to 3, and axes of length 1 and 0.  (The file sorts after the
family files: a primitive's first row, the one test_rules.py checks is no placeholder,
stays its common form.)"""

import numpy as np

import rule_fns_forms as F
from rule_table import E2ECase, Row, const, normal, uniform

# np.vstack(x) of an array x joins x's rows; its cotangent is one array shaped like x
# (it was a tuple of the rows' pieces, which came back as the first row's, repeated)
ROW_SHAPES = {"1d": (3,), "2d": (2, 3), "3d": (2, 3, 2), "4d": (2, 1, 3, 2),
              "one_row": (1, 3), "unit_rows": (3, 1), "empty_rows": (2, 0)}
ROWS = [
    Row(prim, f"array_{name}", (normal(*shape),))
    for prim in ("vstack", "hstack", "column_stack", "dstack", "stack")
    for name, shape in ROW_SHAPES.items()
] + [
    Row("concatenate", f"array_{name}", (normal(*shape),))
    for name, shape in ROW_SHAPES.items() if len(shape) > 1
] + [
    Row("stack", "array_axis_last", (normal(2, 3, 2),), {"axis": -1}),
    Row("stack", "array_axis1", (normal(2, 3),), {"axis": 1}),
    Row("concatenate", "array_axis_last", (normal(2, 3, 2),), {"axis": -1}),
    Row("concatenate", "array_flattened", (normal(2, 3, 2),), {"axis": None}),
]

# np.linspace is linear in start and stop (it was registered without a derivative)
ROWS += [
    Row("linspace", "scalars", (normal(), normal()), {"num": 5}),
    Row("linspace", "no_endpoint", (normal(), normal()), {"num": 4, "endpoint": False}),
    Row("linspace", "arrays_axis_last", (normal(2, 3), normal(3)), {"num": 4, "axis": -1}),
    Row("linspace", "broadcast_axis1", (normal(3, 1), normal(2)), {"num": 3, "axis": 1}),
    Row("linspace", "one_sample", (normal(2), normal()), {"num": 1}),
    Row("linspace", "no_samples", (normal(2), normal()), {"num": 0}),
    Row("linspace", "constant_stop", (normal(), const(3.4)), {"num": 5}, wrt=("start",)),
]

# np.power written as a call keeps its spelling (and NumPy's semantics on Python floats)
ROWS += [
    Row("numpy.power", "same", (uniform(0.3, 2.0)(2, 3), normal(2, 3)), jax="numpy.power"),
    Row("numpy.power", "broadcast", (uniform(0.3, 2.0)(3, 1), normal(4)),
        jax="numpy.power"),
    Row("numpy.power", "float_exponent", (normal(2, 3), const(2.0)), wrt=("x1",),
        jax="numpy.power"),
]

# np.repeat with a count of 0 reshaped its empty cotangent to (-1, 0) and crashed
ROWS += [
    Row("repeat", "zero", (normal(2, 3), const(0))),
    Row("repeat", "zero_axis1", (normal(2, 3), const(0)), {"axis": 1}),
    Row("repeat", "empty_axis", (normal(2, 0), const(2)), {"axis": 1}),
    Row("repeat", "once_unit_axis", (normal(2, 1), const(1)), {"axis": -1}),
    Row("repeat", "one_count_array", (normal(2, 3), const(np.array([3]))), {"axis": 0}),
]


# np.polyval of coefficients given as arrays: p's axes after the first broadcast
# against x's (the VJP read p as 1-D: np.vander(x, np.size(p)) did not fit)
ROWS += [
    Row("polyval", "coefficient_arrays", (normal(3, 2), normal(2))),
    Row("polyval", "coefficient_arrays_scalar_x", (normal(3, 2), normal())),
    Row("polyval", "coefficients_broadcast", (normal(3, 1, 2), normal(4, 1))),
    Row("polyval", "constant_polynomial", (normal(1), normal(3))),
]

# np.linalg.multi_dot of one array of matrices: its cotangent is one array
ROWS += [
    Row("linalg.multi_dot", "array_of_matrices", (normal(3, 2, 2),)),
    Row("linalg.multi_dot", "array_of_two", (normal(2, 3, 3),)),
]

# reductions and copies over empty axes (each reduced or copied nothing and crashed)
ROWS += [
    Row("mean", "empty_rows", (normal(0, 3),), {"axis": 1}),
    Row("mean", "empty_axis_reduced", (normal(3, 0),), {"axis": 0}),
    Row("prod", "empty_rows", (normal(0, 3),), {"axis": 1}),
    Row("prod", "empty_axis_kept", (normal(2, 0),), {"axis": 1, "keepdims": True}),
    Row("var", "empty_rows", (normal(0, 3),), {"axis": 1}),
    Row("std", "empty_rows", (normal(0, 3),), {"axis": -1}),
    Row("tile", "empty_rows", (normal(0, 3), const((2, 1)))),
    Row("tile", "empty_columns", (normal(2, 0), const(3))),
]


def inner_bar_twin(side: int):
    """JAX's own pullback of jnp.inner: the twin of inner_lhs_bar (0) or _rhs_bar."""
    def twin(cot, a, b):
        import jax
        import jax.numpy as jnp

        if side == 0:
            return jax.vjp(lambda a: jnp.inner(a, b), a)[1](cot)[0]
        return jax.vjp(lambda b: jnp.inner(a, b), b)[1](cot)[0]

    return twin


# np.inner with a scalar operand is a product: its VJP (tensordots over a's rank less
# one) crashed; the helpers inner_lhs_bar / inner_rhs_bar know the ranks when they run
INNERS = {"scalar_lhs": ((), (2, 3)), "scalar_rhs": ((2, 3), ()), "scalars": ((), ()),
          "vec_vec": ((3,), (3,)), "vec_3d": ((3,), (2, 4, 3)),
          "3d_mat": ((2, 4, 3), (5, 3)), "unit_axis": ((1, 3), (3,)),
          "empty": ((2, 0), (3, 0))}
for _v, (_s1, _s2) in INNERS.items():
    _g = np.shape(np.inner(np.zeros(_s1), np.zeros(_s2)))
    ROWS += [
        Row("inner", f"form_{_v}", (normal(*_s1), normal(*_s2))),
        Row("inner_lhs_bar", _v, (normal(*_g), normal(*_s1), normal(*_s2)),
            jax=inner_bar_twin(0)),
        Row("inner_rhs_bar", _v, (normal(*_g), normal(*_s1), normal(*_s2)),
            jax=inner_bar_twin(1)),
    ]

E2E = [
    E2ECase(F.f_np_power, ("numpy.power",), (uniform(0.3, 2.0)(2, 3), normal(3))),
    E2ECase(F.f_vstack_rows, ("vstack",)),
    E2ECase(F.f_hstack_rows, ("hstack",)),
    E2ECase(F.f_column_stack_rows, ("column_stack",)),
    E2ECase(F.f_dstack_rows, ("dstack",)),
    E2ECase(F.f_stack_rows, ("stack",)),
    E2ECase(F.f_concatenate_rows, ("concatenate",)),
    E2ECase(F.f_array_rows, ("array", "asarray")),
    E2ECase(F.f_linspace_sin, ("linspace",), (normal(),)),
    E2ECase(F.f_linspace_forms, ("linspace",)),
    # np.einsum's sublists, rewritten as a subscripts string (x was taken for the
    # subscripts: a zero derivative, and a crash with two operands)
    E2ECase(F.f_einsum_sublists_transpose, ("einsum",)),
    E2ECase(F.f_einsum_sublists, ("einsum",), (normal(2, 3), normal(3, 2))),
    E2ECase(F.f_repeat_counts_of_zero, ("repeat",)),
    E2ECase(F.f_repeat_count_lists, ("repeat",), jax=False),
    E2ECase(F.f_inner_forms, ("inner",), (normal(2, 3), normal(4, 3))),
    E2ECase(F.f_inner_bars, ("inner_lhs_bar", "inner_rhs_bar"),
            (normal(2, 4), normal(2, 3), normal(4, 3))),
    E2ECase(F.f_polyval_coefficient_arrays, ("polyval",), (normal(3, 2), normal(2))),
    E2ECase(F.f_polyval_coefficient_list, ("polyval",), (normal(3, 2), normal(2)),
            jax=False),
    E2ECase(F.f_multi_dot_matrices, ("linalg.multi_dot",), (normal(3, 2, 2),)),
    # shapes, axes and operands given as lists: vmap's rules read only ints and tuples
    # (broadcast_to, moveaxis, flip, roll), or spelled x twice (trapezoid), indexed a
    # list (kron's cotangent), or batched np.shape of a built list as one array
    E2ECase(F.f_lists_for_shapes_and_axes, ("reshape", "moveaxis", "flip", "roll",
                                            "broadcast_to", "expand_dims", "transpose")),
    E2ECase(F.f_lists_as_operands, ("trapezoid", "kron", "numpy.append"), jax=False),
    E2ECase(F.f_empty_axes, ("mean", "prod", "var", "std")),
    E2ECase(F.f_unit_axes, ("mean", "prod", "var", "std", "average")),
    E2ECase(F.f_tile_empty_and_unit_axes, ("tile",)),
    E2ECase(F.f_joins_of_lists_of_rows, ("vstack", "hstack", "column_stack", "dstack",
                                         "concatenate", "stack", "list")),
]
