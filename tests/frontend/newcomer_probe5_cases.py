"""The fifth newcomer probe's cases and its classifier (issues 23 and 27): each function
of newcomer_probe5_fns.py with arguments, run through s2s (grad at calls 1, 3 and 10
with changing values, jvp, vmap of grad, hessian, jit of grad on both backends, grad at
special inputs: kinks, ties, NaN/inf, size-1 and 0-size axes) in float64 or float32 and
compared with JAX on the same source, or central differences where JAX cannot run it;
and whether a result aliases an input or is changed by the caller writing into an
earlier one."""

from __future__ import annotations

import functools

import newcomer_probe5_fns as F
import numpy as np
from newcomer_probe3_cases import run_stage
from newcomer_probe4_cases import _fd_grad, _first, _tree_map, cast, verdict

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
NO_HESSIAN = {"property_model"}


def bump(args, call):
    """The arguments at the ``call``-th call: the first argument's floats scaled."""
    s = 1.0 + 0.07 * (call - 1) * (-1) ** call
    first = _tree_map(lambda v: v * v.dtype.type(s), args[0])
    return (first,) + tuple(args[1:])


def _aliasing(f, args):
    """None, or what is wrong: a result sharing memory with an input, or a result
    changed by the caller writing into the previous one."""
    out = f(*args)
    first = np.array(out, copy=True)
    for a in args:
        if isinstance(a, np.ndarray) and isinstance(out, np.ndarray) and np.shares_memory(
                out, a):
            return "result aliases an input"
    if isinstance(out, np.ndarray) and out.flags.writeable:
        out[...] = 123.0
    again = np.asarray(f(*args))
    if not np.allclose(again, first, rtol=1e-6, atol=1e-9, equal_nan=True):  # (rounding:
        return "writing into a result changed the next one"  # code specialized meanwhile)
    return None


def classify(name, J, dtype=np.float64, stages=None):
    """``(label, {stage: verdict})`` for one function in ``dtype``; ``J`` its JAX twin.
    label: "ok", "WRONG" (values differ), "dtype" (values agree, dtypes differ),
    "refused" (s2s refuses, JAX accepts), "both refuse", "internal" (an exception that
    is not s2s's located TransformError), "alias"."""
    import jax

    import s2s

    ours, theirs = getattr(F, name), getattr(J, name)
    f32 = dtype == np.float32
    rtol, atol = (2e-3, 2e-4) if f32 else (1e-7, 1e-9)
    verdicts = {}
    all_stages = ("grad", "jvp", "vmap_grad", "hessian", "jit", "jit_jax", "special",
                  "warm_special", "alias")
    run_stages = stages or all_stages

    close = functools.partial(verdict, rtol=rtol, atol=atol)

    attempt = functools.partial(run_stage, verdicts, close)
    base = cast(CASES[name][0], dtype)
    fd = (lambda a: (lambda: _fd_grad(ours, a, 1e-6))) if not f32 else (lambda a: None)
    made = {}

    def once(key, make):  # one object for all calls (made at the first: it may refuse)
        if key not in made:
            made[key] = make()
        return made[key]

    if "grad" in run_stages:
        for call in (1, 3, 10):
            for c in range(call - 1 if call > 1 else 0):  # the calls in between
                try:
                    once("g", lambda: s2s.grad(ours))(*bump(base, c + 1))
                except Exception:  # noqa: BLE001 - the stage below reports it
                    break
            a = bump(base, call)
            attempt(f"grad@{call}", lambda: once("g", lambda: s2s.grad(ours))(*a),
                    lambda: jax.grad(theirs)(*a), fd(a))
    a = base
    first, rest = a[0], a[1:]
    single_ours, single_theirs = _first(ours, rest), _first(theirs, rest)
    tangent = _tree_map(lambda v: np.cos(np.arange(np.size(v)) + 1.0).reshape(
        np.shape(v)).astype(dtype), first)
    if "jvp" in run_stages:
        attempt("jvp", lambda: s2s.jvp(single_ours, (first,), (tangent,)),
                lambda: jax.jvp(single_theirs, (first,), (tangent,)))
    if "vmap_grad" in run_stages:
        batch = _tree_map(lambda v: np.stack([v, v * dtype(0.8), v * dtype(-1.1)]), first)
        attempt("vmap_grad", lambda: s2s.vmap(s2s.grad(single_ours))(batch),
                lambda: jax.vmap(jax.grad(single_theirs))(batch))
    if "hessian" in run_stages and name not in NO_HESSIAN:
        attempt("hessian", lambda: s2s.hessian(single_ours)(first),
                lambda: jax.hessian(single_theirs)(first))
    if "jit" in run_stages:
        attempt("jit", lambda: [once("jit", lambda: s2s.jit(s2s.grad(ours)))(*bump(a, c))
                                for c in (1, 2, 3)][-1],
                lambda: jax.grad(theirs)(*bump(a, 3)), fd(bump(a, 3)))
    if "jit_jax" in run_stages:
        attempt("jit_jax", lambda: [once("jj", lambda: s2s.jit(s2s.grad(ours), backend="jax"))(
            *bump(a, c)) for c in (1, 2, 3)][-1],
                lambda: jax.grad(theirs)(*bump(a, 3)), fd(bump(a, 3)))
    if "special" in run_stages:
        for label, value in CASES[name][1].items():
            sa = cast((value,) + tuple(CASES[name][0][1:]), dtype)
            attempt(f"special:{label}", lambda sa=sa: s2s.grad(ours)(*sa),
                    lambda sa=sa: jax.grad(theirs)(*sa), fd(sa))
    if "warm_special" in run_stages:  # specialized on ordinary values, then a special one
        for label, value in CASES[name][1].items():
            sa = cast((value,) + tuple(CASES[name][0][1:]), dtype)
            for key, make in (("g", lambda: s2s.grad(ours)),
                              ("jit", lambda: s2s.jit(s2s.grad(ours))),
                              ("hvp", lambda: s2s.hessian(single_ours))):
                def warm_then(key=key, make=make, sa=sa):
                    fn = once(key, make)
                    for c in range(1, 11):
                        fn(*(bump(a, c) if key != "hvp" else bump(a, c)[:1]))
                    return fn(*(sa if key != "hvp" else sa[:1]))
                oracle = ((lambda sa=sa: jax.grad(theirs)(*sa)) if key != "hvp" else
                          (lambda sa=sa: jax.hessian(single_theirs)(sa[0])))
                if key == "hvp" and name in NO_HESSIAN:
                    continue
                attempt(f"warm_special:{key}:{label}", warm_then, oracle,
                        fd(sa) if key != "hvp" else None)
        for label, value in CASES[name][1].items():
            sv = cast(value, dtype)
            attempt(f"vmap_special:{label}",
                    lambda sv=sv: s2s.vmap(s2s.grad(single_ours))(np.stack([sv, sv])),
                    lambda sv=sv: jax.vmap(jax.grad(single_theirs))(np.stack([sv, sv])))
    if "alias" in run_stages:
        try:
            problem = _aliasing(s2s.grad(ours), a)
        except Exception:  # noqa: BLE001 - grad's own stage reports it
            problem = None
        if problem:
            verdicts["alias"] = ("alias", problem)
    order = ("internal", "WRONG", "alias", "refused", "dtype", "both refuse", "ok")
    label = min((v[0] for v in verdicts.values()), key=order.index)
    return label, verdicts
