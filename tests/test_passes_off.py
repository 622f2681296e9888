"""``S2S_PASSES_OFF``: the specializer's passes switched off one at a time (the
benchmark's ablation, tools/bench_ablate.py, measures what each buys with it).

With any pass off, the specialized code must give JAX's values (``jax.grad`` /
``jax.jvp(jax.grad)`` of the same source, tests/passes_off_fns.py), at the 1st, 2nd
(specializing) and 3rd call; and the switch must be real: for every pass, some program's
specialized code differs with it off, and with ``all`` off every program's does."""

from __future__ import annotations

import functools

import numpy as np
import passes_off_fns as F
import pytest
from support import jax_twin

import s2s
from s2s.api.transformed import JVPS
from s2s.optimize.specialize import PASSES

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
J = jax_twin(F)

R = np.random.default_rng(7)
ARGS = {
    "softmax_xent": (R.normal(size=7), 3),
    "mlp": (R.normal(size=(4, 3)), R.normal(size=(5, 4)), R.normal(size=(5, 3))),
    "loop": (R.uniform(-0.9, 0.9, size=6),),
    "repeated": (R.normal(size=5), R.normal(size=5)),
    "tanh_sq": (R.normal(size=6), R.normal(size=6)),  # a Hessian-vector product
    # (arrays of 1 KiB and more: the buffers pass writes into intermediates)
    "tanh_sq_wide": (R.normal(size=200), R.normal(size=200)),
    "rows": (R.normal(size=(4, 3)), np.eye(3)[[0, 2, 1, 1]]),
    "relu": (np.array([[1.0, -1.0], [0.0, 2.0]]), np.array([[1.0, 0.5], [-2.0, 1.0]])),  # (a tie: 0)
    "gp": (np.float64(0.8), np.sort(R.uniform(0, 3, 6)), R.normal(size=6)),
}
# a program on which each pass changes the code (checked below); by default four cases
# run (JAX's eager gradients cost a second a program), every pass on every program
# with -m slow
WHERE = {"fixups": "mlp", "fill": "loop", "shapes": "rows", "matmul": "mlp",
         "addat": "softmax_xent", "cse": "repeated", "egraph": "rows", "zero": "rows",
         "tapes": "loop", "dce": "mlp", "accumulate": "softmax_xent", "methods": "rows",
         "signs": "softmax_xent", "copies": "repeated", "subexpr": "tanh_sq", "ties": "relu",
         "literals": "tanh_sq", "solves": "gp", "products": "rows", "buffers": "tanh_sq_wide",
         "all": "mlp"}


def _run(name: str) -> tuple[list, str]:
    """Three calls of the program's transform: their values, and the specialized code."""
    args = ARGS[name]
    if name.startswith("tanh_sq"):
        g = s2s.grad(F.tanh_sq)
        out = [s2s.jvp(g, (args[0],), (args[1],)) for _ in range(3)]
        return out, JVPS[g][False].specialized_source
    g = s2s.grad(getattr(F, name))
    out = [g(*args) for _ in range(3)]
    return out, g.specialized_source


@functools.cache
def _all_on(name: str) -> str:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("S2S_PASSES_OFF", "")
        return _run(name)[1]


@functools.cache
def _expected(name: str):
    args = ARGS[name]
    if name.startswith("tanh_sq"):
        return jax.jvp(jax.grad(J.tanh_sq), (args[0],), (args[1],))
    return jax.grad(getattr(J, name))(*args)


def _same(got, want) -> None:
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-10, atol=1e-12)


DEFAULT = {("matmul", "mlp"), ("all", "mlp"), ("subexpr", "tanh_sq"), ("copies", "tanh_sq"),
           ("ties", "relu"), ("literals", "tanh_sq"), ("products", "rows"),
           ("buffers", "tanh_sq_wide")}
CASES = [pytest.param(p, n, marks=() if (p, n) in DEFAULT else pytest.mark.slow,
                      id=f"{p}-{n}") for p in (*PASSES, "all") for n in ARGS]


@pytest.mark.slow
@pytest.mark.every_case  # (sampled here: each pass on its program by default)
@pytest.mark.parametrize("off,name", CASES)
def test_a_pass_switched_off_keeps_the_values_and_changes_the_code(off, name,
                                                                    monkeypatch) -> None:
    all_on = _all_on(name)
    monkeypatch.setenv("S2S_PASSES_OFF", off)
    results, text = _run(name)
    assert text is not None, "specialized with the pass off"
    want = _expected(name)
    for got in results:  # the emitted code, the specializing call, the specialized code
        _same(got, want)
    if WHERE[off] == name or off == "all":
        assert text != all_on, f"switching {off} off changed nothing on {name}"


def test_every_pass_has_a_program_it_changes() -> None:
    assert set(WHERE) == {*PASSES, "all"}


def test_an_unknown_pass_name_is_warned_about_and_ignored(monkeypatch) -> None:
    monkeypatch.setenv("S2S_PASSES_OFF", "fixups,no_such_pass")
    from s2s.optimize.specialize import passes_off

    with pytest.warns(UserWarning, match="no pass named no_such_pass"):
        assert passes_off() == {"fixups"}
    monkeypatch.setenv("S2S_PASSES_OFF", "all")
    assert passes_off() == set(PASSES)
