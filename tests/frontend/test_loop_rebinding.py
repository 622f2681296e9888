"""A function name bound more than once in a loop body, in a branch of it, or in a
body with `break`/`continue`, read before its binding (the previous iteration's
function) or after the loop (the last binding that ran) (issue 23; refused before,
frontend/loop_functions.py's `_prepare_sites`): one flag per binding, carried through
the loop, chooses the function.

Against JAX on the same source (jax_twin: JAX runs the Python loop), float64 and
float32, every transform, with trip counts 0, 1, 3, 5 changing between calls."""

from __future__ import annotations

import loop_rebinding_fns as F
import numpy as np
import pytest
import stmt_checks as C
from support import HAVE_JAX, compiled, jax_twin

import s2s
from s2s.errors import UnboundFunctionError

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.5, 2.0, 0.1])
NAMES = ["twice_after", "branch_after", "value_branch", "two_defs", "with_break",
         "with_continue", "in_while", "nothing_before", "caller"]
RAN_NONE = {"twice_after", "nothing_before", "caller"}  # (n=0: f never bound)
CASES = [(name, n) for name in NAMES for n in (0, 1, 3, 5)
         if not (n == 0 and name in RAN_NONE) and not (name == "caller" and n == 5)]
IDS = [f"{name}-{n}" for name, n in CASES]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, n", CASES, ids=IDS)
def test_grads_against_jax(name, n, dtype) -> None:
    C.grads(F, J, name, X, (n,), dtype)


def _pair(transform, f, jf):
    if transform == "vmap_grad":
        return s2s.vmap(s2s.grad(f)), jax.vmap(jax.grad(jf))
    if transform == "jvp_grad":
        t = np.linspace(-1.0, 0.7, X.size)
        return (lambda x: s2s.jvp(s2s.grad(f), (x,), (t.astype(x.dtype),))[1],
                lambda x: jax.jvp(jax.grad(jf), (x,), (t.astype(x.dtype),))[1])
    return getattr(s2s, transform)(f), getattr(jax, transform)(jf)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transform", [
    "jacfwd", "jacrev", pytest.param("hessian", marks=pytest.mark.slow), "vmap",
    "vmap_grad", "jvp_grad"])  # (hessian in the default tier: test_hessian_of_a_branch)
@pytest.mark.slow
@pytest.mark.parametrize("name, n", CASES, ids=IDS)
def test_transforms_against_jax(name, n, transform, dtype) -> None:
    """vmap against a Python loop of JAX's per-example results (the `if`s on values
    are Python `if`s, which jax.vmap refuses)."""
    if n == 0 and name in ("value_branch", "two_defs") and transform != "jvp_grad":
        pytest.skip("a loop that runs no iteration never calls the body's function "
                    "the probe needs: test_unprobed_function_is_refused_at_the_users_line")
    f, jf = C.bind(getattr(F, name), (n,)), C.bind(getattr(J, name), (n,))
    x = C.cast(X, dtype)
    got_fn, want_fn = _pair(transform, f, jf)
    if transform.startswith("vmap"):
        xs = np.stack([x, -x, 2.0 * x])
        inner = jax.grad(jf) if transform == "vmap_grad" else jf
        want = np.stack([inner(row) for row in xs])
        C.close(got_fn(xs), want, dtype, transform)
        return
    C.close(got_fn(x), compiled(want_fn)(x), dtype, transform)


@pytest.mark.slow
def test_hessian_of_a_branch() -> None:
    """The hessian (forward mode over the gradient's flags and choices), a fixed case
    of the sweep above (whose hessians run under `-m slow`)."""
    f, jf = C.bind(F.branch_after, (3,)), C.bind(J.branch_after, (3,))
    C.close(s2s.hessian(f)(X), compiled(jax.hessian(jf))(X), np.float64, "hessian")


def test_counts_changing_between_calls() -> None:
    """One transform object per function, its trip count changing (the 1st, 3rd and
    10th calls), against JAX; and s2s.jit (NumPy backend) of the gradient."""
    counts = [3, 1, 5, 0, 2, 4, 1, 3, 6, 2]
    for name in ("value_branch", "with_break", "in_while"):
        g, jg = s2s.grad(getattr(F, name)), s2s.jit(s2s.grad(getattr(F, name)))
        for call, n in enumerate(counts, 1):
            x = X * (1.0 + 0.05 * call)
            want = jax.grad(getattr(J, name))(x, n)
            C.close(g(x, n), want, np.float64, f"{name}, call {call}")
            C.close(jg(x, n), want, np.float64, f"{name}, jit, call {call}")


@pytest.mark.slow
def test_jit_on_the_jax_backend_with_a_static_count() -> None:
    """On the JAX backend, the count static: the function (its Python loop traced)
    and its gradient (the flags carried through the lowered loop, the choice a
    lax.cond).  (A name with no function before the loop is not here: the gradient
    checks that a binding ran, a raise on a flag the lowered loop traces, refused as
    a TracedValueError: docs/python-subset.md.)"""
    for name in ("branch_after", "with_break", "with_continue"):
        f = s2s.jit(getattr(F, name), backend="jax", static_argnums=(1,))
        g = s2s.jit(s2s.grad(getattr(F, name)), backend="jax", static_argnums=(1,))
        for n in (1, 3):
            C.close(f(X, n), getattr(J, name)(X, n), np.float64, name)
            C.close(g(X, n), jax.grad(getattr(J, name))(X, n), np.float64, name)


@pytest.mark.parametrize("name", ["twice_after", "nothing_before"])
def test_no_binding_ran_is_pythons_error_at_the_users_line(name) -> None:
    """A loop that ran no iteration leaves the name unbound: Python's
    UnboundLocalError (s2s.errors.UnboundFunctionError), at the user's read."""
    for run in (lambda: s2s.grad(getattr(F, name))(X, 0),
                lambda: s2s.jvp(C.bind(getattr(F, name), (0,)), (X,), (X,))):
        with pytest.raises(UnboundLocalError) as err:
            run()
        e = err.value
        assert isinstance(e, UnboundFunctionError), repr(e)
        assert e.loc.file == F.__file__ and "return np.sum(f(y)" in e.loc.text, str(e)
    C.close(s2s.grad(getattr(F, name))(X, 2), jax.grad(getattr(J, name))(X, 2),
            np.float64, "then a count that binds it")


def test_a_function_the_probe_never_called_is_batched() -> None:
    """vmap's probe runs the first example; a loop that runs no iteration never calls
    the body's function (a lambda reading the body's values), which vmap needs to
    batch the call after the loop.  Refused until the probe ran again with counts
    made longer (break9); against the function run per example."""
    batch = np.stack([X, -X, 0.5 * X])
    np.testing.assert_allclose(s2s.vmap(C.bind(F.value_branch, (0,)))(batch),
                               [C.bind(F.value_branch, (0,))(x) for x in batch], rtol=1e-12)
    C.close(s2s.grad(F.value_branch)(X, 0), jax.grad(J.value_branch)(X, 0), np.float64,
            "grad")


def test_a_binding_in_a_nested_loop_is_refused_at_its_line() -> None:
    """A binding inside a nested loop (one flag per binding site would need the inner
    loop's own flags): refused where it binds, located."""
    with pytest.raises(s2s.TransformError) as err:
        s2s.grad(F.bound_in_a_nested_loop)(X, 3)
    e = err.value
    assert e.loc.file == F.__file__ and "f = np.cos" in e.loc.text, str(e)
    assert "nested loop" in str(e) and "<s2s" not in str(e), str(e)
