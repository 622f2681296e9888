"""The ninth newcomer probe's cases (issue 23): each function of newcomer_probe9_fns.py
with arguments and special first arguments (kinks at 0, NaN in a branch not taken,
ties, size-1 and 0-size axes, a zero row), run through s2s (grad at calls 1, 3 and 10
with changing values, value_and_grad, jvp, vmap of grad, hessian, jit of grad on both
backends, grad at the special inputs, also after ten ordinary calls of grad and jit of
grad and hessian, vmap of grad at them, the caller writing into every transform's
results) in float64 or float32, compared with JAX on the same source
(``newcomer_harness.twin``) or central differences where JAX cannot run it, by
newcomer_harness.classify.  The functions whose result is an array (``VECTOR``: an
argument returned, a view of it) run under jvp, vjp, vmap, jacfwd, jacrev and jit
instead of grad.  Module state changed between calls is the test file's
(``STATE``)."""

from __future__ import annotations

import newcomer_harness as H
import newcomer_probe9_fns as F
import numpy as np

R = np.random.default_rng(9)
X4 = np.array([0.3, -0.7, 0.45, 1.2])
M32 = R.normal(size=(3, 2))
KINKS = np.array([0.0, -0.7, 0.0, 1.2])

# name: (arguments, {label: special first argument})
CASES = {
    # module state (changed between calls by the test file's STATE)
    "module_array_weights": ((X4,), {"zeros": np.zeros(4)}),
    "module_dict_coef": ((X4,), {"zeros": np.zeros(4)}),
    "class_attr_rate": ((X4,), {"zeros": np.zeros(4)}),
    "global_flag_l1": ((X4,), {"kinks": KINKS}),
    "closure_rebound": ((X4,), {"zeros": np.zeros(4)}),
    "module_list_terms": ((X4,), {"zeros": np.zeros(4)}),
    "array_default_written": ((X4,), {"zeros": np.zeros(4)}),
    # integer, bool, 0-d arguments; Python floats with float32
    "int_power_arg": ((X4, 3), {"zeros": np.zeros(4)}),
    "bool_normalize_arg": ((X4, True), {"one_zero": KINKS}),
    "zero_d_input": ((np.array(0.4),), {"zero": np.array(0.0)}),
    "int_index_arg": ((X4, 2), {"zeros": np.zeros(4)}),
    "python_float_consts": ((X4,), {"zeros": np.zeros(4)}),
    # kinks, NaN and inf
    "relu_at_zero": ((X4,), {"kinks": KINKS, "zeros": np.zeros(4)}),
    "abs_at_zero": ((X4,), {"kinks": KINKS}),
    "where_nan_untaken": ((X4,), {"kinks": KINKS, "negative": -np.abs(X4)}),
    "sqrt_at_zero": ((X4,), {"zeros": np.zeros(4)}),
    "norm_rows_zero": ((M32,), {"zero_row": np.array([[0.0, 0.0], [1.0, -2.0], [0.5, 0.5]]),
                                "zeros": np.zeros((3, 2))}),
    "clip_bounds": ((X4,), {"at_bounds": np.array([-0.5, 0.5, 0.0, 0.25])}),
    # size-0 and size-1 axes, keepdims
    "mean_keepdims_center": ((M32,), {"one_col": np.array([[0.3], [-0.2], [0.5]]),
                                      "one_row": np.array([[0.3, -0.2]]),
                                      "ties": np.ones((3, 2))}),
    "standardize_rows": ((M32,), {"one_col": np.array([[0.3], [-0.2], [0.5]]),
                                  "ties": np.ones((3, 2))}),
    "sum_over_empty_axis": ((M32,), {"empty_rows": np.zeros((0, 2)),
                                     "one_row": np.array([[0.3, -0.2]])}),
    "logsumexp_keepdims": ((M32,), {"one_col": np.array([[0.3], [-0.2], [0.5]]),
                                    "ties": np.zeros((3, 2))}),
    # argmax, sort, unique
    "argmax_pick": ((X4,), {"ties": np.array([1.2, -0.7, 1.2, 0.3])}),
    "sort_topk": ((X4,), {"ties": np.array([0.5, 0.5, 0.5, -0.1])}),
    "unique_label_means": ((R.normal(size=6), np.array([0, 2, 0, 1, 2, 2])), {}),
    "argsort_rank_weights": ((X4,), {"ties": np.array([0.5, 0.5, -1.0, 0.5])}),
    # in-place updates
    "inplace_index_add": ((X4,), {"zeros": np.zeros(4)}),
    "masked_assign": ((X4,), {"negative": -np.abs(X4)}),  # (no kink: JAX refuses, the
    # oracle is central differences, which average the two sides of one)
    "loop_accumulate_rows": ((M32,), {"one_row": np.array([[0.3, -0.2]])}),
    # einsum, cumsum
    "einsum_bilinear_trace": ((np.array([0.3, -0.7, 0.45]),), {"one": np.array([0.3])}),
    "cumsum_discounted": ((X4,), {"one": np.array([0.3])}),
    # results that are an argument or a view of it
    "identity_return": ((X4,), {}),
    "strided_view": ((np.array([0.3, -0.7, 0.45, 1.2, 0.1]),), {}),
    "transpose_view": ((M32,), {}),
    "reshape_view": ((M32,), {}),
    "arg_and_computed": ((X4,), {}),
    "squeeze_or_copy": ((np.array([[0.3, -0.7, 0.45]]),), {}),
    "asarray_passthrough": ((X4,), {}),
    "relu_vector": ((X4,), {}),
    "clip_copy_inplace": ((X4,), {}),
}
VECTOR = frozenset(("identity_return", "strided_view", "transpose_view", "reshape_view",
                    "arg_and_computed", "squeeze_or_copy", "asarray_passthrough",
                    "relu_vector", "clip_copy_inplace"))
NO_HESSIAN: frozenset = frozenset({"unique_label_means", "sum_over_empty_axis"})

PROBE = H.Probe(F, CASES, ("grad", "value_and_grad", "jvp", "vmap_grad", "hessian", "jit",
                           "jit_jax", "special", "warm_special", "vmap_special", "alias",
                           "alias_all"),
                no_hessian=NO_HESSIAN, tol64=(1e-6, 1e-8), warm=("g", "jit", "hvp"))
VECTOR_PROBE = H.Probe(F, CASES, ("jvp", "vjp", "vmap", "jacfwd", "jacrev", "jit_value",
                                  "alias_all"))


def classify(name, J, dtype=np.float64, stages=None):
    """``(label, {stage: verdict})``: newcomer_harness.classify of this probe."""
    return H.classify(VECTOR_PROBE if name in VECTOR else PROBE, name, J, dtype, stages)


def jax_grad_runs(name, J) -> str:
    return H.jax_grad_runs(PROBE, name, J)
