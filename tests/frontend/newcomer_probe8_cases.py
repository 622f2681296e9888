"""The eighth newcomer probe's cases (issue 23): each function of newcomer_probe8_fns.py
with arguments and special first arguments (kinks, ties, size-1 and 0-size axes, NaN,
saturation), run through s2s (grad at calls 1, 3 and 10 with changing values, jvp, vmap
of grad, hessian, jit of grad on both backends, grad at the special inputs, also after
ten ordinary calls of grad and jit of grad, vmap of grad at them, the caller writing
into a result) in float64 or float32, compared with JAX on the same source
(``newcomer_harness.twin``) or central differences where JAX cannot run it, by
newcomer_harness.classify."""

from __future__ import annotations

import newcomer_harness as H
import newcomer_probe8_fns as F
import numpy as np

R = np.random.default_rng(8)
X4 = np.array([0.3, -0.7, 0.45, 1.2])
X5 = np.array([0.3, -0.7, 0.45, 1.2, 0.1])

# name: (arguments, {label: special first argument})
CASES = {
    # classes and containers
    "super_init_property": ((X4,), {"zeros": np.zeros(4)}),
    "getitem_len_container": ((X4,), {"one": np.array([0.3])}),
    "iter_container": ((X4,), {"one": np.array([0.3]), "empty": np.zeros(0)}),
    "operator_overload_vec": ((X4,), {}),
    "property_setter_update": ((X4,), {"one": np.array([0.3])}),
    "abc_abstract_layers": ((X4,), {"kinks": np.zeros(4)}),
    "dataclass_field_factory": ((X4,), {"zeros": np.zeros(4)}),
    "generator_batches": ((X5,), {"one": np.array([0.3])}),
    # scipy.special
    "gelu_erf_exact": ((X4,), {"zeros": np.zeros(4)}),
    "negbin_gammaln_nll": ((np.array([0.3, -0.2]),), {"zeros": np.zeros(2)}),
    "beta_loglik_betaln": ((np.array([0.4, 0.1]),), {"zeros": np.zeros(2)}),
    "expit_logit_calibration": ((X4,), {"saturated": np.array([20.0, -20.0, 0.0, 3.0])}),
    "dirichlet_kl_digamma": ((np.array([0.1, -0.3, 0.5]),), {"zeros": np.zeros(3)}),
    "special_softmax_keepdims": ((R.normal(size=(2, 3)),), {"ties": np.zeros((2, 3))}),
    # Python idioms
    "train_step_returns_dict": ((np.array([0.2, -0.1]),), {"zeros": np.zeros(2)}),
    "enumerate_zip_nested_unpack": ((X4,), {"one": np.array([0.3])}),
    "reversed_list_layers": ((np.array([0.3, -0.7]),), {"zeros": np.zeros(2)}),
    "walrus_comprehension_scan": ((np.array([0.3, -0.7]),), {"one": np.array([0.3])}),
    "match_mapping_pattern": ((X4,), {"kinks": np.zeros(4)}),
    "shape_fstring_checks": ((R.normal(size=(2, 3)),), {"one_row": np.array([[0.3, -0.4, 0.2]])}),
    "typing_npt_callable": ((X4,), {"one": np.array([0.3])}),
    "math_fsum_terms": ((X4,), {}),
    "itertools_combinations_pairs": ((X4,), {"ties": np.array([1.0, 1.0, 1.0, 0.5])}),
    "functools_reduce_matmul": ((np.array([[0.3, -0.7], [0.45, 1.2]]),), {}),
    # NumPy idioms
    "einsum_ellipsis_tensordot": ((R.normal(size=(2, 2, 3)),), {}),
    "isfinite_where_guard": ((X4,), {"nan_pred": np.array([np.nan, 0.1, np.nan, 0.2])}),
    "norm_ord_axis": ((R.normal(size=(3, 2)),),
                      {"ties": np.array([[1.0, -1.0], [1.0, 0.0], [-1.0, 0.2]])}),
    "clip_one_bound": ((X4,), {"at_bounds": np.array([-0.5, 1.0, 0.0, 0.4])}),
    "cumsum_emd_returns": ((X4,), {"ties": np.zeros(4)}),
    "class_centroids_masked_mean": ((R.normal(size=(5, 2)),), {}),
    "take_along_axis_nll": ((R.normal(size=(3, 3)),),
                            {"ties": np.array([[1.0, 1.0, 0.0], [0.5, 0.5, 0.5],
                                               [2.0, -1.0, -1.0]])}),
    "pad_modes_stencil": ((X5,), {"two": np.array([0.3, -0.7])}),
    "polyder_polyint": ((np.array([0.5, -1.0, 0.0, 2.0]),), {"one": np.array([0.5])}),
    "softplus_three_ways": ((X4,), {"big": np.array([30.0, -30.0, 0.0, 5.0])}),
    "multihead_causal_attention": ((R.normal(size=(3, 4)),), {}),
    "huber_minimum_logcosh": ((X4,), {"kinks": np.array([1.0, -1.0, 0.0, 0.5])}),
    "where_kwarg_reductions": ((X4,), {"all_neg": np.array([-1.0, -0.5, -0.2, -2.0]),
                                       "ties": np.array([1.0, 0.0, 1.0, 0.5])}),
    "dihedral_cross_arctan2": ((R.normal(size=(4, 3)),), {}),
    "triu_indices_pairwise": ((R.normal(size=(4, 2)),), {}),
    "prod_with_zeros": ((X4,), {"one_zero": np.array([0.0, 0.5, -1.0, 2.0]),
                                "two_zeros": np.array([0.0, 0.5, 0.0, 2.0])}),
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
