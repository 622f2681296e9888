"""The fifth newcomer probe's cases (issues 23 and 27): each function of
newcomer_probe5_fns.py with arguments, run through s2s (grad at calls 1, 3 and 10
with changing values, jvp, vmap of grad, hessian, jit of grad on both backends, grad at
special inputs: kinks, ties, NaN/inf, size-1 and 0-size axes, also after ten ordinary
calls of grad, jit of grad and hessian, and vmap of grad at them) in float64 or float32
and compared with JAX on the same source, or central differences where JAX cannot run
it; and whether a result aliases an input or is changed by the caller writing into an
earlier one (newcomer_harness.classify)."""

from __future__ import annotations

import newcomer_harness as H
import newcomer_probe5_fns as F
import numpy as np

R = np.random.default_rng(5)
X4 = np.array([0.3, -0.7, 0.45, 1.2])

# name: (arguments, {label: special first argument})
CASES = {
    "momentum_state_step": ((X4, np.array([1.0, 2.0, -1.0, 0.5])), {}),
    "em_objective": ((np.array([-1.0, 0.5, 2.0]), R.normal(size=5)),
                     {"tie": np.array([0.5, 0.5, 2.0])}),
    "kalman_nll": ((X4,), {"one": np.array([0.3])}),
    "verlet_chain": ((X4,), {"one": np.array([0.3]), "zeros": np.zeros(4)}),
    "hinge_clip_where": ((X4,), {"kinks": np.array([1.0, 0.0, -0.0, 2.0])}),
    "zero_row_norms": ((R.normal(size=(3, 4)),),
                       {"zero_row": np.array([[0.0, 0, 0, 0], [1, -2, 0, 3], [0.5, 0, 0, 0]]),
                        "ties": np.array([[1.0, -1, 0.5, 0], [2, 2, -2, 1], [0, 1, 1, 1]])}),
    "safe_norm": ((X4,), {"zero": np.zeros(4)}),
    "cumsum_diff_roll": ((R.normal(size=6),), {"one": np.array([0.3])}),
    "select_piecewise": ((np.array([-1.5, -0.3, 0.4, 1.7]),),
                         {"kinks": np.array([-1.0, 0.0, 1.0, 2.0])}),
    "interp_table": ((np.array([0.0, 1.0, 0.5, -0.5, 2.0]), np.array([0.1, 0.45, 0.8, 1.3])),
                     {}),
    "trimmed_sort_loss": ((X4,), {"ties": np.array([0.5, 0.5, -1.0, -1.0, 0.5])}),
    "max_ties_axes": ((R.normal(size=(3, 4)),),
                      {"ties": np.array([[1.0, 2, 2, 0], [1, 2, 0, 0], [0, -1, 2, 0]])}),
    "config_dict_model": ((X4,), {"one": np.array([0.3]), "empty": np.zeros(0)}),
    "dataclass_factory": ((X4,), {}),
    "property_model": ((R.normal(size=(3, 2)), R.normal(size=(4, 3))), {}),
    "enumerate_zip_rows": ((R.normal(size=(3, 2)), R.normal(size=(3, 2))),
                           {"one_row": np.array([[0.3, -0.2]])}),
    "try_except_config": ((X4,), {}),
    "fstring_guard": ((X4,), {"two": np.array([0.3, 0.1])}),
    "accumulate_pairwise": ((X4,), {}),
    "batched_einsum": ((R.normal(size=(2, 3, 3)), R.normal(size=(3, 3))), {}),
    "vander_fit": ((np.array([0.3, -0.7, 0.45, 1.2, 0.1]),), {}),
    "polyval_in_x": ((X4,), {"empty": np.zeros(0)}),
    "running_max_drawdown": ((np.array([0.3, 1.0, 0.2, 1.5, -0.4]),),
                             {"ties": np.array([1.0, 1.0, 0.5, 1.0])}),
    "nan_masked_mse": ((X4, np.array([0.1, np.nan, 0.2, 1.0])),
                       {"nan_pred": np.array([0.1, np.nan, 0.2, 1.0])}),
    "logsumexp_stable": ((R.normal(size=(2, 3)),),
                         {"ties": np.array([[1.0, 1.0, 0.0], [2.0, 2.0, 2.0]]),
                          "neg_inf": np.array([[-np.inf, 0.0, 1.0], [0.0, 0.0, 0.0]])}),
    "softplus_where": ((np.array([-2.0, 0.5, 35.0, 3.0]),),
                       {"inf": np.array([np.inf, -np.inf, 0.0, 31.0])}),
    "sign_abs_kinks": ((X4,), {"zeros": np.array([0.0, -0.0, 1.0, -1.0])}),
    "ddof_std": ((R.normal(size=(3, 2)),), {"one_row": np.array([[0.3, 0.2]])}),
    "argsort_take": ((X4, np.array([1.0, 2.0, 3.0, 4.0])),
                     {"ties": np.array([0.5, 0.5, -1.0, 0.5])}),
    "median_loss": ((X4,), {"odd_ties": np.array([0.5, 0.5, -1.0]),
                            "even": np.array([0.5, 0.2, -1.0, 3.0])}),
    "inf_norm_ties": ((X4,), {"ties": np.array([1.0, -1.0, 0.5, 0.5])}),
    "trapezoid_energy": ((np.array([0.3, -0.7, 0.45, 1.2, 0.1]),), {}),
    "counter_in_dict": ((X4,), {"one": np.array([0.3]), "empty": np.zeros(0)}),
    "dict_item_read_then_added": ((X4,), {}),
    "dict_item_from_a_name": ((X4,), {}),
    "dict_item_kept_in_a_list": ((X4,), {}),
    "dict_item_of_its_own": ((X4,), {"one": np.array([0.3])}),
    "det_of_rank_one": ((np.array([0.3, -0.7]),), {}),
}
NO_HESSIAN = frozenset({"property_model"})

PROBE = H.Probe(F, CASES, ("grad", "jvp", "vmap_grad", "hessian", "jit", "jit_jax",
                           "special", "warm_special", "vmap_special", "alias"),
                no_hessian=NO_HESSIAN, warm=("g", "jit", "hvp"), jit_jax_oracle="grad")


def classify(name, J, dtype=np.float64, stages=None):
    """``(label, {stage: verdict})``: newcomer_harness.classify of this probe."""
    return H.classify(PROBE, name, J, dtype, stages)
