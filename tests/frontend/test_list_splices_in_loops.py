"""New lists spliced inside loop bodies from lists grown in loops
(docs/python-subset.md, "Containers"): ``acc = [t] + acc``, ``acc = acc + [t, 2 * t]``,
``c = a + b`` and ``c = a + [v, w]`` at each iteration, a list grown in an inner loop
spliced in the outer one (``acc = acc + row``, ``acc = row + acc``), the same copies
written by hand (``c = []`` or ``c = list(pair)``, then ``for v in b: c.append(v)``),
lists of pairs, a spliced list grown again, and a tape of such lists.

Every expected value comes from JAX on the same source (``jax_twin``: JAX runs Python
lists as Python does), in float64 and float32, from central differences, or from a
Python loop over the batch (``vmap``); the loop counts (3, 0, 1) and the values change
between calls."""

from __future__ import annotations

import functools
from functools import partial

import list_splice_loop_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, central_grad, jax_twin

import s2s

if HAVE_JAX:
    import jax
    import jax.numpy as jnp

    J = jax_twin(F)

needs_jax = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

X = np.array([0.3, -0.7, 1.2, 0.5, 0.9])
DTYPES = [np.float64, np.float32]
NAMES = ["prepend", "append_pair", "splice_per_iteration", "copy_by_hand",
         "copy_literal_loop", "copy_plus_items", "inner_appended", "inner_prepended",
         "pairs_per_iteration", "spliced_then_grown", "tape_of_lists"]
COUNTS = (3, 0, 1)  # the loops' count at calls 1 to 3 (0: they never run)
# vmap's probe infers the rank of the values of a loop the first example never ran
# from the lists' items; for a tape of lists (a list popped back as the function's own
# tape) it cannot, and refuses at the user's line (as an empty tape of arrays is)
NO_VMAP_AT_ZERO = {"tape_of_lists"}


close = partial(assert_close_to, f64=1e-8, f32=5e-4)


def weights(out):
    """A cotangent of ``out``'s shape whose values do not depend on ``out``'s."""
    return np.cos(np.arange(np.size(out)) + 0.5).reshape(np.shape(out)).astype(
        np.asarray(out).dtype)


def test_the_issues_example() -> None:
    """The example of the docs' row, in the default tier: its gradient (reverse mode,
    where main read the last iteration's list) at the 1st, 3rd and 10th call of one
    transformed function, against central differences."""
    g = s2s.value_and_grad(F.issue_example)
    for call in range(1, 11):
        x = X * (1 + call / 5) * (-1) ** call
        value, grad = g(x)
        if call in (1, 3, 10):
            np.testing.assert_allclose(value, F.issue_example(x), rtol=1e-12)
            np.testing.assert_allclose(grad, central_grad(F.issue_example, x), rtol=1e-6,
                                       atol=1e-8)


@needs_jax
@pytest.mark.slow
@pytest.mark.every_case
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_issues_example_against_jax(dtype) -> None:
    """The example of the docs' row: ``acc = [t] + acc`` in a loop, summed by a
    generator; grad, value_and_grad, jvp, vjp, jacrev, vmap and s2s.jit (NumPy)."""
    for call in (1, 3, 10):
        x = (X * call / 3).astype(dtype)
        close(F.issue_example(x), J.issue_example(x), dtype)
        close(s2s.grad(F.issue_example)(x), jax.grad(J.issue_example)(x), dtype)
        close(s2s.value_and_grad(F.issue_example)(x),
              jax.value_and_grad(J.issue_example)(x), dtype)
        close(s2s.jvp(F.issue_example, (x,), (np.sin(x),)),
              jax.jvp(J.issue_example, (x,), (jnp.sin(x),)), dtype)
        close(s2s.vjp(F.issue_example, x)[1](dtype(0.7)),
              jax.vjp(J.issue_example, x)[1](jnp.asarray(0.7, dtype)), dtype)
        batch = np.stack([x, np.sin(x), -x])
        close(s2s.vmap(F.issue_example)(batch),
              np.stack([F.issue_example(r) for r in batch]), dtype)
        close(s2s.jit(F.issue_example, backend="numpy")(x), J.issue_example(x), dtype)
    close(s2s.jacrev(F.issue_example)(x), jax.jacrev(J.issue_example)(x), dtype)


@needs_jax
@pytest.mark.every_case
@pytest.mark.parametrize("name, dtype", [
    pytest.param(n, d, marks=pytest.mark.slow) for n in NAMES for d in DTYPES])
def test_splices_in_loops_against_jax(name, dtype) -> None:
    """grad, value_and_grad, jvp, vjp, jacrev, vmap (against a Python loop), s2s.jit
    (NumPy) at counts 3, 0, 1; jacfwd, hessian and s2s.jit on JAX (of the function and
    of its grad) at the first call."""
    ours, theirs = getattr(F, name), getattr(J, name)
    for call, n in enumerate(COUNTS, 1):
        x = (X * call).astype(dtype)
        p, q = functools.partial(ours, n=n), functools.partial(theirs, n=n)

        def loss(y):
            return np.sum(p(y) * np.cos(y))

        def jloss(y):
            return jnp.sum(q(y) * jnp.cos(y))

        def total(y):
            return np.sum(p(y))

        def jtotal(y):
            return jnp.sum(q(y))

        out = p(x)
        close(out, q(x), dtype)
        close(s2s.grad(loss)(x), jax.grad(jloss)(x), dtype)
        close(s2s.value_and_grad(loss)(x), jax.value_and_grad(jloss)(x), dtype)
        close(s2s.jvp(p, (x,), (np.sin(x),)), jax.jvp(q, (x,), (jnp.sin(x),)), dtype)
        close(s2s.vjp(p, x)[1](weights(out)), jax.vjp(q, x)[1](weights(out)), dtype)
        if n:  # (count 0 at the first example: see test_count_zero_jacrev_is_refused)
            close(s2s.jacrev(p)(x), jax.jacrev(q)(x), dtype)
        if n or name not in NO_VMAP_AT_ZERO:
            batch = np.stack([x, np.sin(x), -x])
            close(s2s.vmap(p)(batch), np.stack([p(row) for row in batch]), dtype)
        close(s2s.jit(p, backend="numpy")(x), q(x), dtype)
        if call == 1:  # (JAX compiles per count: once is enough)
            close(s2s.jacfwd(p)(x), jax.jacfwd(q)(x), dtype)
            close(s2s.hessian(total)(x), jax.hessian(jtotal)(x), dtype)
            close(s2s.jit(p, backend="jax")(x), q(x), dtype)
            close(s2s.jit(s2s.grad(total), backend="jax")(x), jax.grad(jtotal)(x), dtype)


@pytest.mark.parametrize("name", NAMES)
def test_every_splice_in_a_loop_cheaply(name) -> None:  # (sampled: conftest.py)
    """The default tier's sweep (sampled as conftest does), cheap oracles: grad
    (reverse mode, where main read the last iteration's list) against central
    differences at counts 3, 0, 1 in turn (one transformed function: the count an
    argument), jvp's value against Python and its tangent against central
    differences (vmap and s2s.jit: the JAX sweep above)."""
    f = getattr(F, name)

    def loss(y, n):
        return np.sum(f(y, n) * np.cos(y))

    g = s2s.grad(loss)
    for call, n in enumerate(COUNTS, 1):
        x = X * call
        np.testing.assert_allclose(g(x, n), central_grad(functools.partial(loss, n=n), x),
                                   rtol=1e-6, atol=1e-7)
    p = functools.partial(f, n=3)
    value, tangent = s2s.jvp(p, (X,), (np.sin(X),))
    np.testing.assert_allclose(value, p(X), rtol=1e-12)
    step = 1e-6 * np.sin(X)
    np.testing.assert_allclose(tangent, (p(X + step) - p(X - step)) / 2e-6, rtol=1e-6,
                               atol=1e-7)


@pytest.mark.parametrize("name", ["prepend", "inner_prepended", "copy_by_hand"])
def test_one_function_ten_calls(name) -> None:
    """One transformed function (the count an argument: the loops are not unrolled)
    called ten times with other counts and values, the 3rd and the 10th among them:
    its gradient against central differences each time."""
    f = getattr(F, name)

    def loss(y, n):
        return np.sum(f(y, n) * np.cos(y))

    g = s2s.grad(loss)
    for call, n in enumerate((3, 0, 1, 4, 2, 5, 1, 3, 0, 6), 1):
        x = X * (1 + call / 7) * (-1) ** call
        expected = central_grad(functools.partial(loss, n=n), x)
        np.testing.assert_allclose(g(x, n), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name, shape", [
    (name, shape) for name in ("prepend", "inner_appended", "pairs_per_iteration",
                               "copy_plus_items") for shape in [(0,), (1,), (2, 1)]])
def test_odd_shapes(name, shape) -> None:
    """Items of 0-size and size-1 axes: grad against central differences (an empty
    gradient for an empty argument), jvp's value against Python, vmap against a loop."""
    x = np.linspace(-0.8, 0.9, int(np.prod(shape))).reshape(shape)
    for n in (2,):
        p = functools.partial(getattr(F, name), n=n)

        def loss(y):
            return np.sum(p(y) * np.cos(y))

        got = s2s.grad(loss)(x)
        assert got.shape == x.shape
        np.testing.assert_allclose(got, central_grad(loss, x), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(s2s.jvp(p, (x,), (x,))[0], p(x), rtol=1e-12)
        batch = np.stack([x, 2 * x])
        np.testing.assert_allclose(s2s.vmap(p)(batch), np.stack([p(r) for r in batch]),
                                   rtol=1e-12)


@needs_jax
@pytest.mark.slow
def test_the_counts_from_an_argument_against_jax() -> None:
    """The loop's count an argument of the transformed function (3, 0, 1, 4): its
    gradient against JAX's at each call."""
    def total(y, m):
        return np.sum(F.splice_per_iteration(y, m))

    g = s2s.grad(total)
    for call, n in enumerate((3, 0, 1, 4), 1):
        x = X * call
        close(g(x, n), jax.grad(lambda y: jnp.sum(J.splice_per_iteration(y, n)))(x),
              np.float64)


@pytest.mark.slow
def test_count_zero_jacrev_is_refused() -> None:
    """jacrev at a first example whose loop runs no iteration: vmap's probe never
    computed the values of the VJP's copy loop, and the list it accumulates them into
    starts with nothing to say their rank (as for a splice outside a loop, on main):
    refused at the user's line, with what to do instead."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.jacrev(functools.partial(F.splice_per_iteration, n=0))(X)
    err = str(info.value)
    assert f'File "{F.__file__}", line ' in err and "<s2s:" not in err, err
    assert "Instead:" in err, err


def test_an_item_of_a_list_of_lists_is_refused_under_reverse_mode() -> None:
    """``rows[k]`` of a list grown in a loop whose items are grown lists: main added
    the read's cotangent list to the item's with ``+`` (joining the two lists: a
    wrong gradient, silently); refused, located, with what to write instead."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.rows_of_rows)(X, 3)
    err = str(info.value)
    assert "lists of their own length" in err, err
    assert f'File "{F.__file__}", line ' in err and "<s2s:" not in err, err
    assert "Instead:" in err, err
