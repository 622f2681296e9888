"""The eleventh newcomer probe's cases (issue 23): each function of
newcomer_probe11_fns.py with arguments and special first arguments (kinks of
``np.where``/``np.clip``/``np.abs``/soft thresholding, ties of quantiles and argmax,
zeros, extremes that saturate a clip, a size-1 or 2-D input for shape branches), run
through s2s (grad at calls 1, 3 and 10 with changing values, value_and_grad, jvp, vmap
of grad, hessian, jit of grad on both backends, grad at the special inputs, also after
ten ordinary calls of grad, jit of grad and hessian, vmap of grad at them, the caller
writing into every transform's results) in float64 or float32, compared with JAX on the
same source (``newcomer_harness.twin``) or central differences where JAX cannot run it,
by newcomer_harness.classify.

Two functions have no JAX oracle (``FD_ORACLE``): ``y[1:] += y[:-1]`` writes into a
JAX array (JAX's arrays are immutable) and ``np.mean([...])`` of a list (jax.numpy's
reductions refuse a list); their twin raises, so their oracle is central differences
(grad stages), and the test file checks every other transform of them against central
differences too."""

from __future__ import annotations

import newcomer_harness as H
import newcomer_probe11_fns as F
import numpy as np

R = np.random.default_rng(11)
X4 = np.array([0.3, -0.7, 0.45, 1.2])
X5 = np.array([0.3, -0.7, 0.45, 1.2, -0.1])
M32 = R.normal(size=(3, 2))
M23 = R.normal(size=(2, 3))
M33 = R.normal(size=(3, 3))
M22 = np.array([[0.4, -1.1], [0.7, 0.2]])

# name: (arguments, {label: special first argument})
CASES = {
    # training steps and pytrees without jax.tree_util
    "dict_sgd_two_steps": ((X5,), {"zeros": np.zeros(5)}),
    "fstring_keyed_params": ((X4,), {"zeros": np.zeros(4)}),
    "nested_tuple_layers": ((np.array([0.3, -0.8]),), {"zeros": np.zeros(2)}),
    "recursive_tuple_map": ((X4,), {"zeros": np.zeros(4)}),
    "namedtuple_replace_step": ((X4,), {"zeros": np.zeros(4)}),
    "dataclass_replace_cfg": ((np.array([0.3, -0.7, 1.1]),), {"zeros": np.zeros(3)}),
    "history_dict_lists": ((X4,), {"at_one": np.ones(4)}),
    "callable_poly_class": ((X4,), {"zeros": np.zeros(4)}),
    # NumPy idioms
    "einsum_spec_zoo": ((M33,), {"zeros": np.zeros((3, 3))}),
    "where_chain_piecewise": ((np.array([-1.5, -0.5, 0.3, 1.4, 0.8]),),
                              {"kinks": np.array([-1.0, 0.0, 1.0, -1.0, 0.0])}),
    "clip_then_log_bce": ((X5,), {"saturated": np.array([-40.0, 40.0, 0.0, 20.0, -20.0])}),
    "norm_negative_orders": ((M32,), {"ties": np.array([[1.0, 1.0], [1.0, -1.0], [0.5, 0.5]])}),
    "matmul_1d_operands": ((np.array([0.3, -0.7, 0.45]),), {"zeros": np.zeros(3)}),
    "broadcast_none_kde": ((X4,), {"on_grid": np.array([-2.0, 0.0, 1.0, 2.0])}),
    "concat_ragged_loop": ((X4,), {"one": np.array([0.4])}),
    "roll_tuple_shift": ((M32,), {"zeros": np.zeros((3, 2))}),
    "diff_prepend_append": ((M23,), {"kinks": np.array([[0.0, -0.5, 0.5], [-0.5, 0.0, 0.0]])}),
    "kron_tril_triu_trace": ((M22,), {"zeros": np.zeros((2, 2))}),
    "cholesky_logdet_solve": ((M32,), {"zeros": np.zeros((3, 2))}),
    "ridge_closed_form": ((X5,), {"line": np.linspace(-1.0, 1.0, 5)}),
    "activation_zoo": ((X5,), {"kinks": np.array([0.0, -3.0, 3.0, 0.0, 1.0])}),
    "rms_layer_norm": ((M23,), {"const_row": np.array([[0.5, 0.5, 0.5], [0.1, -0.2, 0.3]])}),
    "padded_attention": ((R.normal(size=(2, 3, 2)),), {"zeros": np.zeros((2, 3, 2))}),
    "average_quantile": ((X5,), {"ties": np.array([0.5, 0.5, 0.5, 1.0, -1.0])}),
    "cov_corrcoef": ((R.normal(size=(2, 4)),), {"affine_rows": np.array(
        [[0.1, 0.5, -0.3, 0.9], [0.3, 1.1, -0.5, 1.9]])}),
    "convolve_modes": ((X5,), {"zeros": np.zeros(5)}),
    "unravel_argmax": ((M32,), {"ties": np.array([[1.0, 0.0], [1.0, 1.0], [-1.0, 0.5]])}),
    "elementwise_zoo": ((X4,), {"near_zero": np.array([1e-3, -0.5, 0.25, 2.0])}),
    "soft_threshold_prox": ((X5,), {"kinks": np.array([0.3, -0.3, 0.0, 1.0, -0.1])}),
    "floor_round_straight": ((X4,), {"integers": np.array([1.0, -1.0, 0.0, 2.0])}),
    "triangle_area_cross": ((M33,), {"right_angle": np.array(
        [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])}),
    "diag_vector_matrix": ((M33,), {"zeros": np.zeros((3, 3))}),
    "sum_dtype_kwarg": ((X4,), {"zeros": np.zeros(4)}),
    "np_mean_of_list": ((X4,), {"tie": np.array([0.3, 0.5, 1.0, 1.2])}),
    # Python forms
    "newton_python_float": ((X4,), {"zeros": np.zeros(4)}),
    "try_except_else": ((X4,), {"zeros": np.zeros(4)}),
    "early_return_named_stage": ((X4,), {"zeros": np.zeros(4)}),
    "assert_percent_format": ((X4,), {"two": np.array([0.3, -0.2]), "five": X5}),
    "math_module_floats": ((X4,), {"zeros": np.zeros(4)}),
    "float32_casts": ((X4,), {"zeros": np.zeros(4)}),
    "kwonly_defaults": ((X4,), {"at_shift": np.array([0.1, -0.1, 0.0, 0.1])}),
    "dict_merge_kwargs": ((X4,), {"zeros": np.zeros(4)}),
    "map_lambda_sorted_key": ((X4,), {"zeros": np.zeros(4)}),
    "divmod_index_loop": ((X5,), {"zeros": np.zeros(5)}),
    "zip_strict_enumerate_start": ((X4,), {"zeros": np.zeros(4)}),
    "while_static_counter": ((X5,), {"one": np.array([0.4])}),
    "ndim_branch_promote": ((X4,), {"row": np.array([[0.3, -0.1, 0.2, 0.5]]),
                                    "two_rows": np.array([[0.3, -0.1], [0.2, 0.5]])}),
    "empty_like_row_fill": ((M32,), {"zeros": np.zeros((3, 2))}),
    "overlapping_inplace_slices": ((X5,), {"one": np.array([0.4])}),
    "assert_isfinite_guard": ((X4,), {"zeros": np.zeros(4)}),
}
# no JAX oracle for this source: central differences
FD_ORACLE = frozenset(("overlapping_inplace_slices", "np_mean_of_list", "empty_like_row_fill"))
NO_HESSIAN: frozenset = frozenset()

PROBE = H.Probe(F, CASES, ("grad", "value_and_grad", "jvp", "vmap_grad", "hessian", "jit",
                           "jit_jax", "special", "warm_special", "vmap_special", "alias",
                           "alias_all"),
                no_hessian=NO_HESSIAN, tol64=(1e-6, 1e-8), warm=("g", "jit", "hvp"),
                # rows affine in each other: np.corrcoef's value is exactly 1.0, where
                # its clip to [-1, 1] meets the bound; jax.hessian halves the second
                # derivative there (its min/max split a tie), while the function near
                # the point is the unclipped correlation (never above 1), whose Hessian
                # central differences of jax.grad give (s2s's agrees to 6e-10)
                hessian_fd=frozenset({("cov_corrcoef", "affine_rows")}))


def _no_jax_oracle(*args, **kwargs):
    raise NotImplementedError("JAX cannot run this source as written")


def twin():
    """``newcomer_harness.twin`` of the probe's functions, those of ``FD_ORACLE``
    raising (central differences are their oracle)."""
    J = H.twin(F)
    for name in FD_ORACLE:
        setattr(J, name, _no_jax_oracle)
    return J


def classify(name, J, dtype=np.float64, stages=None):
    """``(label, {stage: verdict})``: newcomer_harness.classify of this probe."""
    return H.classify(PROBE, name, J, dtype, stages)


def jax_grad_runs(name, J) -> str:
    return H.jax_grad_runs(PROBE, name, J)
