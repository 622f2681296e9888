"""The fourth newcomer probe's cases and its classifier (issue 23): each function of
newcomer_probe4_fns.py with arguments, run through s2s (grad at three calls with
changing values, value_and_grad, jvp, vjp, vmap, jacfwd, jacrev, hessian, jit on both
backends) in float64 or float32 and compared with JAX on the same source, or central
differences where JAX cannot run it."""

from __future__ import annotations

import functools

import newcomer_probe4_fns as F
import numpy as np
from newcomer_probe3_cases import run_stage

R = np.random.default_rng(4)
X3 = np.array([0.3, -0.7, 0.45])
X4 = np.array([0.3, -0.7, 0.45, 0.2])

CASES = {
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
NO_HESSIAN = {"module_loss", "sgd_dict_step"}


def verdict(a, b, rtol, atol) -> str:
    """``"ok"`` where the trees ``a`` and ``b`` match (values within the tolerances,
    NaN where the other has NaN, dtypes equal), ``"dtype"`` where only dtypes differ,
    ``"WRONG"`` else."""
    import jax

    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    if len(la) != len(lb):
        return "WRONG"
    for u, v in zip(la, lb):
        u, v = np.asarray(u), np.asarray(v)
        if u.shape != v.shape or not np.allclose(u.astype(float), v.astype(float), rtol,
                                                 atol, equal_nan=True):
            return "WRONG"
    for u, v in zip(la, lb):
        if np.asarray(u).dtype != np.asarray(v).dtype:
            return "dtype"
    return "ok"


def _tree_map(fn, tree):
    if isinstance(tree, (tuple, list)):
        return type(tree)(_tree_map(fn, t) for t in tree)
    if isinstance(tree, dict):
        return {k: _tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def cast(args, dtype):
    """The arguments with their floats (arrays and Python floats) in ``dtype``."""
    def one(v):
        if isinstance(v, float):
            return dtype(v)
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            return v.astype(dtype)
        return v
    return _tree_map(one, args)


def bump(args, call):
    """The arguments at the ``call``-th call: the first argument's floats scaled."""
    s = 1.0 + 0.1 * (call - 1) * (-1) ** call
    first = _tree_map(lambda v: (v * v.dtype.type(s)) if isinstance(v, np.ndarray)
                      else type(v)(v * s), args[0])
    return (first,) + tuple(args[1:])


def _first(target, rest):
    """``x -> target(x, *rest)`` written without a spread of a closure tuple."""
    n = len(rest)
    if n == 0:
        return lambda x: target(x)
    if n == 1:
        b = rest[0]
        return lambda x: target(x, b)
    b, c = rest
    return lambda x: target(x, b, c)


def _fd_grad(f, args, eps):
    x = args[0]
    if isinstance(x, (list, dict)):
        raise NotImplementedError("finite differences of a container argument")
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    rest = cast(args[1:], np.float64)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e, *rest) - f(x - e, *rest)) / (2 * eps)
    return g.astype(np.asarray(args[0]).dtype)


def classify(name, J, dtype=np.float64, stages=None):
    """``(label, {stage: verdict})`` for one function in ``dtype``; ``J`` its JAX twin
    module.  label: "ok", "WRONG" (values differ), "dtype" (values agree, dtypes
    differ), "refused" (s2s refuses, JAX accepts), "both refuse", "internal" (an
    exception that is not s2s's located TransformError)."""
    import jax

    import s2s

    ours, theirs = getattr(F, name), getattr(J, name)
    f32 = dtype == np.float32
    rtol, atol = (2e-3, 2e-4) if f32 else (1e-7, 1e-9)
    verdicts = {}
    run_stages = stages or ("grad", "value_and_grad", "jvp", "vjp", "vmap", "jacfwd",
                            "jacrev", "hessian", "jit", "jit_jax")

    close = functools.partial(verdict, rtol=rtol, atol=atol)

    attempt = functools.partial(run_stage, verdicts, close)

    base = cast(CASES[name], dtype)
    fd = (lambda a: (lambda: _fd_grad(ours, a, 1e-6))) if not f32 else (lambda a: None)
    made = {}

    def grad_of(fn):  # one object for calls 1 to 3 (made at the first: it may refuse)
        if "g" not in made:
            made["g"] = s2s.grad(fn)
        return made["g"]

    if "grad" in run_stages:
        for call in (1, 2, 3):
            a = bump(base, call)
            attempt(f"grad@{call}", lambda: grad_of(ours)(*a), lambda: jax.grad(theirs)(*a),
                    fd(a))
    a = base
    first, rest = a[0], a[1:]
    single_ours, single_theirs = _first(ours, rest), _first(theirs, rest)
    if "value_and_grad" in run_stages:
        attempt("value_and_grad", lambda: s2s.value_and_grad(ours)(*a),
                lambda: jax.value_and_grad(theirs)(*a))
    tangent = _tree_map(lambda v: np.cos(np.arange(np.size(v)) + 1.0).reshape(
        np.shape(v)).astype(dtype), first)
    if "jvp" in run_stages:
        attempt("jvp", lambda: s2s.jvp(single_ours, (first,), (tangent,)),
                lambda: jax.jvp(single_theirs, (first,), (tangent,)))
    if "vjp" in run_stages:
        def vjp_with(vjp, fn):
            out, pull = vjp(fn, first)
            return out, pull(np.ones_like(np.asarray(out)))
        attempt("vjp", lambda: vjp_with(s2s.vjp, single_ours),
                lambda: vjp_with(jax.vjp, single_theirs))
    if "vmap" in run_stages:
        batch = _tree_map(lambda v: np.stack([v, v * dtype(0.8)]), first)
        attempt("vmap", lambda: s2s.vmap(single_ours)(batch),
                lambda: jax.vmap(single_theirs)(batch))
    for stage, ours_t, theirs_t in (("jacfwd", s2s.jacfwd, jax.jacfwd),
                                    ("jacrev", s2s.jacrev, jax.jacrev),
                                    ("hessian", s2s.hessian, jax.hessian)):
        if stage in run_stages and not (stage == "hessian" and name in NO_HESSIAN):
            attempt(stage, lambda o=ours_t: o(single_ours)(first),
                    lambda t=theirs_t: t(single_theirs)(first))
    if "jit" in run_stages:
        attempt("jit", lambda: s2s.jit(ours)(*a), lambda: theirs(*a))
    if "jit_jax" in run_stages:
        attempt("jit_jax", lambda: s2s.jit(s2s.grad(ours), backend="jax")(*a),
                lambda: jax.jit(jax.grad(theirs))(*a), fd(a))
    order = ("internal", "WRONG", "refused", "dtype", "both refuse", "ok")
    label = min((v[0] for v in verdicts.values()), key=order.index)
    return label, verdicts
