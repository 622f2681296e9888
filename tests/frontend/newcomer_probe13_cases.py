"""The thirteenth newcomer probe's cases (issue 23): each function of
newcomer_probe13_fns.py with arguments and special first arguments (kinks of
``np.clip``/``np.maximum``/``np.where``/``np.abs``, ties of a max or a median, zeros, a
point where JAX's own derivative is NaN), run through s2s (grad at calls 1, 3 and 10
with changing values, value_and_grad, jvp, vmap of grad, hessian, jit of grad on both
backends, grad at the special inputs, also after ten ordinary calls of grad and jit of
grad, vmap of grad at them, the caller writing into every transform's results) in
float64 or float32, compared with JAX on the same source (``newcomer_harness.twin``) or
central differences where JAX cannot run a stage (``walrus_if_norm``'s ``if`` on a
traced value), by newcomer_harness.classify."""

from __future__ import annotations

import newcomer_harness as H
import newcomer_probe13_fns as F
import numpy as np

R = np.random.default_rng(13)
X2 = np.array([0.3, -0.7])
X3 = np.array([0.3, -0.7, 0.45])
X4 = np.array([0.3, -0.7, 0.45, 1.2])
X5 = np.array([0.3, -0.7, 0.45, 1.2, -0.1])
X6 = np.array([0.3, -0.7, 0.45, 1.2, -0.1, 0.8])
M22 = np.array([[0.4, -1.1], [0.7, 0.2]])
M33 = R.normal(size=(3, 3))
M43 = R.normal(size=(4, 3))
ALT6 = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])

# name: (arguments, {label: special first argument})
CASES = {
    # signal processing
    "windowed_fft_magnitude": ((X6,), {"ones": np.ones(6)}),
    "fir_filter_slicing": ((X6,), {"zeros": np.zeros(6)}),
    "autocorrelation_lags": ((X6,), {"alternating": ALT6}),
    "np_correlate_full": ((X4,), {"zeros": np.zeros(4)}),
    "exp_smoother_list": ((X5,), {"zeros": np.zeros(5)}),
    "fft_lowpass_irfft": ((X6,), {"zeros": np.zeros(6)}),
    "detrend_polyfit": ((X5,), {"line": np.linspace(0.0, 1.0, 5)}),
    # statistics
    "student_t_loglik": ((X5,), {"at_data": F.DATA[:5].copy()}),
    "von_mises_loglik": ((X2,), {"zeros": np.zeros(2)}),
    "kde_log_density": ((X3,), {"at_data": F.DATA[:3].copy()}),
    "robust_loss_by_name": ((X6,), {"at_c": F.DATA + np.array([1.0, -1.0, 2.0, -2.0, 0.0,
                                                                 0.5])}),
    "median_abs_deviation": ((X5,), {"ties": np.array([1.0, 1.0, 1.0, 0.0, 2.0])}),
    "weighted_cov_aweights": ((X4,), {"zeros": np.zeros(4)}),
    "probit_log_ndtr": ((X3,), {"zeros": np.zeros(3)}),
    "logsumexp_b_weights": ((X4,), {"equal": np.ones(4)}),
    # geometry
    "quaternion_rotate": ((X4,), {"identity": np.array([1.0, 0.0, 0.0, 0.0])}),
    "quaternion_to_matrix": ((X4,), {"identity": np.array([1.0, 0.0, 0.0, 0.0])}),
    "barycentric_coords": ((X2,), {"vertex": np.array([2.0, 0.0])}),
    "polygon_area_shoelace": ((M43[:, :2] + np.array([[0, 0], [2, 0], [2, 2], [0, 2]]),),
                              {"square": np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0],
                                                   [0.0, 1.0]])}),
    "sdf_union": ((X2,), {"inside_box": np.array([0.1, 0.05]),
                          "circle_edge": np.array([1.5, 0.0])}),
    "point_segment_distance": ((X2,), {"endpoint": np.array([2.0, 1.0]),
                                       "on_segment": np.array([1.0, 0.5])}),
    "haversine_distance": ((np.array([10.0, 20.0, 30.0, 45.0]),),
                           {"same_point": np.array([10.0, 20.0, 10.0, 20.0])}),
    # finance
    "black_scholes_call": ((np.array([1.1, 0.3, 0.5]),),
                           {"at_the_money": np.array([1.0, 0.2, 1.0])}),
    "portfolio_variance": ((np.array([0.3, 0.5, 0.2]),), {"equal": np.ones(3)}),
    "compound_interest_while": ((X3 * 0.1,), {"zeros": np.zeros(3)}),
    "sharpe_ratio": ((X6 * 0.01,), {"alternating": ALT6 * 0.01}),
    "mc_option_seeded": ((np.array([1.0, 0.2]),), {"low_vol": np.array([1.0, 0.01])}),
    # classic ML
    "svm_hinge_l2": ((X3,), {"margin_kink": np.array([1.0, 0.0, 0.0])}),
    "gmm_e_step": ((np.array([-0.5, 0.8]),), {"equal": np.array([0.3, 0.3])}),
    "soft_kmeans_kwonly": ((M22,), {"equal": np.array([[0.5, 0.5], [0.5, 0.5]])}),
    "pca_reconstruction_error": ((M43,), {"scaled": M43 * 10.0}),
    "kernel_ridge_lengthscale": ((X2,), {"zeros": np.zeros(2)}),
    "dict_params_mlp": ((np.linspace(-0.8, 0.9, 9),), {"zeros": np.zeros(9)}),
    # small simulators
    "pendulum_verlet_energies": ((X2,), {"zeros": np.zeros(2)}),
    "heat_2d_periodic": ((M33,), {"flat": np.ones((3, 3))}),
    "ising_soft_energy": ((M33,), {"zeros": np.zeros((3, 3))}),
    "wave_leapfrog_swap": ((X6,), {"zeros": np.zeros(6)}),
    "lotka_volterra_dict": ((np.array([1.0, 0.5]),), {"zeros": np.zeros(2)}),
    # Python styles
    "early_return_modes": ((X4,), {"tie_max": np.array([1.0, 0.0, 1.0, 0.0])}),
    "elif_chain_optimizer": ((X4,), {"zeros": np.zeros(4)}),
    "while_counter_bisection": ((X4,), {"zeros": np.zeros(4)}),
    "walrus_if_norm": ((X4,), {"small": X4 * 0.1}),
    "match_string_capture": ((X4,), {"zeros": np.zeros(4)}),
    "nested_helper_kwonly": ((X4,), {"zeros": np.zeros(4)}),
    "kwonly_scale_shift": ((X4,), {"zeros": np.zeros(4)}),
    "continue_static_loop": ((X5,), {"zeros": np.zeros(5)}),
    "sorted_items_zip": ((X4,), {"zeros": np.zeros(4)}),
    "for_else_search": ((X4,), {"zeros": np.zeros(4)}),
    "lambda_helpers_dict": ((X4,), {"zeros": np.zeros(4)}),
    "enumerate_start_weights": ((X4,), {"zeros": np.zeros(4)}),
    "star_unpack_call": ((X4,), {"zeros": np.zeros(4)}),
    "isinstance_param_branch": ((X4,), {"zeros": np.zeros(4)}),
    "slots_class_layer": ((X4,), {"zeros": np.zeros(4)}),
}
# no JAX oracle for this source: central differences
FD_ORACLE: frozenset = frozenset()
NO_HESSIAN: frozenset = frozenset()

PROBE = H.Probe(F, CASES, H.STAGES, no_hessian=NO_HESSIAN, tol64=(1e-6, 1e-8),
                warm=("g", "jit"), fd_oracle=FD_ORACLE)
twin, classify, jax_grad_runs = PROBE.twin, PROBE.classify, PROBE.jax_grad_runs
