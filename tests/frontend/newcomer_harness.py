"""The newcomer probes' shared harness (issue 23): each probe (newcomer_probeN_fns.py,
newcomer_probeN_cases.py, test_newcomer_probeN.py, N >= 4) runs its everyday functions
through s2s's transforms in float64 or float32 and compares each stage with JAX on the
same source (``twin``), or central differences where JAX cannot run it, with
``classify``; a probe's cases module names its functions' arguments and its stages in a
``Probe``.  The stages (``Probe.stages``, run in this order when named):

- ``grad``: grad at ``Probe.grad_calls`` (the first argument's floats scaled per call;
  with ``calls_between`` the calls in between run too, on the same object);
- ``value_and_grad``, ``jvp``, ``vjp``, ``vmap`` (of the function, two examples),
  ``vmap_grad`` (three examples), ``jacfwd``, ``jacrev``, ``hessian``;
- ``jit_value`` (s2s.jit of the function, recorded as "jit"), ``jit`` (s2s.jit of grad,
  three calls), ``jit_jax_once`` (of grad on JAX, one call, recorded as "jit_jax"),
  ``jit_jax`` (three calls);
- ``special``: grad at each special first argument (kinks, ties, NaN, size-1 and 0-size
  axes); ``warm_special``: the same after ten ordinary calls of the objects in
  ``Probe.warm`` ("g" grad, "jit" jit of grad, "hvp" hessian); ``vmap_special``: vmap of
  grad of two copies of each special argument;
- ``alias``: a result sharing memory with an input, or changed by the caller writing
  into the previous one; ``alias_all``: the same for every result (each leaf: values,
  auxiliary outputs, primal outputs) of each transform the probe names among
  value_and_grad, jvp, vjp, vmap, vmap_grad, jacfwd, hessian, jit_value, jit."""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

ORDER = ("internal", "WRONG", "alias", "refused", "dtype", "both refuse", "ok")
# the stages probes 10 to 14 run, in this order
STAGES = ("grad", "value_and_grad", "jvp", "vmap_grad", "hessian", "jit", "jit_jax",
          "special", "warm_special", "vmap_special", "alias", "alias_all")
# the same stages, swept by a construct's own test file (a function of one array)
CONSTRUCT_STAGES = STAGES


@dataclass(frozen=True)
class Probe:
    """One probe's functions, cases and settings."""

    fns: ModuleType
    cases: dict  # name: (arguments, {label: special first argument})
    stages: tuple
    no_hessian: frozenset = frozenset()
    tol64: tuple = (1e-7, 1e-9)  # (rtol, atol) in float64; float32's is (2e-3, 2e-4)
    step: float = 0.07  # bump's scale step
    grad_calls: tuple = (1, 3, 10)
    calls_between: bool = True
    warm: tuple = ("g", "jit")
    jit_jax_oracle: str = "jit"  # jit_jax's oracle: jax.jit(jax.grad), or "grad" alone
    # (function, special label) pairs whose Hessian's oracle is central differences of
    # JAX's gradient, not jax.hessian: where JAX's convention at a kink the function's
    # values never reach (a clip at a bound met only by rounding) is not the derivative
    hessian_fd: frozenset = frozenset()
    # functions with no JAX oracle for their source: central differences are theirs
    fd_oracle: frozenset = frozenset()

    def twin(self):
        """:func:`twin` of the probe's functions, those of ``fd_oracle`` raising
        NotImplementedError (central differences are their oracle)."""
        J = twin(self.fns)
        for name in self.fd_oracle:
            setattr(J, name, _no_jax_oracle)
        return J

    def classify(self, name, J, dtype=np.float64, stages=None):
        """``(label, {stage: verdict})``: :func:`classify` of this probe."""
        return classify(self, name, J, dtype, stages)

    def jax_grad_runs(self, name, J) -> str:
        return jax_grad_runs(self, name, J)


def _no_jax_oracle(*args, **kwargs):
    raise NotImplementedError("JAX cannot run this source as written")


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


def run_stage(verdicts, compare, stage, run_ours, run_theirs, fd=None):
    """``verdicts[stage]``: ``(class, detail)`` of one transform of one function.  The
    expected value is JAX's (``run_theirs``), else ``fd()``'s where JAX refuses; a
    TransformError of s2s is "refused" ("both refuse" where JAX refuses too), any
    other exception "internal"; else ``compare(got, expected)`` ("ok", "WRONG",
    "dtype").  Shared by the newcomer probes."""
    import s2s

    jax_refuses = False
    try:
        expected, oracle = run_theirs(), "jax"
    except Exception as e:  # noqa: BLE001 - JAX refuses: finite differences
        jax_refuses = True
        expected, oracle = e, None
        if fd is not None:
            try:
                expected, oracle = fd(), "fd"
            except NotImplementedError:
                pass
    try:
        got = run_ours()
    except s2s.TransformError as e:
        verdicts[stage] = ("both refuse" if jax_refuses else "refused",
                           str(e).splitlines()[0][:200])
        return
    except Exception as e:  # noqa: BLE001
        verdicts[stage] = ("internal", f"{type(e).__name__}: {str(e)[:200]}")
        return
    if oracle is None:
        verdicts[stage] = ("ok", f"jax refuses ({type(expected).__name__}), s2s runs")
        return
    verdict = compare(got, expected)
    tag = oracle + (" (jax refuses)" if jax_refuses else "")
    verdicts[stage] = (verdict, tag if verdict == "ok" else
                       f"s2s={got!r:.200} ref={expected!r:.200}")


def twin(module):
    """``module``'s source again with numpy bound to jax.numpy, ``scipy.special``,
    ``scipy.stats`` and ``scipy.linalg`` to JAX's and ``np.random`` left NumPy's
    (tests/support.py's jax_twin plus those)."""
    path = Path(module.__file__)
    text = path.read_text()
    for pattern, repl in ((r"^import numpy as np$", "import jax.numpy as np\nimport numpy as onp"),
                          (r"^import scipy\.special$", "import jax.scipy.special as jsp"),
                          (r"\bscipy\.special\.", "jsp."), (r"\bnp\.random\.", "onp.random."),
                          (r"^import scipy\.(stats|linalg)$", r"import jax.scipy.\1"),
                          (r"\bscipy\.(stats|linalg)\.", r"jax.scipy.\1.")):
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


def bump(args, call, step=0.07):
    """The arguments at the ``call``-th call: the first argument's floats scaled."""
    s = 1.0 + step * (call - 1) * (-1) ** call
    first = tree_map(lambda v: v * v.dtype.type(s) if isinstance(v, np.ndarray)
                     else type(v)(v * s), args[0])
    return (first,) + tuple(args[1:])


def bind_rest(target, rest):
    """``x -> target(x, *rest)`` written without a spread of a closure tuple."""
    n = len(rest)
    if n == 0:
        return lambda x: target(x)
    if n == 1:
        b = rest[0]
        return lambda x: target(x, b)
    b, c = rest
    return lambda x: target(x, b, c)


def fd_grad(f, args, eps):
    """Central differences of ``f`` (run as written, float64) in its first argument:
    an array or a Python float."""
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


def fd_jacobian(g, x, eps=1e-5):
    """Central differences of the gradient function ``g`` at the array ``x``: the
    Hessian, shaped ``x.shape * 2``."""
    x = np.asarray(x, np.float64)
    columns = []
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        columns.append((np.asarray(g(x + e)) - np.asarray(g(x - e))) / (2 * eps))
    return np.stack(columns, -1).reshape(x.shape * 2)


def aliasing(f, args):
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


def aliasing_all(ours, args, stages, hessian_too=True):
    """``{transform: problem}``: :func:`aliasing` over every result leaf of each
    transform named in ``stages`` (run on ``args``; the first argument differentiated)."""
    import s2s

    first, rest = args[0], args[1:]
    single = bind_rest(ours, rest)
    tangent = tree_map(lambda v: np.ones_like(v) if isinstance(v, np.ndarray) else 1.0, first)

    def vjp_all(x):
        out, pull = s2s.vjp(single, x)
        return out, pull(tree_map(np.ones_like, out))

    batch = tree_map(lambda v: np.stack([v, v]), first)
    runs = {"value_and_grad": (lambda: s2s.value_and_grad(ours), args),
            "jvp": (lambda: lambda x: s2s.jvp(single, (x,), (tangent,)), (first,)),
            "vjp": (lambda: vjp_all, (first,)), "vmap": (lambda: s2s.vmap(single), (batch,)),
            "vmap_grad": (lambda: s2s.vmap(s2s.grad(single)), (batch,)),
            "jacfwd": (lambda: s2s.jacfwd(single), (first,)),
            "jit_value": (lambda: s2s.jit(ours), args),
            "jit": (lambda: s2s.jit(s2s.grad(ours)), args)}
    if hessian_too:
        runs["hessian"] = (lambda: s2s.hessian(single), (first,))
    problems = {}
    for key, (make, call_args) in runs.items():
        if key not in stages:
            continue
        try:
            fn = make()
            first_out = fn(*call_args)
            leaves = [np.asarray(v) if not isinstance(v, np.ndarray) else v
                      for v in _leaves(first_out)]
            kept = [np.array(v, copy=True) for v in leaves]
            arrays = [a for a in _leaves(call_args) if isinstance(a, np.ndarray)]
            if any(isinstance(v, np.ndarray) and np.shares_memory(v, a)
                   for v in _leaves(first_out) for a in arrays):
                problems[key] = "a result aliases an input"
                continue
            for v in _leaves(first_out):
                if isinstance(v, np.ndarray) and v.flags.writeable and v.size:
                    v[...] = 123.0
            again = [np.asarray(v) for v in _leaves(fn(*call_args))]
            if len(again) != len(kept) or not all(
                    np.allclose(u, w, rtol=1e-6, atol=1e-9, equal_nan=True)
                    for u, w in zip(again, kept)):
                problems[key] = "writing into a result changed the next one"
        except Exception:  # noqa: BLE001 - the transform's own stage reports it
            continue
    return problems


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    if isinstance(tree, dict):
        return [leaf for t in tree.values() for leaf in _leaves(t)]
    return [tree]


def pinned(name, dtype, expected, expected_f32) -> str:
    """The class a probe's test records for ``name`` in ``dtype``: its ``expected``
    entry (both dtypes), else in float32 its ``expected_f32`` entry, else ok."""
    return expected.get(name) or (expected_f32.get(name, "ok") if dtype == np.float32
                                  else "ok")


def jax_grad_runs(probe, name, J) -> str:
    """Whether ``jax.grad`` of the twin runs on the probe's arguments: "runs", or the
    exception's type and first line."""
    import jax

    try:
        jax.grad(getattr(J, name))(*probe.cases[name][0])
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    return "runs"


def classify(probe, name, J, dtype=np.float64, stages=None):
    """``(label, {stage: verdict})`` for one function of ``probe`` in ``dtype``; ``J``
    its twin.  label: "ok", "WRONG" (values differ), "dtype" (values agree, dtypes
    differ), "refused" (s2s refuses, JAX accepts), "both refuse", "internal" (an
    exception that is not s2s's located TransformError), "alias": the worst stage's."""
    import jax

    import s2s

    ours, theirs = getattr(probe.fns, name), getattr(J, name)
    f32 = dtype == np.float32
    rtol, atol = (2e-3, 2e-4) if f32 else probe.tol64
    verdicts = {}
    run_stages = stages or probe.stages
    hessian_too = name not in probe.no_hessian
    attempt = functools.partial(run_stage, verdicts,
                                functools.partial(verdict, rtol=rtol, atol=atol))
    base = cast(probe.cases[name][0], dtype)
    fd = (lambda a: (lambda: fd_grad(ours, a, 1e-6))) if not f32 else (lambda a: None)
    at = functools.partial(bump, step=probe.step)
    made = {}

    def once(key, make):  # one object for all calls (made at the first: it may refuse)
        if key not in made:
            made[key] = make()
        return made[key]

    if "grad" in run_stages:
        for call in probe.grad_calls:
            for c in range(call - 1 if probe.calls_between and call > 1 else 0):
                try:  # the calls in between
                    once("g", lambda: s2s.grad(ours))(*at(base, c + 1))
                except Exception:  # noqa: BLE001 - the stage below reports it
                    break
            a = at(base, call)
            attempt(f"grad@{call}", lambda: once("g", lambda: s2s.grad(ours))(*a),
                    lambda: jax.grad(theirs)(*a), fd(a))
    a = base
    first, rest = a[0], a[1:]
    single_ours, single_theirs = bind_rest(ours, rest), bind_rest(theirs, rest)
    if "value_and_grad" in run_stages:
        attempt("value_and_grad", lambda: s2s.value_and_grad(ours)(*a),
                lambda: jax.value_and_grad(theirs)(*a))
    tangent = tree_map(lambda v: np.cos(np.arange(np.size(v)) + 1.0).reshape(
        np.shape(v)).astype(dtype) if isinstance(v, np.ndarray) else type(v)(0.6), first)
    if "jvp" in run_stages:
        attempt("jvp", lambda: s2s.jvp(single_ours, (first,), (tangent,)),
                lambda: jax.jvp(single_theirs, (first,), (tangent,)))
    if "vjp" in run_stages:
        def vjp_with(vjp, fn):
            out, pull = vjp(fn, first)
            return out, pull(tree_map(np.ones_like, out) if isinstance(
                out, (tuple, list, dict)) else np.ones_like(np.asarray(out)))
        attempt("vjp", lambda: vjp_with(s2s.vjp, single_ours),
                lambda: vjp_with(jax.vjp, single_theirs))
    if "vmap" in run_stages:
        batch = tree_map(lambda v: np.stack([v, v * dtype(0.8)]), first)
        attempt("vmap", lambda: s2s.vmap(single_ours)(batch),
                lambda: jax.vmap(single_theirs)(batch))
    if "vmap_grad" in run_stages:
        batch = tree_map(lambda v: np.stack([v, v * dtype(0.8), v * dtype(-1.1)]), first)
        attempt("vmap_grad", lambda: s2s.vmap(s2s.grad(single_ours))(batch),
                lambda: jax.vmap(jax.grad(single_theirs))(batch))
    for stage, ours_t, theirs_t in (("jacfwd", s2s.jacfwd, jax.jacfwd),
                                    ("jacrev", s2s.jacrev, jax.jacrev),
                                    ("hessian", s2s.hessian, jax.hessian)):
        if stage in run_stages and (stage != "hessian" or hessian_too):
            attempt(stage, lambda o=ours_t: o(single_ours)(first),
                    lambda t=theirs_t: t(single_theirs)(first))
    if "jit_value" in run_stages:
        attempt("jit", lambda: s2s.jit(ours)(*a), lambda: theirs(*a))
    if "jit" in run_stages:
        attempt("jit", lambda: [once("jit", lambda: s2s.jit(s2s.grad(ours)))(*at(a, c))
                                for c in (1, 2, 3)][-1],
                lambda: jax.grad(theirs)(*at(a, 3)), fd(at(a, 3)))
    if "jit_jax_once" in run_stages:
        attempt("jit_jax", lambda: s2s.jit(s2s.grad(ours), backend="jax")(*a),
                lambda: jax.jit(jax.grad(theirs))(*a), fd(a))
    if "jit_jax" in run_stages:
        attempt("jit_jax", lambda: [once("jj", lambda: s2s.jit(s2s.grad(ours), backend="jax"))(
            *at(a, c)) for c in (1, 2, 3)][-1],
                lambda: (jax.jit(jax.grad(theirs)) if probe.jit_jax_oracle == "jit" else
                         jax.grad(theirs))(*at(a, 3)), fd(at(a, 3)))
    specials = {k: cast((v,) + tuple(probe.cases[name][0][1:]), dtype)
                for k, v in probe.cases[name][1].items()}
    if "special" in run_stages:
        for label, sa in specials.items():
            attempt(f"special:{label}", lambda sa=sa: s2s.grad(ours)(*sa),
                    lambda sa=sa: jax.grad(theirs)(*sa), fd(sa))
    if "warm_special" in run_stages:  # specialized on ordinary values, then a special one
        makers = {"g": lambda: s2s.grad(ours), "jit": lambda: s2s.jit(s2s.grad(ours)),
                  "hvp": lambda: s2s.hessian(single_ours)}
        for label, sa in specials.items():
            for key in probe.warm:
                if key == "hvp" and not hessian_too:
                    continue
                hvp = key == "hvp"

                def warm_then(key=key, hvp=hvp, sa=sa):
                    fn = once(key, makers[key])
                    for c in range(1, 11):
                        fn(*(at(a, c)[:1] if hvp else at(a, c)))
                    return fn(*(sa[:1] if hvp else sa))
                oracle = ((lambda sa=sa: jax.hessian(single_theirs)(sa[0])) if hvp else
                          (lambda sa=sa: jax.grad(theirs)(*sa)))
                if hvp and (name, label) in probe.hessian_fd:
                    oracle = (lambda sa=sa: fd_jacobian(jax.grad(single_theirs), sa[0])
                              .astype(dtype))
                attempt(f"warm_special:{key}:{label}", warm_then, oracle,
                        None if hvp else fd(sa))
    if "vmap_special" in run_stages:
        for label, value in probe.cases[name][1].items():
            sv = cast(value, dtype)
            attempt(f"vmap_special:{label}",
                    lambda sv=sv: s2s.vmap(s2s.grad(single_ours))(np.stack([sv, sv])),
                    lambda sv=sv: jax.vmap(jax.grad(single_theirs))(np.stack([sv, sv])))
    if "alias" in run_stages:
        try:
            problem = aliasing(s2s.grad(ours), a)
        except Exception:  # noqa: BLE001 - grad's own stage reports it
            problem = None
        if problem:
            verdicts["alias"] = ("alias", problem)
    if "alias_all" in run_stages:
        for key, problem in aliasing_all(ours, a, run_stages, hessian_too).items():
            verdicts[f"alias_all:{key}"] = ("alias", problem)
    label = min((v[0] for v in verdicts.values()), key=ORDER.index)
    return label, verdicts


def sweep_test(cases, expected, expected_f32):
    """A probe's slow sweep, to bind to ``test_probe_sweep`` in its test module: each
    function of ``cases.PROBE`` in float64 and float32 has the class pinned in
    ``expected``/``expected_f32`` (:func:`pinned`)."""
    import pytest
    from support import HAVE_JAX

    @pytest.mark.slow
    @pytest.mark.every_case
    @pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
    @pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
    @pytest.mark.parametrize("name", list(cases.PROBE.cases))
    def test_probe_sweep(name, dtype) -> None:
        """Each function's class is the one recorded: accepted and correct, or refused
        with a located TransformError (never WRONG, never an internal error)."""
        label, verdicts = cases.PROBE.classify(name, cases.PROBE.twin(), dtype)
        assert label == pinned(name, dtype, expected, expected_f32), verdicts

    return test_probe_sweep


def check_grad_against_fd(probe, names, calls=3, rtol=1e-6, atol=1e-8):
    """The default tier's share of a probe (no JAX): s2s.grad of each function in
    ``names``, one object called ``calls`` times at its first argument scaled by 1,
    1.1, 1.2, ..., against central differences."""
    import s2s

    for name in names:
        f = getattr(probe.fns, name)
        g = s2s.grad(f)
        args = probe.cases[name][0]
        for c in range(calls):
            a = (args[0] * (1.0 + 0.1 * c),) + tuple(args[1:])
            np.testing.assert_allclose(g(*a), fd_grad(f, a, 1e-6), rtol=rtol, atol=atol,
                                       err_msg=f"{name} call {c}")
