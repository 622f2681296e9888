"""A float32 program's specialized gradient computes in float32 where JAX does.

The specializer's rewrites may spell a value in another dtype than the generic code
does only as JAX computes it (``docs/optimizer-rules.md``, the rows *in the operands'
dtype*).  Each program here is specialized with float32 arguments, its specialized
code run instrumented (``specialize.probe_run``: the dtype of every subexpression),
and no array in it may be float64 (the programs make none themselves); its
gradients at the 1st, 2nd, 3rd and 10th call are ``jax.grad``'s, dtypes included,
in float32 and float64, with ties of ``np.maximum``/``np.minimum`` operands (where
the half share shows)."""

from __future__ import annotations

import ast

import float32_fns as F
import numpy as np
import pytest
from support import jax_twin, leaves

import s2s
from s2s import syntax
from s2s.optimize.specialize import probe_run

jax = pytest.importorskip("jax")


def _args(name: str, dtype) -> tuple:
    r = np.random.default_rng(7)
    if name == "mlp_relu":
        params = {"w1": r.normal(size=(6, 8)), "b1": r.normal(size=8) * 0.1,
                  "w2": r.normal(size=(8, 3)), "b2": np.zeros(3)}
        x = r.normal(size=(5, 6))
        x[0] = 0.0  # (a row of zeros: pre-activations equal to b1; b1[:2] zero: ties)
        params["b1"][:2] = 0.0
        args = (params, x, r.normal(size=(5, 3)))
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


ARGNUMS = {"mlp_relu": 0, "clipped_pair": (0, 1)}


# (the default tier: the dict-of-parameters relu in float32; -m slow: every case)
CASES = [pytest.param(name, dtype, marks=() if (name, dtype) == ("mlp_relu", np.float32)
                      else pytest.mark.slow)
         for name in sorted(ARGNUMS) for dtype in (np.float32, np.float64)]


@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", CASES)
def test_the_specialized_gradient_is_jaxs_in_its_dtype(name, dtype, monkeypatch) -> None:
    monkeypatch.setenv("S2S_SPECIALIZE", "sync")
    args = _args(name, dtype)
    want = jax.grad(getattr(jax_twin(F), name), argnums=ARGNUMS[name])(*args)
    g = s2s.grad(getattr(F, name), argnums=ARGNUMS[name])
    tol = dict(rtol=2e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    for call in range(10):
        got = g(*args)
        if call in (0, 1, 2, 9):
            for a, b in zip(leaves(got), leaves(want)):
                assert a.dtype == b.dtype == dtype, (call, a.dtype, b.dtype)
                np.testing.assert_allclose(a, np.asarray(b), **tol)
    if dtype == np.float32:
        assert _float64_arrays(g, args) == [], g.specialized_source
        assert "np.float32(0.5)" in g.specialized_source
