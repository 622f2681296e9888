"""Issue 23: a join carried through a loop by a tuple swap (swap_joins_fns.py):
probe 13's leapfrog wave step ``u_prev, u = u, 2 * u - u_prev + c2 * lap`` with
``lap = np.concatenate([edge, ..., edge])`` (its ``steps`` and ``c2`` passed by position
and keyword, 0 and 1 steps too), edges made from the values, the step in a callee, and
a three-way rotation.  vmap of grad and hessian of these were refused ("`split_like`
of a list the function did not build") until lists18.

The sweep (``-m slow``) runs each through newcomer_harness.classify (grad at calls 1, 3
and 10 with changing values, value_and_grad, jvp, vmap of grad, hessian, jit of grad on
both backends, special inputs, the caller writing into every result) in float64 and
float32 against JAX on the same source.  The default tier checks grad and vmap of grad
against central differences (vmap of grad once)."""

from __future__ import annotations

import newcomer_harness as H  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
import swap_joins_fns as F
from support import HAVE_JAX

import s2s

X6 = np.linspace(-1.0, 1.0, 6) + 0.1
CASES = {name: ((X6,), {"zeros": np.zeros(6)}) for name in (
    "wave_swap_steps", "wave_value_edges", "wave_step_in_callee", "three_way_rotation")}
PROBE = H.Probe(F, CASES, H.CONSTRUCT_STAGES, tol64=(1e-6, 1e-8), warm=("g", "jit"))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_every_transform_against_jax(name, dtype) -> None:
    label, verdicts = H.classify(PROBE, name, H.twin(F), dtype)
    assert label == "ok", verdicts


@pytest.mark.parametrize("name", ["wave_value_edges", "three_way_rotation"])
def test_grad_and_vmap_of_grad_against_central_differences(name) -> None:
    f = getattr(F, name)
    g, vg = s2s.grad(f), s2s.vmap(s2s.grad(f))
    for c in (1, 3, 10):
        x = X6 * (1.0 + 0.07 * (c - 1) * (-1) ** c)
        np.testing.assert_allclose(g(x), H.fd_grad(f, (x,), 1e-6), rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name} call {c}")
    rows = vg(np.stack([x, -0.5 * x]))  # (vmap of grad once: its code costs seconds)
    np.testing.assert_allclose(rows[1], H.fd_grad(f, (-0.5 * x,), 1e-6), rtol=1e-6,
                               atol=1e-8, err_msg=f"{name} vmap")


def test_steps_and_c2_by_position_and_keyword() -> None:
    f = F.wave_swap_steps
    g = s2s.grad(f)
    for steps, c2 in ((3, 0.1), (0, 0.3), (7, 0.4), (1, 0.3)):
        want = H.fd_grad(lambda u: f(u, c2, steps), (X6,), 1e-6)
        np.testing.assert_allclose(g(X6, c2, steps), want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(g(X6, steps=steps, c2=c2), want, rtol=1e-6, atol=1e-8)
