"""The fourteenth newcomer probe's cases (issue 23): each function of
newcomer_probe14_fns.py with arguments and special first arguments (kinks of
``np.abs``/``np.maximum``/``np.clip``/``np.sign``, ties of a sort, a max or an argmin,
zeros, points at the data), run through s2s (grad at calls 1, 3 and 10 with changing
values, value_and_grad, jvp, vmap of grad, hessian, jit of grad on both backends, grad at
the special inputs, also after ten ordinary calls of grad and jit of grad, vmap of grad
at them, the caller writing into every transform's results) in float64 or float32,
compared with JAX on the same source (``newcomer_harness.twin``) or central differences
where JAX cannot run a stage, by newcomer_harness.classify."""

from __future__ import annotations

import newcomer_harness as H
import newcomer_probe14_fns as F
import numpy as np

R = np.random.default_rng(14)
X2 = np.array([0.3, -0.7])
X3 = np.array([0.3, -0.7, 0.45])
X4 = np.array([0.3, -0.7, 0.45, 1.2])
X5 = np.array([0.3, -0.7, 0.45, 1.2, -0.1])
X6 = np.array([0.3, -0.7, 0.45, 1.2, -0.1, 0.8])
M22 = np.array([[0.4, -1.1], [0.7, 0.2]])
M32 = R.normal(size=(3, 2))
M33 = R.normal(size=(3, 3))
M42 = R.normal(size=(4, 2))
M43 = R.normal(size=(4, 3))

# name: (arguments, {label: special first argument})
CASES = {
    # optimisers written as functions of the parameters
    "rmsprop_steps": ((X4,), {"zeros": np.zeros(4)}),
    "adagrad_dict_state": ((X4,), {"zeros": np.zeros(4)}),
    "nesterov_lookahead": ((X4,), {"zeros": np.zeros(4)}),
    "lion_sign_step": ((X4,), {"zeros": np.zeros(4)}),
    "clip_by_value_sgd": ((X4,), {"zeros": np.zeros(4)}),
    "damped_newton_solve": ((X4,), {"zeros": np.zeros(4)}),
    # losses
    "crammer_singer_hinge": ((M33,), {"tie": np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0],
                                                       [0.5, 0.5, 0.5]])}),
    "log_cosh_loss": ((X6,), {"at_target": F.TARGET.copy()}),
    "js_divergence": ((X6,), {"zeros": np.zeros(6)}),
    "wasserstein_1d_sorted": ((X5,), {"ties": np.array([1.0, 1.0, 0.0, 0.0, 1.0]),
                                      "at_data": F.DATA[:5][::-1].copy()}),
    "pairwise_ranking_hinge": ((X4,), {"at_margin": np.array([1.5, 0.0, 1.0, -0.5]),
                                       "zeros": np.zeros(4)}),
    "cosine_embedding_loss": ((M32,), {"at_margin": F.PAIRS_Y.copy()}),
    "kl_mvn_full": ((M33 * 0.5 + np.eye(3),), {"identity": np.eye(3)}),
    # physics
    "orbital_energy_momentum": ((np.array([1.0, 0.2, -0.1, 0.1, 0.9, 0.3]),),
                                {"circular": np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0])}),
    "fpu_chain_energy": ((X5,), {"zeros": np.zeros(5)}),
    "xy_model_energy": ((M33,), {"aligned": np.full((3, 3), 0.4)}),
    "inertia_tensor_energy": ((M43,), {"points": F.POINTS43.copy()}),
    "masked_gravity_potential": ((M42 + np.array([[0, 0], [2, 0], [0, 2], [2, 2]]),),
                                 {"square": np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0],
                                                      [1.0, 1.0]])}),
    "lif_neuron_soft": ((np.abs(X6) + 0.5,), {"zeros": np.zeros(6)}),
    # statistics
    "poisson_mixture_logaddexp": ((np.array([0.2, 1.1, 0.3]),),
                                  {"equal_rates": np.array([0.5, 0.5, 0.0])}),
    "laplace_loglik": ((X2,), {"at_datum": np.array([F.DATA[3], 0.0])}),
    "zero_inflated_poisson_nll": ((X2,), {"zeros": np.zeros(2)}),
    "ar1_loglik": ((X2,), {"zeros": np.zeros(2)}),
    "gamma_loglik_xlogy": ((X2,), {"shape_one": np.array([0.0, 0.3])}),
    "robust_kernel_by_name": ((X6,), {"at_target": F.TARGET.copy()}),
    "smooth_ks_statistic": ((X5,), {"zeros": np.zeros(5)}),
    # signal processing
    "moving_average_convolve": ((X6,), {"zeros": np.zeros(6)}),
    "diff_chain_curvature": ((X6,), {"line": np.linspace(0.0, 1.0, 6)}),
    "hamming_frames": ((X6,), {"zeros": np.zeros(6)}),
    "soft_argmax_peak": ((X5,), {"tie_max": np.array([1.0, 0.0, 1.0, -1.0, 0.5])}),
    # geometry
    "gram_trick_sqdist": ((M32,), {"coincident": np.array([[0.5, 0.5], [0.5, 0.5],
                                                           [0.0, 1.0]])}),
    "rodrigues_rotation": ((X3,), {"axis": np.array([0.0, 0.0, 1.0])}),
    "triangle_mesh_area": ((F.POINTS43 + 0.1 * M43,), {"points": F.POINTS43.copy()}),
    "procrustes_svd": ((M42,), {"target": F.B42.copy()}),
    "polar_hypot_arctan2": ((X6,), {"axes": np.array([1.0, 0.0, 0.0, 1.0, -1.0, 0.0])}),
    # Python styles
    "staticmethod_classmethod_callees": ((X4,), {"ties": np.array([1.0, 1.0, 0.0, 0.0])}),
    "while_true_break": ((X4,), {"zeros": np.zeros(4)}),
    "nested_helper_kwargs": ((X4,), {"zeros": np.zeros(4)}),
    "enumerate_dict_items_penalty": ((X5,), {"zeros": np.zeros(5)}),
    "string_keyed_config_get": ((X4,), {"zeros": np.zeros(4)}),
    "where_combined_masks": ((X6,), {"edges": np.array([-0.5, 1.0, 0.0, 0.2, -2.0, 3.0])}),
    "einsum_strings_batch": ((M33,), {"identity": np.eye(3)}),
    "relu6_clip_none": ((X4 * 2,), {"kinks": np.array([0.0, 2.0, -1.0, 3.0])}),
    "sum_with_start": ((X4,), {"zeros": np.zeros(4)}),
    "unflatten_params_dict": ((np.linspace(-0.8, 0.9, 10),), {"zeros": np.zeros(10)}),
    "zip_dict_items_layers": ((X4,), {"zeros": np.zeros(4)}),
    "tridiagonal_diag_k": ((X4,), {"zeros": np.zeros(4)}),
    "piecewise_branches": ((X4,), {"zeros": np.zeros(4)}),
    "array_split_uneven": ((X5,), {"zeros": np.zeros(5)}),
    "list_sort_key_lambda": ((X4,), {"zeros": np.zeros(4)}),
    "handwritten_scan": ((X5,), {"zeros": np.zeros(5)}),
    "hard_kmeans_argmin": ((M32,), {"equidistant": np.array([[0.5, 0.5], [0.0, 0.0],
                                                             [1.0, 1.0]])}),
}
# no JAX oracle for this source: central differences
FD_ORACLE: frozenset = frozenset()
NO_HESSIAN: frozenset = frozenset()

PROBE = H.Probe(F, CASES, H.STAGES, no_hessian=NO_HESSIAN, tol64=(1e-6, 1e-8),
                warm=("g", "jit"), fd_oracle=FD_ORACLE)
twin, classify, jax_grad_runs = PROBE.twin, PROBE.classify, PROBE.jax_grad_runs
