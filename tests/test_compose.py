"""Composition: transforms of emitted code, on random programs, against JAX.

Every ordering the emitted code supports today is checked: grad of grad (scalar
input), jvp of grad (Hessian-vector products), jacfwd of grad (the Hessian), jacrev of
grad (reverse over reverse), vmap of grad (per-example gradients), grad of jvp (a
function calling s2s.jvp), jacfwd of jacrev and jacrev of jacfwd (a Jacobian's code as
input to another transform), and jacfwd/jacrev of the function itself.  A few hundred examples run by default; ``-m slow`` runs a
longer sweep.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import s2s
from programs import load, programs
from support import HAVE_JAX, jax
from support import compiled as _compiled

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

FAST = settings(max_examples=10, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=400, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
TOL = {"rtol": 1e-8, "atol": 1e-9}

X = np.array([0.3, -0.7, 1.1, 0.45])
V = np.array([0.5, 0.25, -1.0, 2.0])

# off the programs' constants (X[0] = 0.3 ties np.maximum(x, 0.3)): at a tie JAX's second
# derivative of hypot follows its implementation's swap of the arguments, not the
# calculus of the 0.5 convention s2s follows (both orders of s2s agree there)
X_OFF_TIES = X + 0.0123


def compiled(fn):
    """JAX's answer compiled by ``jax.jit``, or op by op where the compiled answer holds a
    NaN: XLA's fusion can compute ``v0 - np.max(v0)`` once for ``np.max`` of it and again
    for the comparison that counts the ties of that max, so the count comes out 0 and the
    max's derivative 0 / 0 (``np.max(x*x - np.max(x*x))``: NaN compiled, the calculus's
    value op by op, as s2s and finite differences give)."""
    jitted = _compiled(fn)

    def run(*args):
        got = jitted(*args)
        if any(np.isnan(np.asarray(leaf)).any() for leaf in jax.tree_util.tree_leaves(got)):
            return fn(*args)
        return got

    return run


def close(got, expected):
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), **TOL)


def check_grad_grad(source):
    f, fj = load(source)
    for x in (X_OFF_TIES[0], -1.2):  # (0.3 itself ties np.maximum(x, 0.3): see above)
        close(s2s.grad(s2s.grad(f))(x), compiled(jax.grad(jax.grad(fj)))(x))


def check_jvp_grad(source):
    f, fj = load(source)
    got = s2s.jvp(s2s.grad(f), (X_OFF_TIES,), (V,))
    expected = compiled(lambda x, v: jax.jvp(jax.grad(fj), (x,), (v,)))(X_OFF_TIES, V)
    close(got[0], expected[0])
    close(got[1], expected[1])


def check_hessian(source):
    f, fj = load(source)
    close(s2s.hessian(f)(X_OFF_TIES), compiled(jax.hessian(fj))(X_OFF_TIES))


def check_jacrev_grad(source):
    f, fj = load(source)
    close(s2s.jacrev(s2s.grad(f))(X_OFF_TIES), compiled(jax.jacrev(jax.grad(fj)))(X_OFF_TIES))


def check_vmap_grad(source):
    f, fj = load(source)
    xs = np.stack([X, V, X * V])
    close(s2s.vmap(s2s.grad(f))(xs), compiled(jax.vmap(jax.grad(fj)))(xs))


_WRAPPED = iter(range(10**9))


def load_grad_of_jvp(source):
    """``g(x) = s2s.jvp(f, (x,), (V,))[1]`` in the program's own module: grad of jvp
    transforms a function that calls s2s.jvp."""
    import importlib.util
    import sys
    import tempfile
    from pathlib import Path

    k = next(_WRAPPED)
    path = Path(tempfile.mkdtemp(prefix="s2s_gj_")) / f"grad_of_jvp_{k}.py"
    path.write_text(
        "import numpy as np\nimport s2s\n\nV = np.array([0.5, 0.25, -1.0, 2.0])\n\n\n"
        + source + "\n\ndef g(x):\n    return s2s.jvp(f, (x,), (V,))[1]\n")
    spec = importlib.util.spec_from_file_location(f"s2s_grad_of_jvp_{k}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.g


def check_grad_jvp(source):
    _, fj = load(source)
    g = load_grad_of_jvp(source)
    expected = compiled(jax.grad(lambda x: jax.jvp(fj, (x,), (V,))[1]))(X_OFF_TIES)
    close(s2s.grad(g)(X_OFF_TIES), expected)


def check_jacfwd_jacrev(source):
    f, fj = load(source)
    close(s2s.jacfwd(s2s.jacrev(f))(X_OFF_TIES), compiled(jax.jacfwd(jax.jacrev(fj)))(X_OFF_TIES))


def check_jacrev_jacfwd(source):
    f, fj = load(source)
    close(s2s.jacrev(s2s.jacfwd(f))(X_OFF_TIES), compiled(jax.jacrev(jax.jacfwd(fj)))(X_OFF_TIES))


CHECKS = {
    "grad_grad": (check_grad_grad, False),
    "jvp_grad": (check_jvp_grad, True),
    "jacfwd_grad": (check_hessian, True),
    "jacrev_grad": (check_jacrev_grad, True),
    "vmap_grad": (check_vmap_grad, True),
    "grad_jvp": (check_grad_jvp, True),
    "jacfwd_jacrev": (check_jacfwd_jacrev, True),
    "jacrev_jacfwd": (check_jacrev_jacfwd, True),
}


@pytest.mark.slow
@pytest.mark.parametrize("order", CHECKS)
def test_composition(order):
    check, vector = CHECKS[order]
    # a Jacobian of a Jacobian generates four modules per example: fewer by default
    fast = settings(FAST, max_examples=4) if order in ("jacfwd_jacrev", "jacrev_jacfwd") \
        else FAST

    @fast
    @given(programs(vector=vector))
    def run(source):
        check(source)

    run()


@pytest.mark.slow
@pytest.mark.parametrize("order", CHECKS)
def test_composition_long(order):
    check, vector = CHECKS[order]

    @SLOW
    @given(programs(vector=vector, steps=(3, 8)))
    def run(source):
        check(source)

    run()


@pytest.mark.slow
def test_max_of_shifted_max_second_order() -> None:
    """The program hypothesis found where compiled JAX answers NaN (see ``compiled``):
    s2s's second derivatives against op-by-op JAX and against central differences of
    s2s's own first derivatives."""
    source = ("def f(x):\n    v2 = x * x - np.max(x * x)\n"
              "    return np.max(v2) + np.sum(v2)\n")
    f, fj = load(source)
    hess = s2s.jacfwd(s2s.jacrev(f))(X_OFF_TIES)
    close(hess, jax.jacfwd(jax.jacrev(fj))(X_OFF_TIES))
    close(hess, compiled(jax.jacfwd(jax.jacrev(fj)))(X_OFF_TIES))
    g = s2s.grad(f)
    eps = 1e-6
    fd = np.stack([(g(X_OFF_TIES + eps * e) - g(X_OFF_TIES - eps * e)) / (2 * eps)
                   for e in np.eye(4)], axis=1)
    np.testing.assert_allclose(hess, fd, rtol=1e-6, atol=1e-6)
    close(s2s.grad(load_grad_of_jvp(source))(X_OFF_TIES), hess @ V)


@pytest.mark.slow
def test_third_order() -> None:
    f, fj = load("def f(x):\n    return np.sin(x) * x ** 3 + np.exp(np.tanh(x))\n")
    got = s2s.grad(s2s.grad(s2s.grad(f)))(0.7)
    close(got, jax.grad(jax.grad(jax.grad(fj)))(0.7))


# ---- jvp of grad (Hessian-vector products) over the whole corpus ---------------------

from corpus import CASES  # noqa: E402
from oracle import attr_name  # noqa: E402
from support import jax_twin, leaves, rng_tree  # noqa: E402

import corpus_fns  # noqa: E402

HVP_GAPS: dict[str, str] = {}
HVP_CASES = [c for c in CASES if not c.kwargs and c.jax and not c.has_aux]


def hvp_params():
    return [pytest.param(c, id=c.name, marks=[pytest.mark.xfail(strict=True,
            reason=HVP_GAPS[c.name])] if c.name in HVP_GAPS else []) for c in HVP_CASES]


@pytest.mark.parametrize("case", hvp_params())
def test_hvp_of_every_corpus_function(case) -> None:
    """Forward mode over each emitted gradient (loops, tapes, writes, calls)."""
    args = case.args()
    tangents = rng_tree(args, np.random.default_rng(0))
    twin = getattr(jax_twin(corpus_fns), attr_name(case))
    got = s2s.jvp(s2s.grad(case.fn, argnums=case.argnums), args, tangents)
    expected = jax.jvp(jax.grad(twin, argnums=case.argnums), args, tangents)
    f32 = any(np.result_type(x) == np.float32 for x in leaves(args))
    tol = {"rtol": 1e-4, "atol": 1e-5} if f32 else TOL
    for g, e in zip(leaves(got), leaves(expected)):
        np.testing.assert_allclose(np.asarray(g, float), np.asarray(e, float), **tol)


# ---- reverse over reverse: the VJP of each emitted gradient over the whole corpus -----

# reverse mode over the emitted tapes (lists appended going forward, popped coming
# back) is undone in turn: each pop gives the cotangent list an item back
VJP_OF_GRAD_GAPS: dict[str, str] = {}


def vjp_of_grad_params():
    return [pytest.param(c, id=c.name, marks=[pytest.mark.xfail(strict=True,
            reason=VJP_OF_GRAD_GAPS[c.name])] if c.name in VJP_OF_GRAD_GAPS else [])
            for c in HVP_CASES]


@pytest.mark.parametrize("case", vjp_of_grad_params())
def test_vjp_of_grad_of_every_corpus_function(case) -> None:
    """Reverse mode over each emitted gradient (loops and their tapes, writes, calls),
    against ``jax.vjp`` of ``jax.grad`` with the same cotangent."""
    args = case.args()
    twin = getattr(jax_twin(corpus_fns), attr_name(case))
    g = s2s.grad(case.fn, argnums=case.argnums)
    out, pullback = s2s.vjp(g, *args)
    jout, jpullback = jax.vjp(jax.grad(twin, argnums=case.argnums), *args)
    cot = rng_tree(jout, np.random.default_rng(1))
    f32 = any(np.result_type(x) == np.float32 for x in leaves(args))
    tol = {"rtol": 1e-4, "atol": 1e-5} if f32 else TOL
    for got, expected in ((out, jout), (pullback(cot), jpullback(cot))):
        for a, e in zip(leaves(got), leaves(expected)):
            if np.asarray(e).dtype == jax.dtypes.float0:
                continue
            np.testing.assert_allclose(np.asarray(a, float), np.asarray(e, float), **tol)


FD_CASES = [c for c in CASES if not c.jax and not c.kwargs and not c.has_aux]


@pytest.mark.parametrize("case", FD_CASES, ids=lambda c: c.name)
def test_vjp_of_grad_where_jax_cannot_run_the_program(case) -> None:
    """In-place writes (and Python math) JAX refuses: reverse over reverse against
    central differences of the emitted gradient along the cotangent."""
    from support import fd_grad

    args = case.args()
    g = s2s.grad(case.fn, argnums=0)
    out, pullback = s2s.vjp(g, *args)
    cot = np.random.default_rng(2).normal(size=np.shape(out))
    (expected,) = fd_grad(lambda *a: np.sum(np.asarray(g(*a)) * cot), args, 0)
    np.testing.assert_allclose(pullback(cot)[0], expected, rtol=1e-6, atol=1e-7)


@pytest.mark.slow
def test_second_order_of_the_loop_with_a_tape() -> None:
    """The control-flow issue's function, y = y * x + np.sin(y) n times: grad of its
    emitted gradient (reverse over the tape's appends and pops) and its Hessian at
    n = 50, against JAX."""
    twin = jax_twin(corpus_fns).loop_carried
    got = s2s.grad(s2s.grad(corpus_fns.loop_carried))(0.3, 50)
    np.testing.assert_allclose(got, jax.grad(jax.grad(twin))(0.3, 50), rtol=1e-12)
    x = np.linspace(0.1, 0.5, 10)
    np.testing.assert_allclose(s2s.hessian(corpus_fns.loop_carried)(x, 50),
                               jax.hessian(twin)(x, 50), rtol=1e-12, atol=1e-12)
