"""Functions that draw random numbers (issue 23, item 6), each beside the same
computation with its draws passed in as arguments (``*_given``): JAX differentiates
those (tests/support.py's jax_twin), with the draws NumPy makes from the same seed."""

import numpy as np


def noisy(x):
    z = np.random.normal(size=x.shape)
    return np.sum(np.sin(x) * z)


def noisy_given(x, z):
    return np.sum(np.sin(x) * z)


def draws_unread(x):
    """A draw the gradient never reads: it still runs, so the stream moves on."""
    u = np.random.uniform(size=2)
    z = np.random.randn(3)
    return np.sum(x**2 * z) + np.sum(u)


def draws_unread_given(x, u, z):
    return np.sum(x**2 * z) + np.sum(u)


def in_loop(x):
    s = 0.0
    for _ in range(3):
        z = np.random.normal(size=x.shape)
        s = s + np.sum(np.tanh(x * z))
    return s


def in_loop_given(x, zs):
    s = 0.0
    for k in range(3):
        s = s + np.sum(np.tanh(x * zs[k]))
    return s


def seeded(x, seed):
    rng = np.random.default_rng(seed)
    w = rng.normal(0.0, 2.0, size=(3,))
    return np.sum(x**2 * w) + rng.uniform()


def seeded_given(x, w):
    return np.sum(x**2 * w)


def from_argument(x, rng):
    return np.sum(x * rng.normal(size=x.shape))


def elementwise(x):
    return np.sin(x) * np.random.normal(size=x.shape)


def _noisy_helper(x):
    return x * np.random.normal(size=3)


def calls_noisy(x):
    return np.sum(_noisy_helper(x))


def batched_mean(x):
    return np.random.normal(x, 1.0)


def seeds_inside(x):
    np.random.seed(7)
    return np.sum(x * np.random.rand(3))


def branches_on_array(x):
    if x > 0:
        return np.sum(x)
    return np.sum(-x)


def loops_on_array(x):
    s = x
    while s > 1.0:
        s = s / 2.0
    return np.sum(s)


def _branching_helper(x):
    if x > 0:
        return x
    return -x


def calls_branching(x):
    return np.sum(_branching_helper(x) * 2.0)
