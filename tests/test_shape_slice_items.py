"""An item of a shape's slice (``x_shape = np.shape(x)[1:]``, ``x_shape[0]``) in code
a transform reads again: vmap writes that pair for a loop over an example's axis, and
the integer analysis (transforms/int_items.py) took ``np.shape(x)[1:]`` for an int,
then indexed its empty path: ``jvp``, ``grad`` or ``hessian`` of
``s2s.vmap(loop_continue)`` raised ``IndexError: tuple index out of range`` from inside
s2s (the slow tests/test_closure_matrix.py case loop_continue-vmap-jvp).  Oracle:
central differences of the Python loop over examples (JAX's vmap refuses the `if` on
a batched value)."""

from __future__ import annotations

import numpy as np
from corpus_fns import loop_continue  # (pytest puts tests/ on sys.path)

import s2s


def per_example(xs):
    return np.array([loop_continue(x) for x in xs])


def test_jvp_and_grad_of_vmap_over_a_loop_of_an_examples_axis() -> None:
    v = s2s.vmap(loop_continue)
    rng = np.random.default_rng(0)
    for call in range(1, 4):
        xs = rng.normal(size=(3, 4)) * (0.5 + call)
        t = rng.normal(size=xs.shape)
        out, out_dot = s2s.jvp(v, (xs,), (t,))
        eps = 1e-6
        fd = (per_example(xs + eps * t) - per_example(xs - eps * t)) / (2 * eps)
        np.testing.assert_allclose(out, per_example(xs), rtol=1e-12)
        np.testing.assert_allclose(out_dot, fd, rtol=1e-6, atol=1e-8)
        value, pull = s2s.vjp(v, xs)
        (g,) = pull(2 * value)  # (the gradient of sum(v(xs) ** 2))
        fd_g = np.zeros_like(xs)
        for k in np.ndindex(xs.shape):
            e = np.zeros_like(xs)
            e[k] = eps
            fd_g[k] = (np.sum(per_example(xs + e) ** 2) - np.sum(per_example(xs - e) ** 2)) / (
                2 * eps)
        np.testing.assert_allclose(g, fd_g, rtol=1e-5, atol=1e-7)
