"""Sets of constants and f-strings of constants (issue 23): Python values known when
transforming (frontend/literals.py).  Values against JAX on the same source
(jax_twin) and a Python loop (vmap), float64 and float32; the refusals located."""

from __future__ import annotations

import numpy as np
import pytest
import set_fstring_fns as F
import stmt_checks as C
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.5, 2.0])
XS = np.stack([X, 0.5 * X, -X])
PARAMS = {"W0": np.array([1.0, 2.0, 3.0]), "W1": np.array([0.5, -1.0, 0.25]),
          "W2": np.array([2.0, 0.0, -1.0])}
CASES = [("in_a_set", ()), ("in_a_set", ("sin",)), ("set_bound_to_a_name", ()),
         ("set_bound_to_a_name", ("cos",)), ("set_bound_to_a_name", ("tan",)),
         ("fstring_in_kept", ()), ("caller", ()), ("keyed_by_fstring", (PARAMS,)),
         ("fstring_of_a_constant", (PARAMS,))]
IDS = [f"{name}-{k}" for k, (name, _) in enumerate(CASES)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, rest", CASES + [("module_set", ())],
                         ids=IDS + ["module_set"])
def test_grad_jvp_vjp_against_jax(name, rest, dtype) -> None:
    C.grads(F, J, name, X, rest, dtype)


@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_jacobians_against_jax(name, rest) -> None:
    C.jacobians(F, J, name, X, rest)


@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_vmap_against_a_python_loop(name, rest) -> None:
    C.vmapped(F, name, XS, rest, np.float64)


@pytest.mark.parametrize("name, rest", [c for c in CASES if c[0] != "fstring_in_kept"],
                         ids=[i for i, c in zip(IDS, CASES) if c[0] != "fstring_in_kept"])
def test_jit_on_both_backends(name, rest) -> None:
    if any(isinstance(r, dict) for r in rest):
        pytest.skip("a dict argument is not a static argument of jax.jit")
    C.jitted(F, J, name, X, rest)


def test_the_fstring_in_a_kept_statement_prints_real_values(capsys) -> None:
    s2s.grad(F.fstring_in_kept)(X)
    assert capsys.readouterr().out.splitlines() == [f"y = {np.sum(X * X)}"]
    with pytest.raises(AssertionError, match="negative"):
        s2s.jit(F.fstring_in_kept)(X * np.nan)  # (nan >= 0 is False)


def test_a_module_constant_read_by_an_fstring_is_read_again() -> None:
    """the 1st, 3rd and 10th call with the module's prefix changed in between."""
    g = s2s.grad(F.fstring_of_a_constant)
    params = dict(PARAMS, V1=np.array([3.0, 3.0, 3.0]))
    try:
        for call in range(1, 11):
            F.CONFIG["prefix"] = J.CONFIG["prefix"] = "V" if call % 3 == 0 else "W"
            C.close(g(X, params), jax.grad(J.fstring_of_a_constant)(X, params),
                    np.float64, f"call {call}")
    finally:
        F.CONFIG["prefix"] = J.CONFIG["prefix"] = "W"


def test_a_set_decision_is_taken_again_when_the_module_changes() -> None:
    g = s2s.grad(F.module_set)
    try:
        for act in ("tanh", "relu", "sin", "tanh"):
            F.CONFIG["act"] = J.CONFIG["act"] = act
            C.close(g(X), jax.grad(J.module_set)(X), np.float64, act)
    finally:
        F.CONFIG["act"] = J.CONFIG["act"] = "tanh"


@pytest.mark.parametrize("name, line, says", [
    ("set_of_values", 60, "a set of values known only when the function runs"),
    ("fstring_of_a_value", 65, "an f-string of values known only when the function runs"),
])
def test_refusals_are_located(name, line, says) -> None:
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(getattr(F, name))(X)
    text = str(err.value)
    assert says in text and f"set_fstring_fns.py\", line {line}," in text, text
