"""The twelfth newcomer probe's cases (issue 23): each function of
newcomer_probe12_fns.py with arguments and special first arguments (kinks of
``np.where``/``np.abs``/``np.minimum``, ties of a max, zeros, a NaN where the mask drops
it), run through s2s (grad at calls 1, 3 and 10 with changing values, value_and_grad,
jvp, vmap of grad, hessian, jit of grad on both backends, grad at the special inputs,
also after ten ordinary calls of grad and jit of grad, vmap of grad at them, the caller
writing into every transform's results) in float64 or float32, compared with JAX on the
same source (``newcomer_harness.twin``) or central differences where JAX cannot run it,
by newcomer_harness.classify.

No function lacks a JAX oracle (``FD_ORACLE`` is empty): JAX runs every source as
written (its ``grad`` at least; where a jit of JAX refuses, central differences are the
oracle of that stage)."""

from __future__ import annotations

import newcomer_harness as H
import newcomer_probe12_fns as F
import numpy as np

R = np.random.default_rng(12)
X2 = np.array([0.3, -0.7])
X3 = np.array([0.3, -0.7, 0.45])
X4 = np.array([0.3, -0.7, 0.45, 1.2])
X5 = np.array([0.3, -0.7, 0.45, 1.2, -0.1])
X6 = np.array([0.3, -0.7, 0.45, 1.2, -0.1, 0.8])
M22 = np.array([[0.4, -1.1], [0.7, 0.2]])
M32 = R.normal(size=(3, 2))
M33 = R.normal(size=(3, 3))
M34 = R.normal(size=(3, 4))
M42 = R.normal(size=(4, 2))
M44 = R.normal(size=(4, 4))

# name: (arguments, {label: special first argument})
CASES = {
    # training-loop fragments
    "momentum_object_dict": ((X4,), {"zeros": np.zeros(4)}),
    "global_norm_clip_list": ((X4 * 0.2,), {"big": X4 * 3.0}),
    "schedule_break_on_lr": ((X4,), {"zeros": np.zeros(4)}),
    "namespace_config": ((X4,), {"zeros_kink": np.zeros(4)}),
    "sinkhorn_iterations": ((X4,), {"on_grid": np.array([0.0, 0.5, 1.0, 0.5])}),
    "vae_elbo_reparam": ((X4,), {"zeros": np.zeros(4)}),
    # physics
    "spring_chain_energy": ((M42 + np.arange(4.0)[:, None],),
                            {"straight": np.array([[0.0, 0.0], [0.5, 0.0], [1.0, 0.0],
                                                   [1.5, 0.1]])}),
    "rk4_tuple_state": ((X3,), {"zeros": np.zeros(3)}),
    "coulomb_pairs_triu": ((M42,), {"square": np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0],
                                                        [1.0, 1.0]])}),
    "rotation_from_angles": ((X3,), {"zeros": np.zeros(3)}),
    # statistics
    "gauss_loglik_triangular": ((M32,), {"zeros": np.zeros((3, 2))}),
    "tukey_biweight_loss": ((np.array([0.3, -1.7, 0.45, 2.2, -0.1]),),
                            {"at_c": np.array([1.5, -1.5, 0.0, 3.0, -0.2])}),
    "pseudo_huber_cauchy": ((X5,), {"zeros": np.zeros(5)}),
    "poisson_regression_nll": ((X3,), {"zeros": np.zeros(3)}),
    "soft_kmeans": ((M22,), {"equal": np.array([[0.5, 0.5], [0.5, 0.5]])}),
    "nan_mask_nansum": ((X5,), {"tie_max": np.array([1.0, 0.0, 1.0, 0.0, 1.0])}),
    # signal processing
    "moving_average_insert": ((X6,), {"zeros": np.zeros(6)}),
    "np_gradient_smoothness": ((X5,), {"line": np.linspace(0.0, 1.0, 5)}),
    "ar2_residuals": ((X6,), {"zeros": np.zeros(6)}),
    "total_variation_image": ((M33,), {"flat": np.ones((3, 3))}),
    "pool_by_reshape": ((M44,), {"ties": np.array([[1.0, 1.0, 0.0, 0.5], [0.2, 1.0, 0.5, 0.5],
                                                   [0.0, 0.0, 2.0, 1.0], [0.0, 0.0, 1.0, 2.0]])}),
    "conv2d_comprehension": ((M34,), {"zeros": np.zeros((3, 4))}),
    "fft_power_spectrum": ((X6,), {"zeros": np.zeros(6)}),
    "deque_window": ((X4,), {"zeros": np.zeros(4)}),
    # small layers
    "lstm_cell_split": ((X2,), {"zeros": np.zeros(2)}),
    "batchnorm_object_train": ((M42,), {"const_col": np.array([[1.0, 0.3], [1.0, -0.2],
                                                               [1.0, 0.5], [1.0, 0.1]])}),
    # configuration by strings
    "getattr_np_names": ((X4,), {"zeros": np.zeros(4)}),
    "activation_spec_string": ((X4,), {"kink": np.array([0.0, -0.5, 0.5, 0.0])}),
    "getattr_method_fstring": ((X4,), {"zeros": np.zeros(4)}),
    # Python idioms
    "itertools_product_grid": ((X4,), {"zeros": np.zeros(4)}),
    "itertools_pairwise_layers": ((X4,), {"zeros": np.zeros(4)}),
    "chain_from_iterable": ((X4,), {"zeros": np.zeros(4)}),
    "reduce_operator_mul": ((X4,), {"zeros": np.zeros(4)}),
    "walrus_while_countdown": ((X4,), {"zeros": np.zeros(4)}),
    "match_tuple_guard": ((X4,), {"zeros": np.zeros(4)}),
    "chained_compare_where": ((np.array([0.3, -1.7, 0.45, 2.2, -0.1]),),
                              {"bounds": np.array([1.0, -1.0, 0.0, 1.0, -1.0])}),
    "star_unpack_first_rest": ((X4,), {"zeros": np.zeros(4)}),
    "dict_zip_keys": ((X4,), {"zeros": np.zeros(4)}),
    "defaultdict_accumulate": ((X4,), {"zeros": np.zeros(4)}),
    "with_context_manager": ((X4,), {"zeros": np.zeros(4)}),
    "chebyshev_tuple_swap": ((X4,), {"ones": np.ones(4)}),
    "legendre_list_recurrence": ((X4,), {"ones": np.ones(4)}),
    "continued_fraction_reversed": ((X4,), {"zeros": np.zeros(4)}),
    "nonzero_const_index": ((X5,), {"zeros": np.zeros(5)}),
    "tile_repeat": ((X4,), {"zeros": np.zeros(4)}),
    "expand_broadcast_shapes": ((X4,), {"zeros": np.zeros(4)}),
    "complex_phase_mag": ((X4,), {"zeros": np.zeros(4)}),
    "array_methods_more": ((M33,), {"ties": np.array([[0.5, 0.5, 0.1], [0.5, 0.5, 0.2],
                                                      [-1.0, 1.0, 0.0]])}),
    "none_defaults": ((X4,), {"zeros": np.zeros(4)}),
}
# no JAX oracle for this source: central differences
FD_ORACLE: frozenset = frozenset()
NO_HESSIAN: frozenset = frozenset()

PROBE = H.Probe(F, CASES, H.STAGES, no_hessian=NO_HESSIAN, tol64=(1e-6, 1e-8),
                warm=("g", "jit"), fd_oracle=FD_ORACLE)
twin, classify, jax_grad_runs = PROBE.twin, PROBE.classify, PROBE.jax_grad_runs
