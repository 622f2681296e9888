"""numpy_api11_fns.py's cases and their sweep (issue 23): each function of one array
``x`` through s2s (grad at calls 1, 3 and 10 with changing values, value_and_grad,
jvp, vmap of grad, hessian, jit of grad on both backends, grad at special inputs:
kinks, ties, NaN, size-1 and 0-size axes, also after the code specialized on ordinary
values) compared with JAX on the same source, or central differences where JAX
refuses."""

from __future__ import annotations

import functools

import numpy as np
import numpy_api11_fns as F
from newcomer_harness import fd_grad, run_stage, verdict

X4 = np.array([0.3, -0.7, 0.45, 1.2])
X6 = np.array([0.3, -0.7, 0.45, 1.2, -1.5, 0.8])
KINKS = np.array([0.0, -1.0, 1.0, 0.5])
TIES = np.array([1.0, 1.0, 0.5, 1.0])

# name: (x, {label: special x})
CASES = {
    "piecewise_two": (X4, {"kink": np.array([0.0, -0.0, 1.0, -1.0]), "one": np.array([0.3]),
                           "empty": np.zeros(0), "nan": np.array([np.nan, 0.5, -0.5, 1.0])}),
    "piecewise_constant": (X4, {"kink": KINKS, "empty": np.zeros(0)}),
    "piecewise_default": (np.array([-1.5, -0.3, 0.4, 1.7]),
                          {"kink": np.array([-1.0, 1.0, 0.0, 2.0]), "one": np.array([1.5])}),
    "piecewise_overlap": (X4, {"kink": KINKS}),
    "diff_prepend": (X4, {"one": np.array([0.3]), "empty": np.zeros(0)}),
    "diff_append": (X4, {"one": np.array([0.3])}),
    "diff_second_prepend": (X4, {"one": np.array([0.3]), "empty": np.zeros(0)}),
    "diff_rows_prepend": (X6, {"one_col": np.array([0.3, -0.2])}),
    "ediff1d_ends": (X4, {"one": np.array([0.3])}),
    "running_max": (np.array([0.3, 1.0, 0.2, 1.5, -0.4]),
                    {"ties": TIES, "one": np.array([0.3]), "empty": np.zeros(0),
                     "all_equal": np.ones(5), "nan": np.array([0.3, np.nan, 1.0, 2.0])}),
    "running_min": (np.array([0.3, -1.0, 0.2, -1.5, 0.4]),
                    {"ties": -TIES, "one": np.array([0.3])}),
    "running_max_rows": (X6, {"ties": np.array([1.0, 1.0, 0.5, 2.0, 2.0, 2.0])}),
    "add_multiply_accumulate": (X4, {"zero": np.array([0.3, 0.0, 0.5, 0.0])}),
    "accumulate_sums": (X4, {}),
    "accumulate_products": (X4, {"zero": np.array([0.3, 0.0, 0.5, 2.0])}),
    "accumulate_initial": (X4, {}),
    "accumulate_max_lambda": (X4, {}),
    "clip_min_max": (X4, {"kink": np.array([0.0, 1.0, -0.0, 0.5])}),
    "clip_none_low": (X4, {"kink": np.array([1.0, 1.0, -3.0, 0.5])}),
    "clip_a_keywords": (X4, {}),  # (JAX refuses a_min=: differences, no kink)
    "clip_method_max": (X4, {"kink": np.array([0.5, 0.5, 0.0, 0.7])}),
    "sum_initial": (X4, {"empty": np.zeros(0), "one": np.array([0.3])}),
    "max_initial": (X4, {"ties": TIES, "at_initial": np.array([0.125, -0.3, 0.1, 0.125]),
                         "one": np.array([0.3])}),
    "sum_where": (X4, {"kink": KINKS, "nan_masked": np.array([np.nan, 0.5, -1.0, 2.0]),
                       "empty": np.zeros(0)}),
    "mean_where": (X4, {"none_kept": np.array([-1.0, -2.0, -0.6, -0.7]),
                        "one": np.array([0.3])}),
    "max_where_initial": (X4, {"ties": np.array([0.5, 0.5, 1.0, -1.0]),
                               "none_kept": np.array([1.5, 2.0, 1.0, 3.0]),
                               "at_initial": np.array([0.0, -0.5, 2.0, 0.0])}),
    "sum_dtype": (X4, {"one": np.array([0.3])}),
    "prod_where": (X4, {"zero": np.array([-2.0, 0.5, -1.0, 1.0])}),
    "where_keepdims_rows": (X6, {"one_col": np.array([0.3, -0.7])}),
    "method_where_initial": (X4, {"ties": TIES}),
    "rounding": (X4, {"half": np.array([0.125, 0.25, -0.05, 1.5])}),
    "try_config_int": (X4, {"one": np.array([0.3])}),
    "try_config_default": (X4, {}),
}
NO_HESSIAN: set[str] = set()


def bump(x, call):
    """``x`` at the ``call``-th call: scaled."""
    return x * x.dtype.type(1.0 + 0.07 * (call - 1) * (-1) ** call)


def classify(name, J, dtype=np.float64):
    """``(label, {stage: verdict})`` for one function in ``dtype``; ``J`` its JAX twin.
    label: "ok", "WRONG", "dtype" (values agree, dtypes differ), "refused", "both
    refuse", "internal"."""
    import jax

    import s2s

    ours, theirs = getattr(F, name), getattr(J, name)
    f32 = dtype == np.float32
    rtol, atol = (2e-3, 2e-4) if f32 else (1e-7, 1e-9)
    verdicts: dict = {}
    attempt = functools.partial(run_stage, verdicts,
                                functools.partial(verdict, rtol=rtol, atol=atol))
    fd = (lambda v: None) if f32 else (lambda v: (lambda: fd_grad(ours, (v,), 1e-6)))
    x = CASES[name][0].astype(dtype)
    made: dict = {}

    def once(key, make):
        if key not in made:
            made[key] = make()
        return made[key]

    for call in (1, 3, 10):
        try:
            for c in range(1, call):
                once("g", lambda: s2s.grad(ours))(bump(x, c))
        except Exception:  # noqa: BLE001 - the stage below reports it
            pass
        v = bump(x, call)
        attempt(f"grad@{call}", lambda v=v: once("g", lambda: s2s.grad(ours))(v),
                lambda v=v: jax.grad(theirs)(v), fd(v))
    attempt("value_and_grad", lambda: s2s.value_and_grad(ours)(x),
            lambda: jax.value_and_grad(theirs)(x))
    t = np.cos(np.arange(x.size) + 1.0).astype(dtype)
    attempt("jvp", lambda: s2s.jvp(ours, (x,), (t,)), lambda: jax.jvp(theirs, (x,), (t,)))
    batch = np.stack([x, x * dtype(0.8), x * dtype(-1.1)])
    attempt("vmap_grad", lambda: s2s.vmap(s2s.grad(ours))(batch),
            lambda: jax.vmap(jax.grad(theirs))(batch))
    if name not in NO_HESSIAN:
        attempt("hessian", lambda: s2s.hessian(ours)(x), lambda: jax.hessian(theirs)(x))
    for key, backend in (("jit", "numpy"), ("jit_jax", "jax")):
        attempt(key, lambda backend=backend: [s2s.jit(s2s.grad(ours), backend=backend)(
            bump(x, c)) for c in (1, 2, 3)][-1], lambda: jax.grad(theirs)(bump(x, 3)),
            fd(bump(x, 3)))
    for label, value in CASES[name][1].items():
        sv = value.astype(dtype)
        attempt(f"special:{label}", lambda sv=sv: s2s.grad(ours)(sv),
                lambda sv=sv: jax.grad(theirs)(sv), fd(sv))

        def warm_then(sv=sv):
            g = once("g", lambda: s2s.grad(ours))
            for c in range(1, 11):
                g(bump(x, c))
            return g(sv)

        attempt(f"warm_special:{label}", warm_then, lambda sv=sv: jax.grad(theirs)(sv))
        if sv.size:
            attempt(f"vmap_special:{label}",
                    lambda sv=sv: s2s.vmap(s2s.grad(ours))(np.stack([sv, sv])),
                    lambda sv=sv: jax.vmap(jax.grad(theirs))(np.stack([sv, sv])))
    order = ("internal", "WRONG", "refused", "dtype", "both refuse", "ok")
    label = min((v[0] for v in verdicts.values()), key=order.index)
    return label, verdicts
