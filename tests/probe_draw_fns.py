"""Functions drawing from module-level generators (tests/test_probe_draws.py)."""

import numpy as np

RNG = np.random.default_rng(5)
STATE = np.random.RandomState(7)


def generator_draw(x):
    return np.sum(x * RNG.normal(size=x.shape))


def random_state_draw(x):
    return np.sum(np.sin(x) * STATE.uniform(size=x.shape))


def draw_value(x):
    return x * RNG.normal(size=x.shape)
