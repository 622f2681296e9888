"""Lists grown in loops spliced together (docs/python-subset.md, "Containers"):
``a + b`` of two grown lists, ``[x, y] + parts``, ``parts += more``,
``parts.extend(more)`` and ``parts = parts + more`` by a grown list (by itself too),
in a loop and before one, and a spliced list grown again.

Every expected value comes from JAX on the same source (``jax_twin``: JAX runs Python
lists as Python does), in float64 and float32, or from a Python loop over the batch
(``vmap``); the loop counts (3, 0, 1) and the values change between calls."""

from __future__ import annotations

import functools
from functools import partial

import list_splice_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    import jax.numpy as jnp

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2])
DTYPES = [np.float64, np.float32]
NAMES = ["grown_plus_grown", "items_plus_grown", "extend_by_grown", "splice_in_loop",
         "extend_by_itself", "spliced_then_grown", "pairs_spliced", "prepend_then_grown",
         "prepend_in_loop", "splice_per_iteration", "nested_splice"]  # (the last three
# in loop bodies: more of them in test_list_splices_in_loops.py)
COUNTS = (3, 0, 1)  # the loops' count at calls 1 to 3 (0: they never run)
DEFAULT: set = set()  # (JAX's oracles cost ~2.5 s a case: the sweep is under -m slow)


close = partial(assert_close_to, f64=1e-8, f32=5e-4)


@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", [
    (n, d) if (n, d) in DEFAULT else pytest.param(n, d, marks=pytest.mark.slow)
    for n in NAMES for d in DTYPES])
def test_splices_against_jax(name, dtype) -> None:
    """grad, jvp, jacrev, vmap (against a Python loop), s2s.jit on both backends;
    jacfwd and hessian at the first call."""
    ours, theirs = getattr(F, name), getattr(J, name)
    for call, n in enumerate(COUNTS, 1):
        x = (X * call).astype(dtype)
        p, q = functools.partial(ours, n=n), functools.partial(theirs, n=n)
        out = p(x)
        close(out, q(x), dtype)
        close(s2s.grad(lambda y: np.sum(p(y) * np.cos(y)))(x),
              jax.grad(lambda y: jnp.sum(q(y) * jnp.cos(y)))(x), dtype)
        close(s2s.jvp(p, (x,), (np.sin(x),)), jax.jvp(q, (x,), (jnp.sin(x),)), dtype)
        if n:  # (jacrev of a loop that runs zero times: refused, as on main)
            close(s2s.jacrev(p)(x), jax.jacrev(q)(x), dtype)
        batch = np.stack([x, np.sin(x), -x])
        close(s2s.vmap(p)(batch), np.stack([p(row) for row in batch]), dtype)
        close(s2s.jit(p, backend="numpy")(x), q(x), dtype)
        if call == 1:  # (JAX compiles per count: once is enough for the splices)
            close(s2s.jacfwd(p)(x), jax.jacfwd(q)(x), dtype)
            close(s2s.hessian(lambda y: np.sum(p(y)))(x),
                  jax.hessian(lambda y: jnp.sum(q(y)))(x), dtype)
            close(s2s.jit(p, backend="jax")(x), q(x), dtype)
            close(s2s.jit(s2s.grad(lambda y: np.sum(p(y))), backend="jax")(x),
                  jax.grad(lambda y: jnp.sum(q(y)))(x), dtype)


@pytest.mark.parametrize("name", NAMES)
def test_every_splice_forward_and_vmap(name) -> None:
    """The default tier's sweep, cheap oracles: the value against the function run
    by Python, jvp's tangent against central differences, vmap against a Python loop,
    s2s.jit (NumPy) against Python; counts 3, 0, 1 in turn."""
    for call, n in enumerate(COUNTS, 1):
        x = X * call
        p = functools.partial(getattr(F, name), n=n)
        value, tangent = s2s.jvp(p, (x,), (np.sin(x),))
        step = 1e-6 * np.sin(x)
        np.testing.assert_allclose(value, p(x), rtol=1e-12)
        np.testing.assert_allclose(tangent, (p(x + step) - p(x - step)) / 2e-6, rtol=1e-6,
                                   atol=1e-8)
        batch = np.stack([x, np.sin(x), -x])
        np.testing.assert_allclose(s2s.vmap(p)(batch), np.stack([p(r) for r in batch]),
                                   rtol=1e-12)
        np.testing.assert_allclose(s2s.jit(p, backend="numpy")(x), p(x), rtol=1e-12)


def test_one_function_many_counts() -> None:
    """One transformed function called with counts 3, 0, 1, 4 in turn (the count an
    argument: the loops are not unrolled), against JAX's gradient."""
    g = s2s.grad(F.grown_plus_grown)
    for call, n in enumerate((3, 0, 1, 4), 1):
        x = X * call
        close(g(x, n), jax.grad(J.grown_plus_grown)(x, n), np.float64)


def test_the_lists_spliced_are_not_changed() -> None:
    """``c = a + b`` is a new list: ``a`` and ``b`` keep their items (the function
    returns their stacks beside the splice's), as Python's."""
    for n in (0, 2):
        f = functools.partial(F.splice_keeps_operands, n=n)
        close(s2s.jvp(f, (X,), (X,)), jax.jvp(functools.partial(J.splice_keeps_operands, n=n),
                                              (X,), (X,)), np.float64)


def test_a_loop_rebuilding_a_list_from_its_own_items() -> None:
    """``joined = [t]; for item in acc: joined.append(item); acc = joined`` in a loop
    of a constant count, by hand: main read ``len(acc)`` as the pre-loop literal's (one item: value and
    gradient silently wrong); against JAX."""
    for n in (0, 1, 3):
        x = X * (n + 1)
        close(s2s.value_and_grad(F.rebuilt_per_iteration)(x, n),
              jax.value_and_grad(J.rebuilt_per_iteration)(x, n), np.float64)
