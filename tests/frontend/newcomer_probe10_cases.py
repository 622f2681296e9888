"""The tenth newcomer probe's cases (issue 23): each function of newcomer_probe10_fns.py
with arguments and special first arguments (kinks, ties, zeros, NaN, a point on an
interpolation grid, a row at its target, size-1 and 0-size axes), run through s2s (grad
at calls 1, 3 and 10 with changing values, value_and_grad, jvp, vmap of grad, hessian,
jit of grad on both backends, grad at the special inputs, also after ten ordinary calls
of grad, jit of grad and hessian, vmap of grad at them, the caller writing into every
transform's results) in float64 or float32, compared with JAX on the same source
(``newcomer_harness.twin``) or central differences where JAX cannot run it, by
newcomer_harness.classify.

Three functions mean something else on JAX's arrays (``NUMPY_SEMANTICS``: ``a = b =
...; a += 1`` and ``v = y[1:]; v *= 3`` change one object in NumPy, rebind a name in
JAX; ``y.sort()`` sorts in place in NumPy, returns a copy in JAX): their twin raises, so
their oracle is central differences (grad stages), and the test file checks every other
transform of them against central differences too.  Module state changed between calls
is the test file's (``STATE``)."""

from __future__ import annotations

import newcomer_harness as H
import newcomer_probe10_fns as F
import numpy as np

R = np.random.default_rng(10)
X4 = np.array([0.3, -0.7, 0.45, 1.2])
X5 = np.array([0.3, -0.7, 0.45, 1.2, -0.1])
M32 = R.normal(size=(3, 2))
M23 = R.normal(size=(2, 3))

# name: (arguments, {label: special first argument})
CASES = {
    # numerical methods written out
    "simpson_rule": ((np.sin(np.linspace(0.0, 1.0, 7)),), {"three": np.array([0.1, 0.5, 0.2]),
                                                          "one": np.array([0.4])}),
    "gram_schmidt_cols": ((R.normal(size=(4, 3)),), {"orthonormal": np.eye(4)[:, :3]}),
    "power_iter_fixed": ((R.normal(size=(3, 3)),), {"diagonal": np.diag([1.0, 2.0, 0.5])}),
    "newton_cbrt_fixed": ((np.array([2.0, 0.5, 3.0]),), {"ones": np.ones(3),
                                                        "zero": np.array([0.0, 1.0, 8.0])}),
    "qr_least_squares": ((X5,), {"quadratic": np.linspace(0.0, 1.0, 5) ** 2}),
    "heun_float_clock": ((np.array([0.3, -0.7, 1.1]),), {"zeros": np.zeros(3)}),
    "householder_apply": ((np.array([0.3, -0.7, 0.45]),), {"axis": np.array([1.0, 0.0, 0.0])}),
    "matrix_power_pinv": ((M32,), {"orthonormal": np.eye(3)[:, :2]}),
    "singular_values": ((M32,), {"ties": np.eye(3)[:, :2] * 2.0}),
    # ML losses and steps
    "focal_loss": ((X4,), {"zeros": np.zeros(4)}),
    "contrastive_margin": ((M32,), {"at_margin": np.array([[0.3, 1.2], [1.0, 1.0], [0.2, -0.5]]),
                                    "row_at_b": np.array([[0.3, 1.2], [1.0, 0.0], [0.2, 0.1]])}),
    "one_hot_eye_xent": ((R.normal(size=(4, 3)),), {"ties": np.zeros((4, 3))}),
    "embedding_repeated_ids": ((R.normal(size=(3, 4)),), {"zeros": np.zeros((3, 4))}),
    "topk_threshold_mask": ((X5,), {"ties": np.array([1.0, 1.0, 0.5, 1.0, 0.0])}),
    "logsigmoid_pair": ((X4,), {"extremes": np.array([-800.0, 800.0, 0.0, 30.0])}),
    "batchnorm_running": ((R.normal(size=(4, 2)),), {"const_col": np.array(
        [[0.5, 0.1], [0.5, -0.3], [0.5, 0.7], [0.5, 0.2]])}),
    "masked_softmax_neginf": ((M23,), {"ties": np.zeros((2, 3)),
                                       "inf_masked": np.array([[0.1, np.inf, 0.3],
                                                               [0.2, -0.1, -np.inf]])}),
    "triplet_hinge": ((np.array([[0.1, 0.3], [0.8, 1.1]]),), {
        "at_pos": np.array([[0.2, 0.1], [1.0, 1.0]])}),
    "ema_sgd_loop": ((np.array([0.3, -0.7, 1.1]),), {"zeros": np.zeros(3)}),
    # array idioms
    "fmax_fmin_nan": ((X5,), {"nan": np.array([np.nan, 0.0, 0.5, -1.0, 2.0]),
                              "kinks": np.array([0.0, 0.5, 0.0, 0.5, 1.0])}),
    "newaxis_rbf": ((M32,), {"dup_rows": np.array([[0.3, 0.1], [0.3, 0.1], [-1.0, 0.5]])}),
    "ufunc_outer_reduce": ((X4,), {"zero_ties": np.array([1.0, 1.0, 0.0, 2.0])}),
    "bincount_weighted": ((X5,), {"zeros": np.zeros(5)}),
    "add_at_scatter": ((X5,), {"zeros": np.zeros(5)}),
    "method_chain_forms": ((M32,), {"kinks": np.array([[0.0, 1.0], [1.0, 0.0], [-0.5, 1.0]])}),
    "tuple_axis_reductions": ((R.normal(size=(2, 3, 2)),), {"ties": np.ones((2, 3, 2))}),
    "stack_family": ((np.array([0.3, -0.7, 0.45]),), {"zeros": np.zeros(3)}),
    "flip_rot_move": ((M23,), {"zeros": np.zeros((2, 3))}),
    "searchsorted_lerp": ((X4,), {"at_grid": np.array([0.0, 0.5, -1.0, 2.0]),
                                  "outside": np.array([-2.0, 3.0, 0.25, -1.0])}),
    "ptp_heaviside_sinc": ((X4,), {"zeros": np.zeros(4),
                                   "ties": np.array([1.2, 0.0, 1.2, -0.7])}),
    # Python forms
    "for_else_static": ((X4,), {"zeros": np.zeros(4)}),
    "adam_zeros_init": ((X4,), {"zeros": np.zeros(4)}),
    "multi_target_inplace": ((X4,), {"zeros": np.zeros(4)}),
    "view_inplace_base": ((X4,), {"one": np.array([0.4])}),
    "sort_inplace_copy": ((X4,), {"descending": np.array([1.2, 0.45, -0.7, -1.0])}),  # (no
    # ties: the oracle is central differences, which average a tie's sides; probe 9's
    # sort_topk checks ties against JAX's stable-sort convention)
    "fill_diagonal_gram": ((M32,), {"one_col": np.array([[0.3], [-0.2], [0.5]])}),
    "unpack_array_rows": ((M23,), {"zeros": np.zeros((2, 3))}),
    "slice_objects_ix": ((M32,), {"zeros": np.zeros((3, 2))}),
    "array_of_scalars": ((X4,), {"zeros": np.zeros(4)}),
    "finfo_eps_log": ((X4,), {"zeros": np.zeros(4)}),
    "builtin_sum_rows": ((M32,), {"one_row": np.array([[0.3, -0.2]])}),
    "chained_comparison_shape": ((X4,), {"two": np.array([0.3, -0.2]), "five": X5,
                                         "one": np.array([0.3]), "empty": np.zeros(0)}),
    # module state (changed between calls by the test file's STATE)
    "callable_instance_state": ((X4,), {"zeros": np.zeros(4)}),
    "schedule_step_state": ((X4,), {"zeros": np.zeros(4)}),
}
# NumPy's meaning differs from JAX's on the same source: central differences are the oracle
NUMPY_SEMANTICS = frozenset(("multi_target_inplace", "view_inplace_base", "sort_inplace_copy"))
NO_HESSIAN: frozenset = frozenset()

PROBE = H.Probe(F, CASES, ("grad", "value_and_grad", "jvp", "vmap_grad", "hessian", "jit",
                           "jit_jax", "special", "warm_special", "vmap_special", "alias",
                           "alias_all"),
                no_hessian=NO_HESSIAN, tol64=(1e-6, 1e-8), warm=("g", "jit", "hvp"))


def _jax_means_otherwise(*args, **kwargs):
    raise NotImplementedError("JAX's arrays give this source another meaning")


def twin():
    """``newcomer_harness.twin`` of the probe's functions, those of ``NUMPY_SEMANTICS``
    raising (central differences are their oracle)."""
    J = H.twin(F)
    for name in NUMPY_SEMANTICS:
        setattr(J, name, _jax_means_otherwise)
    return J


def classify(name, J, dtype=np.float64, stages=None):
    """``(label, {stage: verdict})``: newcomer_harness.classify of this probe."""
    return H.classify(PROBE, name, J, dtype, stages)


def jax_grad_runs(name, J) -> str:
    return H.jax_grad_runs(PROBE, name, J)
