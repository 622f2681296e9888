"""The third newcomer probe's cases and its classifier (issue 23): each function of
newcomer_probe3_fns.py with arguments, run through s2s (grad at three calls with
changing values, value_and_grad, jvp, vmap, jit on both backends) and compared with
JAX on the same source, or central differences where JAX cannot run it."""

from __future__ import annotations

import functools

import newcomer_probe3_fns as F
import numpy as np
from newcomer_harness import run_stage

R = np.random.default_rng(3)
X3 = np.array([0.3, -0.7, 0.45])
X4 = np.array([0.3, -0.7, 0.45, 0.2])

CASES = {
    "euler_decay": (0.7,),
    "rk4_pendulum": (0.4,),
    "spring_mass": (X3,),
    "laplacian_1d": (np.sin(np.arange(7.0)),),
    "laplacian_2d": (R.normal(size=(5, 4)),),
    "heat_steps": (np.sin(np.arange(6.0)),),
    "trapezoid_area": (np.cos(np.arange(5.0)),),
    "polyval_fit": (np.array([0.5, -0.2, 1.0]), np.linspace(-1, 1, 6)),
    "interp_loss": (np.array([0.2, 0.9, -0.4, 0.6]),),
    "cumprod_diff": (X4,),
    "normal_loglik": (0.2, -0.3, R.normal(size=5)),
    "poisson_loglik": (np.array([0.1, 0.5, -0.2]), np.array([1.0, 3.0, 0.0])),
    "gmm_loglik": (np.array([-1.0, 0.5, 2.0]), R.normal(size=5)),
    "kl_gauss": (X3, np.array([0.1, -0.2, 0.3])),
    "kl_categorical": (X4, X4[::-1].copy()),
    "student_t_loss": (X4,),
    "logaddexp_pair": (X3, X3[::-1].copy()),
    "bce_with_logits": (X4, np.array([1.0, 0.0, 1.0, 0.0])),
    "mlp_class_loss": (R.normal(size=(5, 3)), R.normal(size=(5, 2))),
    "gru_cell": (np.array([0.1, -0.2]), np.array([0.5, 0.3, -0.1]),
                 R.normal(size=(2, 5)), R.normal(size=(2, 5)), R.normal(size=(2, 5))),
    "causal_attention": (R.normal(size=(4, 3)), R.normal(size=(4, 3)), R.normal(size=(4, 2))),
    "batch_norm": (R.normal(size=(6, 3)), np.array([1.0, 0.5, 2.0]), np.zeros(3)),
    "dropout_fixed": (X4,),
    "cosine_lr_step": (X3,),
    "layer_norm": (R.normal(size=(2, 4)),),
    "softmax_xent": (R.normal(size=(3, 4)), np.array([0, 3, 1])),
    "inner_gd": (X3, np.array([1.0, 2.0, -1.0])),
    "penalty_method": (np.array([0.6, 0.7, 0.1]),),
    "log_barrier": (X3,),
    "newton_sqrt": (np.array([2.0, 3.0, 0.5]),),
    "safe_sqrt_where": (X4,),
    "clip_loss": (np.array([0.3, -0.9, 0.45, 1.2]),),
    "einsum_ellipsis": (R.normal(size=(2, 3, 3)), R.normal(size=(2, 3))),
    "row_norms": (R.normal(size=(3, 4)),),
    "errstate_log": (X4,),
    "enum_zip": (X3, X3[::-1].copy()),
    "sorted_items_weighted": ({"bias": X3, "w": np.array([[0.5, -1.0]])},),
    "fstring_assert": (R.normal(size=(2, 3)),),
    "isinstance_branch": (X3,),
    "early_return_small": (X4,),
    "try_finally": (X3,),
    "max_generator": ([X3, 2 * X3[::-1]],),
    "walrus_fn": (X4,),
    "match_activation": (X4,),
    "ternary_chain": (X3 * 0.5,),
    "global_read": (X3,),
    "typed_sig": (X3,),
    "aux_tuple": (X3,),
    "dict_comp_total": (X3,),
    "nested_fn_default": (X3,),
    "reversed_range": (X4,),
}
# a function returning (loss, aux): differentiated with has_aux, as JAX's
AUX = {"aux_tuple"}
# vmap over the first argument is natural for these (a batch of the first argument)
NO_VMAP = {"max_generator", "sorted_items_weighted"}


def bump(args, call):
    """The arguments at the ``call``-th call: the first argument's floats scaled."""
    first, rest = args[0], args[1:]
    s = 1.0 + 0.1 * (call - 1) * (-1) ** call
    if isinstance(first, list):
        first = [v * s for v in first]
    elif isinstance(first, dict):
        first = {k: v * s for k, v in first.items()}
    else:
        first = np.asarray(first, float) * s if np.ndim(first) else float(first) * s
    return (first,) + rest


def _first(target, rest):
    """``x -> target(x, *rest)`` written without a spread: s2s refuses ``*rest`` of a
    closure or bound tuple (its length is not known when it transforms), JAX takes it
    (the report's first finding).  Named ``target``, not
    ``f``: a lambda closing over ``f`` calling a function with its own ``f`` inside is
    refused as a name clash (the report's second finding)."""
    n = len(rest)
    if n == 0:
        return lambda x: target(x)
    if n == 1:
        b = rest[0]
        return lambda x: target(x, b)
    if n == 2:
        b, c = rest
        return lambda x: target(x, b, c)
    b, c, d, e = rest
    return lambda x: target(x, b, c, d, e)


def _fd_grad(f, args, eps=1e-6):
    x = args[0]
    if isinstance(x, (list, dict)):
        raise NotImplementedError("finite differences of a container argument")
    x = np.asarray(x, float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        up = (x + e) if x.ndim else float(x + e)
        dn = (x - e) if x.ndim else float(x - e)
        g[i] = (f(up, *args[1:]) - f(dn, *args[1:])) / (2 * eps)
    return g


def classify(name, J, stages=("grad", "value_and_grad", "jvp", "vmap", "jit", "jit_jax")):
    """``(label, {stage: verdict})`` for one function; ``J`` its JAX twin module.
    label: "ok", "WRONG", "refused" (s2s refuses, JAX accepts), "both refuse",
    "internal" (an exception that is not s2s's located TransformError)."""
    import jax

    import s2s

    ours, theirs = getattr(F, name), getattr(J, name)
    aux = name in AUX
    verdicts = {}

    def close(a, b, rtol=1e-6, atol=1e-8):
        la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
        return len(la) == len(lb) and all(
            np.shape(u) == np.shape(v) and np.allclose(np.asarray(u, float),
                                                       np.asarray(v, float), rtol, atol)
            for u, v in zip(la, lb))

    attempt = functools.partial(run_stage, verdicts,
                                lambda got, want: "ok" if close(got, want) else "WRONG")

    made = {}

    def grad_of(fn):  # one object for calls 1 to 3 (made at the first: it may refuse)
        if "g" not in made:
            made["g"] = s2s.grad(fn, has_aux=aux)
        return made["g"]

    for call in (1, 2, 3):
        a = bump(CASES[name], call)
        if "grad" in stages:
            attempt(f"grad@{call}", lambda: grad_of(ours)(*a), lambda: jax.grad(theirs, has_aux=aux)(*a),
                    None if aux else (lambda: _fd_grad(ours, a)))
    a = CASES[name]
    if "value_and_grad" in stages:
        attempt("value_and_grad", lambda: s2s.value_and_grad(ours, has_aux=aux)(*a),
                lambda: jax.value_and_grad(theirs, has_aux=aux)(*a))
    first = a[0]
    if "jvp" in stages and not isinstance(first, (list, dict)) and not aux:
        t = np.cos(np.arange(np.size(first)) + 1.0).reshape(np.shape(first))
        t = t if np.ndim(first) else float(t)
        attempt("jvp", lambda: s2s.jvp(_first(ours, a[1:]), (first,), (t,)),
                lambda: jax.jvp(_first(theirs, a[1:]), (first,), (t,)))
    if "vmap" in stages and name not in NO_VMAP:
        batch = np.stack([np.asarray(first, float), 0.8 * np.asarray(first, float)])
        attempt("vmap", lambda: s2s.vmap(_first(ours, a[1:]))(batch),
                lambda: jax.vmap(_first(theirs, a[1:]))(batch))
    if "jit" in stages:
        attempt("jit", lambda: s2s.jit(ours)(*a), lambda: theirs(*a))
    if "jit_jax" in stages:
        attempt("jit_jax", lambda: s2s.jit(s2s.grad(ours, has_aux=aux), backend="jax")(*a),
                lambda: jax.jit(jax.grad(theirs, has_aux=aux))(*a),
                None if aux else (lambda: _fd_grad(ours, a)))
    order = ("internal", "WRONG", "refused", "both refuse", "ok")
    label = min((v[0] for v in verdicts.values()), key=order.index)
    return label, verdicts
