"""The seventh newcomer probe's cases (issue 23): each function of newcomer_probe7_fns.py
with arguments and special first arguments (kinks, ties, size-1 and 0-size axes, NaN),
run through s2s (grad at calls 1, 3 and 10 with changing values, jvp, vmap of grad,
hessian, jit of grad on both backends, grad at the special inputs, also after ten
ordinary calls of grad, jit of grad and hessian, vmap of grad at them, the caller
writing into a result) in float64 or float32, compared with JAX on the same source
(``newcomer_harness.twin``) or central differences where JAX cannot run it, by
newcomer_harness.classify."""

from __future__ import annotations

import newcomer_harness as H
import newcomer_probe7_fns as F
import numpy as np

R = np.random.default_rng(7)
X4 = np.array([0.3, -0.7, 0.45, 1.2])

# name: (arguments, {label: special first argument})
CASES = {
    "adam_loop": ((X4,), {"at_target": np.array([1.0, -0.5, 0.25, 2.0])}),
    "early_stop_train": ((np.array([0.2, -0.1]),), {"zeros": np.zeros(2)}),
    "cosine_lr_loop": ((X4,), {"one": np.array([0.3]), "empty": np.zeros(0)}),
    "clip_grad_norm_step": ((np.array([0.3, -0.7, 0.45, 0.2]),),
                            {"clip_kinks": np.array([1.0, -1.0, 0.5, 0.2]),
                             "one": np.array([0.3])}),
    "verlet_two_body": ((np.array([[0.0, 0.1], [1.2, -0.2]]),), {}),
    "gauss_loglik_slogdet": ((np.array([0.1, -0.3]),), {"zeros": np.zeros(2)}),
    "matern_kernel_quadform": ((R.normal(size=(3, 2)),), {}),
    "cholesky_scipy_solve": ((np.array([0.3, -0.7, 0.9]),), {}),
    "stats_norm_mixture": ((np.array([-0.8, 1.1]),), {"tie": np.array([0.5, 0.5])}),
    "logsumexp_weighted_axis": ((R.normal(size=(2, 3)),),
                                {"ties": np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 2.0]]),
                                 "neg_inf": np.array([[-np.inf, 0.0, 1.0], [0.5, 0.0, 0.0]])}),
    "lstsq_fit_residual": ((np.array([0.1, 0.6, 0.8, 1.7, 1.9]),), {}),
    "softplus_logaddexp": ((X4,), {"zeros": np.zeros(4), "big": np.array([40.0, -40.0, 800.0, -800.0])}),
    "pinball_where": ((X4,), {"kinks": np.array([0.1, -0.2, 0.5, 1.0])}),
    "class_weighted_log_softmax": ((R.normal(size=(3, 3)),), {"ties": np.zeros((3, 3))}),
    "boolean_index_by_labels": ((R.normal(size=(4, 2)),), {}),
    "dict_comprehension_params": ((X4,), {"one": np.array([0.3])}),
    "super_call_hierarchy": ((X4,), {"zeros": np.zeros(4)}),
    "chained_properties": ((X4,), {}),
    "staticmethod_by_class": ((X4,), {}),
    "enum_config": ((X4,), {"kinks": np.array([0.0, -0.0, 1.0, -1.0])}),
    "frozen_dataclass_call": ((X4,), {}),
    "nonlocal_counter": ((X4,), {}),
    "annotated_locals": ((X4,), {"empty": np.zeros(0)}),
    "tuple_defaults_reshape": ((R.normal(size=6),), {}),
    "math_constants_periodic": ((X4,), {"one": np.array([0.3])}),
    "recursive_nested_list": ((np.array([0.3, -0.7, 0.45, 1.2, 0.1]),), {}),
    "series_while_tolerance": ((X4,), {"zeros": np.zeros(4)}),
    "generator_sum_penalty": ((np.array([0.3, -0.7]),), {"kinks": np.zeros(2)}),
    "filtered_comprehension": ((X4,), {}),
    "einsum_bilinear": ((R.normal(size=(2, 3)),), {}),
    "cosine_similarity_norm_axis": ((R.normal(size=(3, 2)),), {"one_row": np.array([[0.3, -0.4]])}),
    "quadratic_form_transpose": ((np.array([0.3, -0.7]),), {"zeros": np.zeros(2)}),
    "reversed_and_strided": ((np.array([0.3, -0.7, 0.45, 1.2, 0.1]),), {"one": np.array([0.3])}),
    "sliding_window_mean": ((np.array([0.3, -0.7, 0.45, 1.2, 0.1]),),
                            {"ties": np.array([1.0, 1.0, 1.0, 0.5, 0.5])}),
    "meshgrid_surface": ((X4,), {"one": np.array([0.3])}),
    "outer_trace_kron": ((X4,), {}),
    "vectorize_python_fn": ((X4,), {"one": np.array([0.3])}),
    "apply_along_axis_rows": ((R.normal(size=(3, 2)),), {"one_col": np.array([[0.3], [0.5]])}),
    "topk_sorted_reverse": ((X4,), {"ties": np.array([1.0, 1.0, 1.0, -0.5])}),
    "inv_det_solve": ((np.array([0.3, -0.7, 0.45]),), {"zeros": np.zeros(3)}),
}
NO_HESSIAN: frozenset = frozenset()

PROBE = H.Probe(F, CASES, ("grad", "jvp", "vmap_grad", "hessian", "jit", "jit_jax",
                           "special", "warm_special", "vmap_special", "alias"),
                no_hessian=NO_HESSIAN, tol64=(1e-6, 1e-8))


def classify(name, J, dtype=np.float64, stages=None):
    """``(label, {stage: verdict})``: newcomer_harness.classify of this probe."""
    return H.classify(PROBE, name, J, dtype, stages)


def jax_grad_runs(name, J) -> str:
    return H.jax_grad_runs(PROBE, name, J)
