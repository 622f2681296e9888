"""Rule-table entries for selecting and ordering elements: sort, take,
take_along_axis, compress, extract, delete.

Ties in sort follow a stable sort's permutation, as JAX; repeated indices in take
accumulate; negative indices count from the end.
"""

from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np

import rule_fns_indexing as F
from rule_table import E2ECase, Row, const, normal

# The table runs JAX's reference under jit, where jnp.compress and jnp.extract need a
# static output size.  A row's condition is a fixed NumPy array, so the same selection
# is jnp.take of its nonzero positions (JAX still computes the values and derivatives).
jax._s2s_static_selection = SimpleNamespace(
    compress=lambda condition, a, axis=None: jnp.take(
        a, np.flatnonzero(condition), axis=axis
    ),
    extract=lambda condition, arr: jnp.take(arr, np.flatnonzero(condition)),
)

STATIC = "_s2s_static_selection."
TIES = np.array([[3.0, 1.0, 3.0, 2.0, 1.0], [0.5, 0.5, 0.5, -1.0, 2.0]])

def _bincount_of_length(n):
    """jnp.bincount with its length given (the table's JAX reference runs under jit,
    where the labels are traced: NumPy's length for these labels)."""

    def bincount(x, weights=None, minlength=0):
        import jax.numpy as jnp

        return jnp.bincount(x, weights, minlength=minlength, length=n)

    return bincount


ROWS = [
    Row("sort", "last", (normal(2, 3, 4),)),
    Row("sort", "axis1", (normal(2, 3, 4),), {"axis": 1}),
    Row("sort", "flat", (normal(2, 3),), {"axis": None}),
    Row("sort", "ties", (const(TIES),)),
    Row("sort", "ties_axis0", (const(TIES),), {"axis": 0}),
    Row("sort", "ties_flat", (const(TIES),), {"axis": None}),
    Row("take", "flat", (normal(2, 3), const(np.array([4, 0, 4, -1, 2])))),
    Row("take", "axis1", (normal(2, 3, 4), const(np.array([2, 0, 2]))), {"axis": 1}),
    Row("take", "axis_neg_2d_indices",
        (normal(2, 3, 4), const(np.array([[3, 0], [3, -1]]))), {"axis": -1}),
    Row("take", "scalar_index", (normal(3, 4), const(2)), {"axis": 0}),
    Row("take_along_axis", "axis2",
        (normal(2, 3, 4), const(np.array([[[2], [0], [2]], [[1], [1], [0]]]))),
        {"axis": 2}),
    Row("take_along_axis", "permutation",
        (normal(3, 4), const(np.array([[3, 0, 1, 2]] * 3))), {"axis": 1}),
    Row("take_along_axis", "broadcast_indices",
        (normal(3, 4), const(np.array([[2, 0, 0, 1]]))), {"axis": 0}),
    Row("take_along_axis", "neg", (normal(2, 3), const(np.array([[0, 0], [2, 1]]))),
        {"axis": -1}),
    Row("take_along_axis", "flat", (normal(2, 3), const(np.array([5, 0, 5, 1]))),
        {"axis": None}),
    Row("compress", "axis1", (const(np.array([True, False, True])), normal(2, 3, 4)),
        {"axis": 1}, jax=STATIC + "compress"),
    Row("compress", "flat", (const(np.array([False, True, True, False, True])),
                             normal(2, 3)), jax=STATIC + "compress"),
    Row("compress", "short_condition", (const(np.array([False, True])), normal(3, 2)),
        {"axis": 0}, jax=STATIC + "compress"),
    Row("extract", "matrix", (const(TIES > 1.0), normal(2, 5)),
        jax=STATIC + "extract"),
    Row("delete", "flat", (normal(2, 3), const(np.array([0, 4])))),
    Row("delete", "axis1", (normal(2, 3, 4), const(1)), {"axis": 1}),
    Row("delete", "axis_neg_array", (normal(2, 3, 4), const(np.array([0, 2]))),
        {"axis": -1}),
    Row("delete", "slice", (normal(5, 2), const(slice(1, 4, 2))), {"axis": 0}),
    Row("bincount", "weights", (const(np.array([0, 2, 0, 4, 2])), normal(5)),
        jax=_bincount_of_length(5)),
    Row("bincount", "minlength", (const(np.array([3, 1, 1, 0])), normal(4)), {"minlength": 6},
        jax=_bincount_of_length(6)),
]

E2E = [
    E2ECase(F.f_sort, ("sort",)),
    E2ECase(F.f_sort_flat, ("sort",)),
    E2ECase(F.f_take, ("take",), (normal(3, 3),)),
    E2ECase(F.f_take_method, ("take",), (normal(2, 3),)),
    E2ECase(F.f_take_along_axis, ("take_along_axis",)),
    # jnp.compress and jnp.extract cannot size their output under jit (the E2E
    # reference is jitted): finite differences only
    E2ECase(F.f_compress, ("compress",), jax=False),
    E2ECase(F.f_extract, ("extract",), jax=False),
    E2ECase(F.f_extract_data_dependent, ("extract",), jax=False),
    E2ECase(F.f_delete, ("delete",)),
    # jnp.bincount's length under jit (the reference is jitted) needs length=: finite
    # differences here, jax.grad op by op in tests/test_ufunc16.py
    E2ECase(F.f_bincount, ("bincount",), (normal(4),), jax=False),
    # an axis in a name: the rules' `if axis is None` is decided at run time
    E2ECase(F.f_take_axis_argument, ("take",), (normal(3, 3),), static=(0,)),
    E2ECase(F.f_take_neg_axis_argument, ("take",), (normal(3, 3),), static=(-1,)),
    E2ECase(F.f_sort_axis_argument, ("sort",), static=(0,)),
    E2ECase(F.f_sort_flat_axis_argument, ("sort",), static=(None,)),
]
