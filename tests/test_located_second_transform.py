"""A refusal met while s2s transforms code it emitted (vmap of a gradient) at an
emitted `if t:` is located at the user's `if` (found by its test's name), not at a
line of `<s2s:...>` code: the emitted `if` has no quoted statement above it.  The
same function's gradient and hessian, against finite differences."""

from __future__ import annotations

import located_second_fns as F
import numpy as np
import pytest
from support import fd_grad

import s2s

X = np.array([0.3, 0.2, 1.4, 0.1])


def test_vmap_of_grad_of_an_if_on_a_batched_value_that_calls_a_function() -> None:
    """(refused at the user's `if` before the merge of run-time choices under vmap:
    both branches now run on the whole batch, np.where picks per example) against a
    loop of finite-difference gradients, one example on each path."""
    batch = np.stack([X, 2 * X, -X])
    expected = np.stack([fd_grad(F.caller_if, (x,), 0)[0] for x in batch])
    np.testing.assert_allclose(s2s.vmap(s2s.grad(F.caller_if))(batch), expected,
                               rtol=1e-6, atol=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("x", [X, 2 * X, -X])
def test_the_function_itself_differentiates(x) -> None:
    """(x = -X skips the call: its Hessian was refused, "`inner_vjp_jvp` was not
    called by vmap's probe", before callees on the other path were probed)"""
    g = s2s.grad(F.caller_if)
    np.testing.assert_allclose(g(x), fd_grad(F.caller_if, (x,), 0)[0], rtol=1e-6, atol=1e-8)
    fd_h = np.stack([fd_grad(lambda v, k=k: g(v)[k], (x,), 0)[0] for k in range(x.size)])
    np.testing.assert_allclose(s2s.hessian(F.caller_if)(x), fd_h, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_jacobians_of_a_loop_whose_value_changes_rank_once() -> None:
    """(refused until the first iteration was peeled: carry9) against finite
    differences: ``acc = 0.0`` becomes an array in the first iteration."""
    np.testing.assert_allclose(s2s.jacfwd(F.grows_in_a_loop)(X),
                               fd_grad(F.grows_in_a_loop, (X,), 0)[0], rtol=1e-6, atol=1e-8)
    g = s2s.grad(F.grows_in_a_loop)
    fd_h = np.stack([fd_grad(lambda v, k=k: g(v)[k], (X,), 0)[0] for k in range(X.size)])
    np.testing.assert_allclose(s2s.hessian(F.grows_in_a_loop)(X), fd_h, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("transform", [s2s.jacfwd, s2s.hessian])
def test_a_refused_emitted_loop_is_located_at_the_users_loop(transform) -> None:
    """jacfwd (a vmap of the emitted JVP) met its refusal at the emitted `for k in
    range(len(coeffs)):`, which has no quoted statement above it: it named a line of
    `<s2s:...>` code; the loop is found by its index's name.  (A rank that grows at
    every iteration: one rank after the first is what peeling needs.)"""
    with pytest.raises(s2s.TransformError) as err:
        transform(F.grows_rank_every_iteration)(X)
    loc = err.value.loc
    assert loc.file == F.__file__ and loc.text.strip() == "for c in coeffs:", str(err.value)
    assert "<s2s:" not in str(err.value)
