"""A float32 program's specialized gradient computes in float32 where JAX does.

The specializer's rewrites may spell a value in another dtype than the generic code
does only as JAX computes it (``docs/optimizer-rules.md``, the rows *in the operands'
dtype*).  Each program here is specialized with float32 arguments, its specialized
code run instrumented (``specialize.probe_run``: the dtype of every subexpression),
and no array in it may be float64 (the programs make none themselves); its
gradients at the 1st, 2nd, 3rd and 10th call are ``jax.grad``'s, dtypes included,
in float32 and float64, with ties of ``np.maximum``/``np.minimum`` operands (where
the half share shows; ``tie_shares`` writes the share in the maximum's dtype, and a
share times a cotangent as that product and a masked half, ``split_shares``)."""

from __future__ import annotations

import ast

import float32_fns as F
import numpy as np
import pytest
from support import fd_grad, jax_twin, leaves

import s2s
from s2s import syntax
from s2s.optimize.specialize import probe_run


def _args(name: str, dtype) -> tuple:
    r = np.random.default_rng(7)
    if name == "mlp_relu":
        params = {"w1": r.normal(size=(6, 8)), "b1": r.normal(size=8) * 0.1,
                  "w2": r.normal(size=(8, 3)), "b2": np.zeros(3)}
        x = r.normal(size=(5, 6))
        x[0] = 0.0  # (a row of zeros: pre-activations equal to b1; b1[:2] zero: ties)
        params["b1"][:2] = 0.0
        args = (params, x, r.normal(size=(5, 3)))
    elif name in SOLVES:
        args = SOLVES[name](r)
    elif name.startswith("gp"):
        x = np.sort(r.uniform(0, 3, 12))
        args = (np.array(0.7), x, np.sin(x) + 0.1 * r.normal(size=12))
    else:
        a = r.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=(4, 5))
        args = (a, r.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=(4, 5)))
    return tuple({k: v.astype(dtype) for k, v in a.items()} if isinstance(a, dict)
                 else a.astype(dtype) for a in args)


def _float64_arrays(g, args: tuple) -> list[str]:
    """The subexpressions of ``g``'s specialized code that are float64 arrays."""
    text = g.specialized_source
    assert text is not None
    module = syntax.parse(text)
    name = next(n.name for n in module.body if isinstance(n, ast.FunctionDef))
    namespace = dict(vars(F))
    exec(compile(text, "<specialized>", "exec"), namespace)
    _, facts = probe_run(module, namespace, name, args)
    return [ast.unparse(node) for node in ast.walk(module)
            if facts.get(getattr(node, "_k", None)) is not None
            and facts[node._k][0] != () and facts[node._k][1] == np.float64]


# programs around the solves pass's guards: a result returned (not merged), a solve of
# another's result (not merged), a matrix not symmetric, sums and products of
# symmetric pieces, a matrix right-hand side
SOLVES = {"solve_returned": lambda r: (r.normal(size=(4, 4)) + 4 * np.eye(4),
                                       r.normal(size=4)),
          "chained": lambda r: (r.normal(size=(4, 4)), r.normal(size=4)),
          "not_symmetric": lambda r: (r.normal(size=5), r.normal(size=5), r.normal(size=5)),
          "outer_sym": lambda r: (r.normal(size=5), r.normal(size=5)),
          "matrix_rhs": lambda r: (r.normal(size=(4, 4)), r.normal(size=(4, 3))),
          "rebound_rows": lambda r: (r.normal(size=5), r.normal(size=5))}
ARGNUMS = {"mlp_relu": 0, "clipped_pair": (0, 1), "gp_nll": 0, "gp_typed": 0,
           "solve_returned": (0, 1), "chained": (0, 1), "not_symmetric": (0, 1, 2),
           "outer_sym": (0, 1), "matrix_rhs": (0, 1), "rebound_rows": (0, 1)}
# (np.eye(n) is float64: NumPy's and JAX's code promote)
FLOAT64_CONSTANTS = {"gp_nll", *SOLVES}


# (JAX's eager gradients cost seconds a program: -m slow.  The default tier checks the
# Gaussian process in float32 against finite differences below, and the float32 relu's
# share is checked by its rule's row in tests/test_optimizer_rules.py)
CASES = [(name, dtype) for name in sorted(ARGNUMS) for dtype in (np.float32, np.float64)]


def test_a_float32_gaussian_process_factorizes_once(monkeypatch) -> None:
    """Its gradient's three solves and inverse of one matrix are one solve (pass
    ``solves``; k is symmetric by construction, so ``k.T`` is ``k``), its vector
    cotangent multiplies in float64 as the helper did (a float32 ``y`` beside float64
    ``k``), and the gradient is float32 (JAX's dtype for a float32 ``ell``) and the
    float64 central differences' at calls 1, 2, 3 and 10."""
    monkeypatch.setenv("S2S_SPECIALIZE", "sync")
    args = _args("gp_nll", np.float32)
    want = fd_grad(F.gp_nll, tuple(a.astype(np.float64) for a in args), 0)[0]
    g = s2s.grad(F.gp_nll)
    for call in range(10):
        got = g(*args)
        if call in (0, 1, 2, 9):
            assert got.dtype == np.float32 and got.shape == ()
            np.testing.assert_allclose(got, want, rtol=1e-4)
    code = [ln for ln in g.specialized_source.splitlines() if not ln.lstrip().startswith("#")]
    assert sum(ln.count("np.linalg.") for ln in code) == 1, g.specialized_source
    assert "matmul_rhs_bar(" not in "\n".join(code[2:]), g.specialized_source


@pytest.mark.slow
@pytest.mark.parametrize("name, dtype", CASES)
def test_the_specialized_gradient_is_jaxs_in_its_dtype(name, dtype, monkeypatch) -> None:
    jax = pytest.importorskip("jax")
    monkeypatch.setenv("S2S_SPECIALIZE", "sync")
    args = _args(name, dtype)
    want = jax.grad(getattr(jax_twin(F), name), argnums=ARGNUMS[name])(*args)
    g = s2s.grad(getattr(F, name), argnums=ARGNUMS[name])
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    for call in range(10):
        got = g(*args)
        if call in (0, 1, 2, 9):
            for a, b in zip(leaves(got), leaves(want)):
                assert a.dtype == b.dtype == dtype, (call, a.dtype, b.dtype)
                np.testing.assert_allclose(a, np.asarray(b), **tol)
            results = leaves(got)  # (each its own array, none the caller's)
            assert not any(np.shares_memory(a, b) for i, a in enumerate(results)
                           for b in results[i + 1:] + leaves(args))
        leaves(got)[0][...] = 7.0  # (the caller writes into a result)
    if dtype == np.float32 and name not in FLOAT64_CONSTANTS:
        assert _float64_arrays(g, args) == [], g.specialized_source
    if name in SOLVES:
        return
    if name.startswith("gp"):  # (one LU factorization of k: its solves side by side)
        code = [ln for ln in g.specialized_source.splitlines()
                if not ln.lstrip().startswith("#")]
        assert sum(ln.count("np.linalg.") for ln in code) == 1, g.specialized_source
    else:  # (the relu's share: a product and a masked half, in the arguments' dtype)
        assert "out=" in g.specialized_source, g.specialized_source


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tie_shares_under_vmap_jvp_and_loops(dtype, monkeypatch) -> None:
    """The tie share's dtype and its split product (``ties``) where the operands tie,
    in per-example gradients, a Hessian-vector product of a clip and a loop of relus:
    ``jax``'s values and dtypes at calls 1 to 4."""
    jax = pytest.importorskip("jax")
    monkeypatch.setenv("S2S_SPECIALIZE", "sync")
    J = jax_twin(F)
    r = np.random.default_rng(3)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    w = r.normal(size=(3, 3)).astype(dtype)
    xs = r.choice([-1.0, 0.0, 1.0, 0.5], size=(6, 4, 3)).astype(dtype)
    ys = r.normal(size=(6, 4, 3)).astype(dtype)
    x = r.choice([-0.5, 0.5, 0.0, 1.0, -1.0], size=7).astype(dtype)
    t = r.normal(size=7).astype(dtype)
    x0 = r.choice([-1.0, 0.0, 1.0], size=(2, 3)).astype(dtype)
    per_example = s2s.vmap(s2s.grad(F.relu_loss), in_axes=(None, 0, 0))
    clip = s2s.grad(F.clip_loss)
    loop = s2s.grad(F.loop_relu, argnums=(0, 1))
    cases = [(lambda: per_example(w, xs, ys),
              jax.vmap(jax.grad(J.relu_loss), in_axes=(None, 0, 0))(w, xs, ys)),
             (lambda: s2s.jvp(clip, (x,), (t,)), jax.jvp(jax.grad(J.clip_loss), (x,), (t,))),
             (lambda: loop(w, x0), jax.grad(J.loop_relu, argnums=(0, 1))(w, x0))]
    for run, want in cases:
        for _ in range(4):
            for a, b in zip(leaves(run()), leaves(want)):
                assert a.dtype == b.dtype == dtype
                np.testing.assert_allclose(a, np.asarray(b), **tol)
