"""`with np.errstate(...)` and `with warnings.catch_warnings():` (issue 23): kept in the
emitted code around the body, and around the body's derivative code
(frontend/contexts.py).  Values against JAX on the same source (jax_twin) and a
Python loop (vmap), float64 and float32; that no warning escapes is checked with
warnings turned into errors; other contexts are refused, located."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import stmt_checks as C
import with_fns as F
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.5, 2.0, 0.1])
Z = np.array([0.0, -0.5, 2.0, 0.1])  # (a zero: division by zero, log of zero)
XS = np.stack([X, 0.5 * X, -X])
CASES = [("masked_log", ()), ("filtered", ()), ("in_a_loop", ()), ("nested", ()),
         ("nested", (10.0,)), ("caller", ())]
IDS = [f"{name}{rest}" for name, rest in CASES]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_grad_jvp_vjp_against_jax(name, rest, dtype) -> None:
    C.grads(F, J, name, np.abs(X) if name == "filtered" else X, rest, dtype)


@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_jacobians_against_jax(name, rest) -> None:
    C.jacobians(F, J, name, np.abs(X) if name == "filtered" else X, rest)


@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_vmap_against_a_python_loop(name, rest) -> None:
    C.vmapped(F, name, XS, rest, np.float64)


@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_jit_on_both_backends(name, rest) -> None:
    C.jitted(F, J, name, X, rest)


@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_no_warning_escapes_the_forward_or_the_derivative(name, rest) -> None:
    """at a zero (and a negative square root, an overflow) the user's function warns
    nothing; neither do its transforms: the backward and tangent code run in the
    context too."""
    x = Z * (300.0 if rest else 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(F, name)(x, *rest)  # (the user's function itself is silent)
        f = getattr(F, name)
        s2s.value_and_grad(f)(x, *rest)
        s2s.jvp(C.bind(f, rest), (x,), (np.ones_like(x),))
        s2s.vmap(s2s.grad(C.bind(f, rest)))(np.stack([x, x]))
        if name != "filtered":  # (its second derivative is infinite at 0, outside it)
            s2s.hessian(f)(x, *rest)


def test_the_context_reads_as_written() -> None:
    g = s2s.grad(F.masked_log)
    g(X)
    text = s2s.source(g)
    assert text.count('with errstate(divide="ignore", invalid="ignore"):') == 2
    assert "with_context" not in text and "else:" not in text
    g = s2s.grad(F.filtered)
    g(X)  # simplefilter first in the body: the context's own action (backward too)
    assert s2s.source(g).count(
        "with warnings.catch_warnings(action=\"ignore\", category=RuntimeWarning):") == 2


def test_values_changing_between_calls() -> None:
    g = s2s.grad(F.in_a_loop)
    for call in range(1, 11):
        x = np.roll(Z, call) * call
        C.close(g(x), jax.grad(J.in_a_loop)(x), np.float64, f"call {call}")
    for x in (X[:0], X[:1]):  # a loop running 0 and 1 times
        C.close(g(x), jax.grad(J.in_a_loop)(x), np.float64)


def test_errstate_raise_raises_as_in_numpy() -> None:
    """`errstate(divide="raise")` is kept too: NumPy raises FloatingPointError where
    the function divides by zero, and the transformed function raises it there."""
    with pytest.raises(FloatingPointError):
        F.raises_on_trouble(Z)
    with pytest.raises(FloatingPointError):
        s2s.grad(F.raises_on_trouble)(Z)
    C.close(s2s.grad(F.raises_on_trouble)(X), -1.0 / X**2, np.float64)
    assert np.geterr()["divide"] == "warn"  # (the context was left)


@pytest.mark.parametrize("name, line, says", [
    ("suppresses", 54, "a `with` over this context"),
    ("records", 60, "`with ... as name`"),
])
def test_other_contexts_are_refused_located(name, line, says) -> None:
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(getattr(F, name))(X)
    text = str(err.value)
    assert says in text and f"with_fns.py\", line {line}," in text, text
