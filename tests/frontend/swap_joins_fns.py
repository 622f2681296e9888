"""Functions of tests/frontend/test_swap_joins.py (issue 23): a join
(``np.concatenate([edge, interior, edge])``) carried through a loop by a tuple swap
(``u_prev, u = u, 2 * u - u_prev + c2 * lap``), probe 13's ``wave_leapfrog_swap`` and
variants: edges made from the values, the step in a callee, a three-way rotation.
Written with ``np``: the test's JAX twin runs the same source with ``jax.numpy``."""

import numpy as np


def wave_swap_steps(u0, c2=0.3, steps=5):
    u_prev, u = u0, u0
    for _ in range(steps):
        edge = np.zeros(1)
        lap = np.concatenate([edge, u[2:] - 2 * u[1:-1] + u[:-2], edge])
        u_prev, u = u, 2 * u - u_prev + c2 * lap
    return np.sum(u ** 2) + u[1] * u_prev[2]


def wave_value_edges(u0):
    u_prev, u = u0 * 0.9, u0
    for _ in range(4):
        lap = np.concatenate([u[:1] * 0.5, u[2:] - 2 * u[1:-1] + u[:-2], np.tanh(u[-1:])])
        u_prev, u = u, 2 * u - u_prev + 0.2 * lap
    return np.sum(np.sin(u)) * np.sum(u_prev)


def _leap(u, u_prev, c2):
    lap = np.concatenate([np.zeros(1), u[2:] - 2 * u[1:-1] + u[:-2], np.zeros(1)])
    return 2 * u - u_prev + c2 * lap


def wave_step_in_callee(u0):
    u_prev, u = u0, u0 * 1.1
    for _ in range(3):
        u_prev, u = u, _leap(u, u_prev, 0.25)
    return np.sum(u * u_prev)


def three_way_rotation(x):
    a, b, c = x, x[::-1], x * 0.5
    for _ in range(3):
        a, b, c = b, c, a + 0.3 * np.concatenate([c[1:], b[:1]])
    return np.sum(a * b) + np.sum(c ** 2)
