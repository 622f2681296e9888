"""The sixth newcomer probe's cases (issue 23): each function of newcomer_probe6_fns.py
with arguments, run through s2s (grad at calls 1, 3 and 10 with changing values, jvp,
vmap of grad, hessian, jit of grad on both backends, grad at special inputs, the caller
writing into a result) in float64 or float32, compared with JAX on the same source
(``twin``: numpy swapped for jax.numpy, ``scipy.special`` for ``jax.scipy.special``,
``np.random`` kept NumPy's) or central differences where JAX cannot run it, by
newcomer_harness.classify; its arguments include Python floats and NamedTuples."""

from __future__ import annotations

import newcomer_harness as H
import newcomer_probe6_fns as F
import numpy as np

R = np.random.default_rng(6)
X4 = np.array([0.3, -0.7, 0.45, 1.2])
POS4 = np.array([0.3, 0.7, 0.45, 1.2])

# name: (arguments, {label: special first argument})
CASES = {
    "logistic_method_loss": ((R.normal(size=3), R.normal(size=(5, 3)),
                              np.array([0.0, 1.0, 1.0, 0.0, 1.0])), {}),
    "global_model_input_grad": ((R.normal(size=(2, 3)),), {"one_row": np.ones((1, 3))}),
    "subclass_super_call": ((X4,), {"zeros": np.zeros(4)}),
    "classmethod_constructor": ((X4,), {}),
    "namedtuple_params_loss": ((F.Params(R.normal(size=(3, 2)), np.array([0.1, -0.2])),
                                R.normal(size=(4, 3))), {}),
    "dataclass_momentum": ((X4,), {}),
    "train_step_config": ((R.normal(size=3), R.normal(size=(6, 3)), R.normal(size=6)), {}),
    # (keys in sorted order: JAX rebuilds a dict argument with its keys sorted, so
    # `enumerate(params.items())` counts in another order than NumPy run as written)
    "enumerate_param_dict": (({"b1": R.normal(size=2), "w1": R.normal(size=(2, 2)),
                               "w2": R.normal(size=3)},), {}),
    "zip_weights_biases": ((np.array([[0.3, -0.7, 0.45], [1.0, 0.2, -0.3]]),),
                           {"kinks": np.zeros((2, 3))}),
    "masked_seq_loss": ((R.normal(size=(4, 3)), np.array([0, 2, 1, 1]),
                         np.array([1.0, 1.0, 1.0, 0.0])),
                        {"ties": np.zeros((4, 3))}),
    "nan_to_num_loss": ((X4, np.array([0.1, np.nan, 0.2, 1.0])),
                        {"nan_pred": np.array([0.1, np.nan, 0.2, 1.0])}),
    "nanmean_loss": ((X4, np.array([0.1, np.nan, 0.2, 1.0])),
                     {"kink": np.array([0.1, 0.0, 0.2, 1.0])}),
    "ignore_index_xent": ((R.normal(size=(4, 3)), np.array([0, -100, 2, 1])), {}),
    "boolean_mask_read": ((X4,), {"zeros": np.array([0.0, -0.0, 1.0, -1.0]),
                                  "none_positive": -POS4}),
    "boolean_mask_write": ((X4,), {"zeros": np.array([0.0, -0.0, 1.0, -1.0])}),
    "guarded_inputs": ((R.normal(size=3), R.normal(size=(4, 3))), {}),
    "debug_print_loss": ((X4,), {}),
    "early_return_positive": ((POS4,), {"mixed": X4, "empty": np.zeros(0)}),
    "power_iteration_while": ((np.array([[1.0, 0.3, 0.0], [0.2, 0.5, 0.1], [0.0, 0.4, 2.0]]),),
                              {}),
    "descend_until_small": ((X4,), {"zeros": np.zeros(4)}),
    "partial_activation": ((X4,), {"kinks": np.array([0.0, 0.25, 1.0, -1.0])}),
    "star_args_kwargs": ((X4,), {"one": np.array([0.3])}),
    "closure_factory": ((X4,), {}),
    "activation_from_dict": ((X4,), {}),
    "lambda_table": ((X4,), {}),
    "math_on_scalars": ((X4,), {"one": np.array([0.3])}),
    "python_max_min": ((X4,), {"negative": -POS4, "big": 3.0 * POS4}),
    "noise_injection": ((X4,), {}),
    "list_then_stack": ((X4,), {}),
    "array_method_chain": ((X4,), {"clipped": np.array([-3.0, 0.1, 0.2, 3.0])}),
    "index_assign_loop": ((np.array([0.3, -0.7, 0.45, 1.2, 0.1]),), {"one": np.array([0.3])}),
    "rnn_unroll": ((np.array([0.3, -0.7]),), {}),
    "rbf_kernel_pairs": ((R.normal(size=(2, 2)),), {"on_a_point": np.array([[0.0, 1.0]])}),
    "scipy_special_mix": ((X4,), {}),
    "scipy_xlogy_entropy": ((X4,), {"ties": np.zeros(4)}),
    "float_for_logging": ((X4,), {}),
    "concat_split_parts": ((X4,), {}),
    "argmax_pick": ((X4,), {"ties": np.array([1.0, 1.0, -1.0, -1.0])}),
    "eigh_spectrum": ((np.array([[1.0, 0.3, 0.0], [0.2, 0.5, 0.1], [0.0, 0.4, 2.0]]),), {}),
    "float_scalar_lr": ((0.1,), {"zero": 0.0}),
}
NO_HESSIAN = frozenset({"namedtuple_params_loss", "enumerate_param_dict"})

PROBE = H.Probe(F, CASES, ("grad", "jvp", "vmap_grad", "hessian", "jit", "jit_jax",
                           "special", "warm_special", "alias"),
                no_hessian=NO_HESSIAN, tol64=(1e-6, 1e-8))


def classify(name, J, dtype=np.float64, stages=None):
    """``(label, {stage: verdict})``: newcomer_harness.classify of this probe."""
    return H.classify(PROBE, name, J, dtype, stages)


def jax_grad_runs(name, J) -> str:
    return H.jax_grad_runs(PROBE, name, J)
