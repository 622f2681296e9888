"""Objects of a plain class of your own built inside the function (issue 23): a class
whose `__init__` only stores its parameters is built as the dict of those attributes
(api/records.py `plain_class`), read by attribute, passed to a helper (which gets the
object made again), and given back as the object.  Values against JAX on the same
source (jax_twin: Python objects while tracing) and a Python loop, float64/float32.
Classes whose constructor computes, and methods: tests/frontend/test_built_objects.py."""

from __future__ import annotations

import numpy as np
import plain_object_fns as F
import pytest
import stmt_checks as C
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.5, 2.0])
XS = np.stack([X, 0.5 * X, -X])
CASES = ["builds_and_reads", "in_a_loop", "passes_to_a_helper"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", CASES)
def test_grad_jvp_vjp_against_jax(name, dtype) -> None:
    C.grads(F, J, name, X, (), dtype)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n != "in_a_loop"
                                  else n for n in CASES])
def test_jacobians_vmap_jit(name) -> None:
    C.jacobians(F, J, name, X, ())
    C.vmapped(F, name, XS, (), np.float64)
    C.jitted(F, J, name, X, ())


def test_an_object_given_back_is_the_class() -> None:
    """vmap, jit and jvp give back a `Layer` (JAX refuses a non-pytree output)."""
    for got, want in ((s2s.vmap(F.returns_one)(XS), None),
                      (s2s.jit(F.returns_one)(X), F.returns_one(X))):
        assert type(got) is F.Layer
        if want is None:
            want_w = np.stack([F.returns_one(x).weight for x in XS])
            want_b = np.stack([F.returns_one(x).b for x in XS])
        else:
            want_w, want_b = want.weight, want.b
        np.testing.assert_allclose(got.weight, want_w)
        np.testing.assert_allclose(got.b, want_b)
    out, tangent = s2s.jvp(F.returns_one, (X,), (np.ones(3),))
    assert type(out) is F.Layer and type(tangent) is F.Layer
    np.testing.assert_allclose(tangent.b, np.cos(X))
    np.testing.assert_allclose(tangent.weight, 2.0 * np.ones(3))


def test_values_changing_between_calls() -> None:
    g = s2s.grad(F.in_a_loop)
    for call in range(1, 11):
        x = X * call
        C.close(g(x), jax.grad(J.in_a_loop)(x), np.float64, f"call {call}")


def test_classes_that_compute_or_have_methods_now_build() -> None:
    """Once refused (a constructor that computes, a method called on the object
    built): built as the record of their fields (tests/frontend/test_built_objects.py)."""
    for name in ("computes", "calls_a_method"):
        C.grads(F, J, name, X, (), np.float64)
        C.vmapped(F, name, XS, (), np.float64)
