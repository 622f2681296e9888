"""`del name` (issue 23): the binding is dropped (frontend/deletes.py); a later read is
refused where Python raises UnboundLocalError, located at the read.  Values against
JAX on the same source (jax_twin) and a Python loop (vmap), float64 and float32."""

from __future__ import annotations

import del_fns as F
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
XS = np.stack([X, 0.5 * X, -X])
CASES = [("drops_a_temporary", ()), ("drops_several", ()), ("drops_a_parameter", ()),
         ("drops_on_one_path", (True,)), ("drops_on_one_path", (False,)),
         ("drops_in_a_loop", ()), ("caller", ())]
IDS = [f"{name}{rest}" for name, rest in CASES]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_grad_jvp_vjp_against_jax(name, rest, dtype) -> None:
    C.grads(F, J, name, X, rest, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_jacobians_against_jax(name, rest) -> None:
    C.jacobians(F, J, name, X, rest)


@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_vmap_against_a_python_loop(name, rest) -> None:
    C.vmapped(F, name, XS, rest, np.float64)


@pytest.mark.parametrize("name, rest", CASES, ids=IDS)
def test_jit_on_both_backends(name, rest) -> None:
    C.jitted(F, J, name, X, rest)


def test_adversarial_inputs() -> None:
    """a loop running 0 and 1 times, NaN, values changing between calls."""
    g = s2s.grad(F.drops_in_a_loop)
    for x in (X[:0], X[:1], np.array([np.nan, 1.0])):
        want = jax.grad(J.drops_in_a_loop)(x)
        np.testing.assert_allclose(g(x), want)
    g = s2s.grad(F.drops_a_temporary)
    for call in range(1, 11):
        x = X * call
        C.close(g(x), jax.grad(J.drops_a_temporary)(x), np.float64, f"call {call}")


@pytest.mark.parametrize("name, line, says", [
    ("reads_after_del", 57, "`t` is read after `del t` (line 56)"),
    ("reads_after_del_on_a_path", 64, "`t` is read after `del t` (line 63)"),
    ("deletes_an_item", 69, "`del` of an item changes a container"),
    ("deletes_in_a_loop", 76, "`del t` in a loop deletes a name bound before the loop"),
    ("deletes_twice", 83, "`t` is not bound here"),
])
def test_refusals_are_located(name, line, says) -> None:
    args = (X, True) if "path" in name else (X,)
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(getattr(F, name))(*args)
    text = str(err.value)
    assert says in text and f"del_fns.py\", line {line}," in text, text
    assert "<s2s" not in text


def test_python_raises_there_too() -> None:
    """the refusals match what Python does when it runs the function."""
    for name in ("reads_after_del", "deletes_twice"):
        with pytest.raises(UnboundLocalError):
            getattr(F, name)(X)
