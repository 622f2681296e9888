"""A loop-carried item that starts as a constant (``t = (x, 0.0)``, then ``t = (t[0] *
2.0, t[1] + 1.0)`` in a loop) is carried, never read as the constant it starts as.
After a merge, grad, jvp and vmap read ``t[1]`` as ``0.0`` in every iteration: a zero
gradient, silently (the unrolling pass substituted the constant for the loop's entry
name).  Oracles: central differences and a Python loop."""

from __future__ import annotations

import numpy as np

import s2s


def tuple_carry(x):
    t = (x, 0.0)
    while np.sum(t[0]) < 5.0:
        t = (t[0] * 2.0, t[1] + 1.0)
    return t[0] * t[1]


def summed(x):
    return np.sum(tuple_carry(x) ** 2)


def test_a_carried_item_that_starts_constant_is_carried() -> None:
    g = s2s.grad(summed)
    for scale in (1.0, 0.3, 2.5):  # (1, 2 and 4 iterations)
        x = np.array([0.3, 0.9, 0.5, -0.2, 0.4]) * scale
        fd = np.array([(summed(x + 1e-6 * e) - summed(x - 1e-6 * e)) / 2e-6
                       for e in np.eye(x.size)])
        np.testing.assert_allclose(g(x), fd, rtol=1e-6, atol=1e-8)
        v = x[::-1].copy()
        _, tangent = s2s.jvp(tuple_carry, (x,), (v,))
        fd_dir = (tuple_carry(x + 1e-6 * v) - tuple_carry(x - 1e-6 * v)) / 2e-6
        np.testing.assert_allclose(tangent, fd_dir, rtol=1e-6, atol=1e-8)
    rows = np.array([[0.3, 0.9, 0.5, -0.2, 0.4], [1.5, 0.2, 0.1, 0.1, 0.1]])
    np.testing.assert_allclose(s2s.vmap(tuple_carry)(rows),
                               np.stack([tuple_carry(r) for r in rows]))
