"""A refusal met while s2s transforms code it emitted (vmap of a gradient) at an
emitted `if t:` is located at the user's `if` (found by its test's name), not at a
line of `<s2s:...>` code: the emitted `if` has no quoted statement above it.  The
same function's gradient and hessian, against finite differences."""

from __future__ import annotations

import inspect

import located_second_fns as F
import numpy as np
import pytest
from support import fd_grad

import s2s

X = np.array([0.3, 0.2, 1.4, 0.1])


def test_vmap_of_grad_refusal_is_at_the_users_if() -> None:
    with pytest.raises(s2s.TransformError) as info:
        s2s.vmap(s2s.grad(F.caller_if))(np.stack([X, 2 * X, -X]))
    err = info.value
    assert "<s2s" not in str(err), str(err)
    assert err.loc.file == inspect.getsourcefile(F), str(err)
    assert err.loc.text.strip() == "if np.sum(x) > 0.5:", str(err)
    assert "Instead:" in str(err)


@pytest.mark.parametrize("x", [X, 2 * X])
def test_the_function_itself_differentiates(x) -> None:
    """(hessian where the first example skips the call, x = -X, is still refused:
    `inner_vjp_jvp` was not called by vmap's probe, located in emitted code)"""
    g = s2s.grad(F.caller_if)
    np.testing.assert_allclose(g(x), fd_grad(F.caller_if, (x,), 0)[0], rtol=1e-6, atol=1e-8)
    fd_h = np.stack([fd_grad(lambda v, k=k: g(v)[k], (x,), 0)[0] for k in range(x.size)])
    np.testing.assert_allclose(s2s.hessian(F.caller_if)(x), fd_h, rtol=1e-5, atol=1e-6)
