"""`for ... else` and `while ... else` (issue 23): desugared to a flag and an `if`
(frontend/loop_else.py), checked against JAX on the same source (jax_twin: its grad
and jvp run Python control flow on concrete values) and a Python loop (vmap), in
float64 and float32."""

from __future__ import annotations

import loop_else_fns as F
import numpy as np
import pytest
import stmt_checks as C
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.5, 2.0, 0.1])
XS = np.stack([X, 0.5 * X, -X, np.array([5.0, 0.2, 0.1, 0.0])])
CASES = [("search", ()), ("no_break", ()), ("countdown", (5,)), ("countdown", (0,)),
         ("nested", ()), ("returns_in_both", ()), ("static_break", (0,)),
         ("static_break", (2,)), ("static_break", (9,)), ("caller", ())]
IDS = [f"{name}{rest}" for name, rest in CASES]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_grad_jvp_vjp_against_jax(name, rest, dtype) -> None:
    for x in (X, XS[2], XS[3]):  # the break taken at the 3rd row, never, at the 1st
        C.grads(F, J, name, x, rest, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("name, rest", [c for c in CASES if c[0] != "caller"],
                         ids=[i for i, c in zip(IDS, CASES) if c[0] != "caller"])
def test_jacobians_against_jax(name, rest) -> None:
    C.jacobians(F, J, name, X, rest)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_vmap_against_a_python_loop(name, rest, dtype) -> None:
    """each example leaves the loop at its own row (the `if` on a batched value)."""
    f = getattr(F, name)
    xs = C.cast(XS, dtype)
    got = s2s.vmap(f, in_axes=(0,) + (None,) * len(rest))(xs, *rest)
    C.close(got, np.stack([f(x, *rest) for x in xs]), dtype)


@pytest.mark.parametrize("name, rest", [("no_break", ()), ("nested", ()),
                                        ("static_break", (2,))])
def test_vmap_of_grad(name, rest) -> None:
    C.vmapped(F, name, XS, rest, np.float64)


@pytest.mark.parametrize("k", [pytest.param(0, marks=pytest.mark.slow), 2,
                               pytest.param(9, marks=pytest.mark.slow)])
def test_jit_on_both_backends(k) -> None:
    """a static break under s2s.jit (NumPy and JAX backends); a break on a value runs
    on the NumPy backend (the JAX backend refuses a Python `if` on a traced value)."""
    C.jitted(F, J, "static_break", X, (k,))
    C.jitted(F, J, "no_break", X, ())
    for name in ("search", "nested", "caller"):
        f = getattr(F, name)
        C.close(s2s.jit(f)(X), f(X), np.float64)
        C.close(s2s.jit(s2s.grad(f))(X), jax.grad(getattr(J, name))(X), np.float64)


def test_loops_running_zero_and_one_time() -> None:
    g = s2s.grad(F.search)
    for x in (X[:0], X[:1], X[2:3]):  # no row: the `else` runs; one row: both ways
        C.close(F.search(x), J.search(x), np.float64)
        C.close(g(x), jax.grad(J.search)(x) if x.size else np.zeros(0), np.float64)
    for n in (0, 1):
        C.close(s2s.grad(F.countdown)(X, n), jax.grad(J.countdown)(X, n), np.float64)


def test_values_changing_between_calls() -> None:
    """the 1st, 3rd and 10th call leave the loop at different rows (the later calls
    run the specialized code), and the caller writing into a result changes nothing."""
    g = s2s.grad(F.search)
    for call in range(1, 11):
        x = np.roll(X, call) * (1.0 + 0.1 * call)
        got = g(x)
        C.close(got, jax.grad(J.search)(x), np.float64, f"call {call}")
        got[:] = np.nan  # (the caller writing into its result)


def test_nan_takes_the_path_python_takes() -> None:
    """`nan > limit` is False: no break, as in Python and JAX."""
    x = np.array([0.3, np.nan, 0.1])
    C.close(s2s.grad(F.search)(x), jax.grad(J.search)(x), np.float64)
    assert np.isnan(F.search(x)) and np.isnan(s2s.value_and_grad(F.search)(x)[0])


def test_emitted_code_reads_as_written_by_hand() -> None:
    g = s2s.grad(F.search)
    g(X)
    text = s2s.source(g)
    assert "broke = False" in text and "not_broke = not broke" in text
    g = s2s.grad(F.no_break)
    g(X)
    assert "broke" not in s2s.source(g)  # no break: the `else` simply follows the loop
