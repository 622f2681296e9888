"""Rule-table entries for shape functions: joining and splitting (sequence arguments,
several results), rearranging axes, copies (tile, repeat, broadcast), padding, and
constructors differentiable in their fill value."""

import numpy as np

import rule_fns_shape as F
from rule_table import E2ECase, Row, const, normal


def arrays(*shapes):
    """A list of arrays (a sequence argument); JAX sees them stacked, same result."""
    return lambda r: [r.normal(size=s) for s in shapes]


# Primitives with several results (split, array_split, hsplit, vsplit, dsplit,
# broadcast_arrays, meshgrid) are checked end to end only: JAX's vjp needs their
# cotangent as a list, which the directly-called table does not build.
ROWS = [
    Row("concatenate", "axis0", (arrays((2, 3), (2, 3)),), {"axis": 0}),
    Row("concatenate", "axis1", (arrays((2, 3), (2, 3), (2, 3)),), {"axis": 1}),
    # joining: rows need equal shapes (the table draws one tangent array for all)
    Row("stack", "axis0", (arrays((2, 3), (2, 3)),)),
    Row("stack", "axis_neg", (arrays((2, 3), (2, 3), (2, 3)),), {"axis": -1}),
    Row("hstack", "matrices", (arrays((2, 3), (2, 3)),)),
    Row("hstack", "vectors", (arrays((3,), (3,), (3,)),)),
    Row("hstack", "scalars", (arrays((), ()),)),
    Row("vstack", "vectors", (arrays((3,), (3,)),)),
    Row("vstack", "matrices", (arrays((2, 3), (2, 3)),)),
    Row("dstack", "matrices", (arrays((2, 3), (2, 3)),)),
    Row("column_stack", "vectors", (arrays((3,), (3,)),)),
    Row("column_stack", "matrices", (arrays((3, 2), (3, 2)),)),
    Row("numpy.append", "flat", (normal(2, 3), normal(4)), jax="numpy.append"),
    Row("numpy.append", "axis_neg", (normal(2, 3), normal(2, 2)), {"axis": -1},
        jax="numpy.append"),
    # rearranging axes
    Row("squeeze", "all", (normal(2, 1, 3, 1),)),
    Row("squeeze", "tuple", (normal(1, 2, 1, 3),), {"axis": (0, 2)}),
    Row("squeeze", "neg", (normal(2, 3, 1),), {"axis": -1}),
    Row("expand_dims", "neg", (normal(2, 3), const(-1))),
    Row("expand_dims", "tuple", (normal(2, 3), const((0, 2)))),
    Row("atleast_1d", "scalar", (normal(),)),
    Row("atleast_2d", "vector", (normal(3),)),
    Row("atleast_3d", "matrix", (normal(2, 3),)),
    Row("swapaxes", "outer", (normal(2, 3, 4), const(0), const(2))),
    Row("swapaxes", "neg", (normal(2, 3, 4), const(-1), const(0))),
    Row("moveaxis", "front_to_back", (normal(2, 3, 4), const(0), const(-1))),
    Row("moveaxis", "tuple", (normal(2, 3, 4), const((0, 1)), const((2, 0)))),
    Row("flip", "all", (normal(2, 3, 4),)),
    Row("flip", "tuple", (normal(2, 3, 4),), {"axis": (0, -1)}),
    Row("fliplr", "3d", (normal(2, 3, 4),)),
    Row("flipud", "matrix", (normal(2, 3),)),
    Row("rot90", "once", (normal(2, 3),)),
    Row("rot90", "twice", (normal(2, 3),), {"k": 2}),
    Row("rot90", "back_axes12", (normal(2, 3, 4),), {"k": -1, "axes": (1, 2)}),
    Row("roll", "axis1", (normal(2, 3, 4), const(-1)), {"axis": 1}),
    Row("roll", "tuple", (normal(2, 3, 4), const((1, 2))), {"axis": (0, 2)}),
    # copies
    Row("broadcast_to", "column", (normal(3, 1), const((2, 3, 4)))),
    Row("broadcast_to", "vector", (normal(4,), const((3, 4)))),
    Row("tile", "int", (normal(2, 3), const(2))),
    Row("tile", "longer_reps", (normal(2, 3), const((2, 1, 3)))),
    Row("tile", "shorter_reps", (normal(2, 3, 2), const((2, 2)))),
    Row("repeat", "flat", (normal(2, 3), const(2))),
    Row("repeat", "axis_neg", (normal(2, 3, 2), const(2)), {"axis": -1}),
    Row("repeat", "array_repeats", (normal(3, 2), const(np.array([2, 0, 1]))),
        {"axis": 0}),
    Row("repeat", "array_repeats_flat", (normal(2, 2), const(np.array([1, 3, 0, 2])),)),
    # padding
    Row("pad", "per_axis", (normal(2, 3, 2), const(((1, 0), (0, 2), (1, 1))))),
    Row("pad", "constant_value", (normal(2, 3), const(1)), {"constant_values": 2.5}),
    Row("pad", "edge", (normal(2, 3), const((1, 2))), {"mode": "edge"}),
    Row("pad", "reflect", (normal(3, 4), const(((2, 1), (3, 2)))), {"mode": "reflect"}),
    Row("pad", "symmetric", (normal(3, 4), const(2)), {"mode": "symmetric"}),
    Row("pad", "wrap", (normal(2, 3), const(((1, 3), (4, 0)))), {"mode": "wrap"}),
    # constructors, differentiable in their fill value
    Row("full", "scalar", (const((2, 3)), normal())),
    Row("full", "broadcast_row", (const((2, 3)), normal(3))),
    Row("full_like", "scalar", (normal(2, 3), normal()), wrt=("fill_value",)),
    Row("full_like", "broadcast_column", (normal(2, 3), normal(2, 1))),
]

E2E = [
    E2ECase(F.f_concatenate, ("concatenate", "make_list"), (normal(2, 3), normal(4, 3))),
    E2ECase(F.f_split, ("split",), (normal(6, 2),)),
    E2ECase(F.f_array_split, ("array_split",), (normal(2, 3),)),
    E2ECase(F.f_hsplit, ("hsplit",), (normal(2, 3),)),
    E2ECase(F.f_vsplit, ("vsplit",), (normal(3, 4),)),
    E2ECase(F.f_dsplit, ("dsplit",), (normal(2, 3, 4),)),
    E2ECase(F.f_stack, ("stack",), (normal(2, 3), normal(2, 3))),
    E2ECase(F.f_hstack, ("hstack",), (normal(2, 3), normal(2, 2))),
    E2ECase(F.f_vstack, ("vstack",), (normal(2, 3), normal(2, 3))),
    E2ECase(F.f_dstack, ("dstack",), (normal(2, 3), normal(2, 3))),
    E2ECase(F.f_column_stack, ("column_stack",), (normal(2, 3), normal(3, 2))),
    E2ECase(F.f_append, ("numpy.append",), (normal(2, 3), normal(3, 3))),
    E2ECase(F.f_squeeze, ("squeeze",)),
    E2ECase(F.f_expand_dims, ("expand_dims",)),
    E2ECase(F.f_atleast_1d, ("atleast_1d",)),
    E2ECase(F.f_atleast_2d, ("atleast_2d",)),
    E2ECase(F.f_atleast_3d, ("atleast_3d",)),
    E2ECase(F.f_swapaxes, ("swapaxes",)),
    E2ECase(F.f_moveaxis, ("moveaxis",), (normal(2, 3, 4),)),
    E2ECase(F.f_flip, ("flip",)),
    E2ECase(F.f_fliplr, ("fliplr",)),
    E2ECase(F.f_flipud, ("flipud",)),
    E2ECase(F.f_rot90, ("rot90",)),
    E2ECase(F.f_roll, ("roll",)),
    E2ECase(F.f_broadcast_to, ("broadcast_to",)),
    E2ECase(F.f_broadcast_arrays, ("broadcast_arrays",), (normal(2, 3), normal(3))),
    E2ECase(F.f_meshgrid, ("meshgrid",), (normal(3), normal(2))),
    E2ECase(F.f_tile, ("tile",)),
    E2ECase(F.f_repeat, ("repeat",)),
    E2ECase(F.f_repeat_flat, ("repeat",)),
    # JAX's jit needs a static total of repeats: finite differences only
    E2ECase(F.f_repeat_counts, ("repeat",), jax=False),
    E2ECase(F.f_pad, ("pad",)),
    E2ECase(F.f_pad_modes, ("pad",), (normal(2, 3),)),
    E2ECase(F.f_full, ("full",)),
    E2ECase(F.f_full_like, ("full_like",)),
]
