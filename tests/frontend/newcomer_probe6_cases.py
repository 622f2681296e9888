"""The sixth newcomer probe's cases and its classifier (issue 23): each function of
newcomer_probe6_fns.py with arguments, run through s2s (grad at calls 1, 3 and 10 with
changing values, jvp, vmap of grad, hessian, jit of grad on both backends, grad at
special inputs, the caller writing into a result) in float64 or float32, compared with
JAX on the same source (``twin``) or central differences where JAX cannot run it.
The stages and the verdict are newcomer_probe5_cases.classify's; this module adds
arguments that are Python floats and NamedTuples, and a twin that also maps
``scipy.special`` to ``jax.scipy.special`` and keeps ``np.random`` NumPy's (a JAX user
draws constants with NumPy too)."""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from pathlib import Path

import newcomer_probe6_fns as F
import numpy as np
from newcomer_probe3_cases import run_stage
from newcomer_probe4_cases import verdict
from newcomer_probe5_cases import _aliasing

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
NO_HESSIAN = {"namedtuple_params_loss", "enumerate_param_dict"}


def twin(module):
    """``module``'s source again with numpy bound to jax.numpy, ``scipy.special`` to
    ``jax.scipy.special`` and ``np.random`` left NumPy's (tests/support.py's jax_twin
    plus those two)."""
    path = Path(module.__file__)
    text = path.read_text()
    for pattern, repl in ((r"^import numpy as np$", "import jax.numpy as np\nimport numpy as onp"),
                          (r"^import scipy\.special$", "import jax.scipy.special as jsp"),
                          (r"\bscipy\.special\.", "jsp."), (r"\bnp\.random\.", "onp.random.")):
        text = re.sub(pattern, repl, text, flags=re.M)
    spec = importlib.util.spec_from_loader(module.__name__ + "_jax", loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__file__ = str(path)
    sys.modules[spec.name] = mod  # (before it runs: @dataclass looks its module up)
    exec(compile(text, str(path), "exec"), mod.__dict__)
    return mod


def tree_map(fn, tree):
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(tree_map(fn, t) for t in tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(tree_map(fn, t) for t in tree)
    if isinstance(tree, dict):
        return {k: tree_map(fn, v) for k, v in tree.items()}
    return fn(tree)


def cast(args, dtype):
    """The arguments with their floats (arrays and Python floats) in ``dtype``; a
    Python float stays a Python float in float64 (what a user passes)."""
    def one(v):
        if isinstance(v, float):
            return v if dtype == np.float64 else dtype(v)
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            return v.astype(dtype)
        return v
    return tree_map(one, args)


def bump(args, call):
    """The arguments at the ``call``-th call: the first argument's floats scaled."""
    s = 1.0 + 0.07 * (call - 1) * (-1) ** call
    first = tree_map(lambda v: v * v.dtype.type(s) if isinstance(v, np.ndarray)
                     else type(v)(v * s), args[0])
    return (first,) + tuple(args[1:])


def _first(target, rest):
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
    if isinstance(x, (list, dict, tuple)):
        raise NotImplementedError("finite differences of a container argument")
    scalar = isinstance(x, float)
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    rest = cast(args[1:], np.float64)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        up, down = (x + e, x - e) if not scalar else (float(x + e), float(x - e))
        g[i] = (f(up, *rest) - f(down, *rest)) / (2 * eps)
    return g.astype(np.asarray(args[0]).dtype)


def jax_grad_runs(name, J) -> str:
    """Whether ``jax.grad`` of the twin runs on the probe's arguments: "runs", or the
    exception's type and first line."""
    import jax

    try:
        jax.grad(getattr(J, name))(*CASES[name][0])
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    return "runs"


def classify(name, J, dtype=np.float64, stages=None):
    """``(label, {stage: verdict})`` for one function in ``dtype``; ``J`` its twin.
    label: "ok", "WRONG" (values differ), "dtype" (values agree, dtypes differ),
    "refused" (s2s refuses, JAX accepts), "both refuse", "internal" (an exception that
    is not s2s's located TransformError), "alias"."""
    import jax

    import s2s

    ours, theirs = getattr(F, name), getattr(J, name)
    f32 = dtype == np.float32
    rtol, atol = (2e-3, 2e-4) if f32 else (1e-6, 1e-8)
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
    tangent = tree_map(lambda v: np.cos(np.arange(np.size(v)) + 1.0).reshape(
        np.shape(v)).astype(dtype) if isinstance(v, np.ndarray) else type(v)(0.6), first)
    if "jvp" in run_stages:
        attempt("jvp", lambda: s2s.jvp(single_ours, (first,), (tangent,)),
                lambda: jax.jvp(single_theirs, (first,), (tangent,)))
    if "vmap_grad" in run_stages:
        batch = tree_map(lambda v: np.stack([v, v * dtype(0.8), v * dtype(-1.1)]), first)
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
                lambda: jax.jit(jax.grad(theirs))(*bump(a, 3)), fd(bump(a, 3)))
    specials = {k: cast((v,) + tuple(CASES[name][0][1:]), dtype)
                for k, v in CASES[name][1].items()}
    if "special" in run_stages:
        for label, sa in specials.items():
            attempt(f"special:{label}", lambda sa=sa: s2s.grad(ours)(*sa),
                    lambda sa=sa: jax.grad(theirs)(*sa), fd(sa))
    if "warm_special" in run_stages:  # specialized on ordinary values, then a special one
        for label, sa in specials.items():
            for key, make in (("g", lambda: s2s.grad(ours)),
                              ("jit", lambda: s2s.jit(s2s.grad(ours)))):
                def warm_then(key=key, make=make, sa=sa):
                    fn = once(key, make)
                    for c in range(1, 11):
                        fn(*bump(a, c))
                    return fn(*sa)
                attempt(f"warm_special:{key}:{label}", warm_then,
                        lambda sa=sa: jax.grad(theirs)(*sa), fd(sa))
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
