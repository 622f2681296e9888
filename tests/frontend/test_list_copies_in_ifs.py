"""``jacrev``/``hessian`` of a loop that copies the list it grows, pops the copy, and
reads the old list in an `if` after the pop (in an `if` in it, in a loop in it, in
the `else`), docs/python-subset.md, "Containers" (tests/frontend/
test_list_copies_jacrev.py has the reads outside an `if`).

Reverse mode adds such a read's cotangent at the copy, under the same test (before:
it started ``zeros_list(parts)`` at the read, which saved the list on the tape and
handed the loop a second cotangent list: the batched VJP's memory check refused it);
and vmap's join of a list one path of an `if` batched now stacks its items (it
broadcast the list as one array, its length the batch size: NumPy's broadcast error
in emitted code, or, where the lengths agree, wrong items).  Every expected value
from JAX on the same source, float64 and float32, the loop's count changing between
calls, the 1st, 3rd and 10th calls of one object checked."""

from __future__ import annotations

import functools

import list_copy_if_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    import jax.numpy as jnp

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2, 0.5, 0.8])
NAMES = ["pop_read_in_if", "pop_read_in_nested_if", "pop_read_in_loop_in_if",
         "pop_read_in_inner_loop", "pop_read_in_else"]
COUNTS = [5, 4, 3, 5, 4, 2, 5, 4, 3, 4]  # the loop's count at calls 1 to 10
CHECKED = (1, 3, 10)
# vmap(grad) with `x` batched: the `if x[i] > ...` test is batched, both branches run
# for every example, and the gradient's read of the old list under it is refused
# (pop_read_in_else: a write into a list item under a batched `if`, located;
# pop_read_in_nested_if: the read's cotangent bound on one path of the batched `if`,
# located at a line of the emitted gradient: not built); main refused all of them
BATCHED_TEST = ("pop_read_in_nested_if", "pop_read_in_else")


def close(got, expected, dtype):
    tol = dict(rtol=1e-9, atol=1e-11) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)
    assert np.shape(got) == np.shape(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    tol["atol"] *= max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), **tol)


def test_the_row_function_jacrev() -> None:
    """The "Not built yet" row's function: jacrev against central differences,
    float64, counts 5 then 4 (the sweep below: every function and transform against
    JAX)."""
    jr = s2s.jacrev(F.pop_read_in_if)
    for n in (5, 4):
        f, eps = functools.partial(F.pop_read_in_if, n=n), 1e-6
        fd = np.stack([(f(X + eps * e) - f(X - eps * e)) / (2 * eps) for e in np.eye(5)], -1)
        np.testing.assert_allclose(jr(X, n), fd, rtol=1e-6, atol=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_copies_read_in_ifs_against_jax(name, dtype) -> None:
    """jacrev (one object, ten calls; the caller writes NaN into each result
    checked), hessian, jacfwd and vmap(grad) at the 1st, 3rd and 10th calls,
    s2s.jit(jacrev) on both backends and grad at the first."""
    ours, theirs = getattr(F, name), getattr(J, name)
    jr = s2s.jacrev(ours)
    for call, n in enumerate(COUNTS, 1):
        x = (X * (1.0 + 0.37 * call) * (-1) ** call).astype(dtype)
        got = jr(x, n)
        if call not in CHECKED:
            continue
        p, q = functools.partial(ours, n=n), functools.partial(theirs, n=n)
        close(got, jax.jacrev(q)(x), dtype)
        got[...] = np.nan
        close(s2s.hessian(lambda y: np.sum(p(y) ** 2))(x),
              jax.hessian(lambda y: jnp.sum(q(y) ** 2))(x), dtype)
        close(s2s.jacfwd(p)(x), jax.jacfwd(q)(x), dtype)
        batch = np.stack([x, np.sin(x), -x])
        vg = s2s.vmap(s2s.grad(lambda y: np.sum(np.sin(p(y)) * y[0])))
        if name in BATCHED_TEST:
            with pytest.raises(s2s.TransformError):
                vg(batch)
        else:
            close(vg(batch), jax.vmap(jax.grad(lambda y: jnp.sum(jnp.sin(q(y)) * y[0])))(
                batch), dtype)
        if call == 1:
            close(s2s.jit(s2s.jacrev(p))(x), jax.jacrev(q)(x), dtype)
            jitted = s2s.jit(s2s.jacrev(p), backend="jax")
            if name in BATCHED_TEST:  # (an `if` on x's values: traced under jax.jit,
                from s2s.backends import TracedValueError  # as JAX's own jit refuses)

                with pytest.raises(TracedValueError):
                    jitted(x)
            else:
                close(jitted(x), jax.jacrev(q)(x), dtype)
            close(s2s.grad(lambda y: np.sum(np.sin(p(y)) * y[0]))(x),
                  jax.grad(lambda y: jnp.sum(jnp.sin(q(y)) * y[0]))(x), dtype)
