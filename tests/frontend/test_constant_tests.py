"""An ``if`` on a literal (``if True:``, ``elif 0:``, ``a if not False else b``) is
decided when s2s transforms the function, so the emitted code has no dead branch;
an ``if`` on a module constant (``if ON:``) stays an ``if`` read at each call, and
second derivatives follow the names it binds on one path (the Hessian of such a
function failed with "may be used before it is assigned" inside emitted code).
Expected values from JAX on the same source, float64 and float32, with the module
constant flipped between calls."""

from __future__ import annotations

from functools import partial

import constant_test_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

NAMES = ["if_true", "if_false_else", "literal_choice", "if_module_constant",
         "if_module_constant_else"]
X = np.array([0.3, -0.7, 1.2])
BATCH = np.array([[0.3, -0.7, 1.2], [0.1, 0.4, -0.9]])


close = partial(assert_close_to, f64=1e-9, f32=2e-4, check_dtype=False)


@pytest.mark.parametrize("dtype", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)],
                         ids=["f64", "f32"])
@pytest.mark.parametrize("name", NAMES)
def test_second_derivatives(name, dtype) -> None:
    x = X.astype(dtype)
    ours, theirs = getattr(F, name), getattr(J, name)
    close(s2s.grad(ours)(x), compiled(jax.grad(theirs))(x), dtype)
    close(s2s.hessian(ours)(x), compiled(jax.hessian(theirs))(x), dtype)
    close(s2s.jvp(s2s.grad(ours), (x,), (x,)), jax.jvp(jax.grad(theirs), (x,), (x,)), dtype)
    close(s2s.vmap(s2s.grad(ours))(BATCH.astype(dtype)),
          compiled(jax.vmap(jax.grad(theirs)))(BATCH.astype(dtype)), dtype)


def test_literal_tests_leave_no_dead_branch() -> None:
    for name in ("if_true", "if_false_else", "literal_choice"):
        grad = s2s.grad(getattr(F, name))
        grad(X)
        code = [line for line in s2s.source(grad).splitlines()
                if not line.strip().startswith("#")]
        assert not any(line.strip().startswith("if ") or " if " in line for line in code), code
    grad = s2s.grad(F.if_module_constant)
    grad(X)
    assert "if ON:" in s2s.source(grad)  # (read at each call)


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param("if_module_constant", marks=pytest.mark.slow),
                                  "if_module_constant_else"])
def test_module_constants_changed_between_calls(name) -> None:
    """``ON`` flipped and ``SCALE`` changed between calls 1..10: every transform reads
    them again, also the code s2s transforms a second time (jacfwd is the vmap of the
    emitted JVP, hessian the jacfwd of the emitted gradient), which held the values of
    its first call before (a silently wrong jacfwd/jacrev/Hessian)."""
    ours, theirs = getattr(F, name), getattr(J, name)
    made = {mode: getattr(s2s, mode)(ours) for mode in ("grad", "jacfwd", "jacrev",
                                                        "hessian")}
    vmapped = s2s.vmap(s2s.grad(ours))
    try:
        for call in range(10):
            F.ON = J.ON = call % 3 != 1
            F.SCALE = J.SCALE = 2.0 + (call % 4)
            x = X * (1.0 + 0.1 * call)
            for mode, ours_t in made.items():
                close(ours_t(x), getattr(jax, mode)(theirs)(x), np.float64)
            close(s2s.jvp(made["grad"], (x,), (X,)), jax.jvp(jax.grad(theirs), (x,), (X,)),
                  np.float64)
            close(vmapped(BATCH * x), jax.vmap(jax.grad(theirs))(BATCH * x), np.float64)
    finally:
        F.ON = J.ON = True
        F.SCALE = J.SCALE = 2.0
