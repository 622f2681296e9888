"""``if`` tests written as literals (decided when s2s transforms the function) and
tests on module constants (read at each call), under second derivatives
(tests/frontend/test_constant_tests.py).  Loaded twice: as written and by
``jax_twin`` with ``np`` bound to ``jax.numpy``."""

import numpy as np

ON = True
SCALE = 2.0


def if_true(x):
    y = x * 2.0
    if True:
        y = y * x
    return np.sum(np.sin(y))


def if_false_else(x):
    if False:
        y = np.sin(x)
    elif 0:
        y = np.exp(x)
    else:
        y = np.cos(x) * x
    return np.sum(y ** 2)


def literal_choice(x):
    y = np.tanh(x) if not False else x
    return np.sum(y * x) + np.sum(x ** 3 if None else x ** 2)


def if_module_constant(x):
    y = x * SCALE
    if ON:
        y = y * x
    return np.sum(np.sin(y))


def if_module_constant_else(x):
    if not ON:
        y = np.exp(x)
    else:
        y = x ** 3
    z = y * x
    if ON:
        z = z + np.tanh(y)
    return np.sum(z)
