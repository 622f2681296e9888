"""The fourth newcomer probe's cases (issue 23): each function of newcomer_probe4_fns.py
with arguments, run through s2s (grad at three calls with changing values,
value_and_grad, jvp, vjp, vmap, jacfwd, jacrev, hessian, jit, jit of grad on JAX) in
float64 or float32 and compared with JAX on the same source, or central differences
where JAX cannot run it (newcomer_harness.classify)."""

from __future__ import annotations

import newcomer_harness as H
import newcomer_probe4_fns as F
import numpy as np

R = np.random.default_rng(4)
X3 = np.array([0.3, -0.7, 0.45])
X4 = np.array([0.3, -0.7, 0.45, 0.2])

ARGS = {
    "module_loss": ({"l0": {"w": R.normal(size=(3, 4)), "b": R.normal(size=4)},
                     "l1": {"w": R.normal(size=(4, 2)), "b": R.normal(size=2)}},
                    R.normal(size=(5, 3))),
    "adam_two_steps": (X3, np.array([1.0, 2.0, -1.0])),
    "label_smoothing_xent": (R.normal(size=(3, 4)), np.array([0, 3, 1])),
    "sgd_dict_step": ({"a": X3, "b": 2 * X3}, np.array([0.1, 0.2, 0.3])),
    "layers_enum_zip": (R.normal(size=(2, 3)), [R.normal(size=(3, 4)), R.normal(size=(4, 2))],
                        [R.normal(size=4), R.normal(size=2)]),
    "huber": (np.array([0.3, -1.7, 0.45, 2.5]),),
    "softmax_entropy_kwonly": (X4,),
    "lennard_jones": (np.array([[0.0, 0.0], [1.1, 0.1], [0.2, 1.05]]),),
    "rk4_forward_args": (X3,),
    "horner": (X3,),
    "leapfrog": (X3,),
    "discounted_returns": (X4,),
    "gp_nll": (R.normal(size=(4, 2)), R.normal(size=4)),
    "conv_sliding": (np.sin(np.arange(6.0)),),
    "fixed_point_while": (X3 + 1.0,),
    "where_log_double": (np.array([0.3, -0.7, 0.45, 0.0]),),
    "where_log_single": (np.array([0.3, -0.7, 0.45, 0.0]),),
    "clip_array_bounds": (np.array([0.3, -0.9, 0.45, 1.2]), np.array([0.5, 0.5, 0.2, 1.0])),
    "norm_ords": (R.normal(size=(3, 4)),),
    "einsum_fstring": (R.normal(size=(2, 3)), R.normal(size=3)),
    "lru_cached_mask": (R.normal(size=(4, 2)),),
    "math_prod_mean": (R.normal(size=(2, 3)),),
    "reshape_minus_one": (R.normal(size=(2, 4)),),
    "xt_at_w": (R.normal(size=(4, 3)), R.normal(size=(4, 2))),
    "inplace_on_copy": (X4,),
    "dataclass_config": (X3,),
    "early_return_flag": (X3,),
    "early_return_flag_on": (X3,),
    "string_dispatch": (X3,),
    "star_args_forward": (X3, np.array([1.0, -2.0, 0.5])),
    "kwargs_forward": (R.normal(size=(2, 3)),),
    "generator_pairs": (X4,),
    "late_binding_lambdas": (X3,),
    "default_capture_lambdas": (X3,),
    "nested_defs_in_loop": (X3,),
    "zip_star_transpose": (X4,),
    "mutable_default_scales": (X3,),
    "last_value_after_loop": (X3,),
}
# a Hessian of these is too large or means nothing more than the Jacobians already test
NO_HESSIAN = frozenset({"module_loss", "sgd_dict_step"})
CASES = {name: (args, {}) for name, args in ARGS.items()}  # (no special inputs)

PROBE = H.Probe(F, CASES, ("grad", "value_and_grad", "jvp", "vjp", "vmap", "jacfwd",
                           "jacrev", "hessian", "jit_value", "jit_jax_once"),
                no_hessian=NO_HESSIAN, step=0.1, grad_calls=(1, 2, 3),
                calls_between=False)


def classify(name, J, dtype=np.float64, stages=None):
    """``(label, {stage: verdict})``: newcomer_harness.classify of this probe."""
    return H.classify(PROBE, name, J, dtype, stages)
