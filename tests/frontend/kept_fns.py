"""Functions with statements that have no derivative (assert, `if ...: raise`, print,
logging, warnings), kept by s2s in the emitted forward sweep; the oracle is JAX on
this same source (tests/support.jax_twin), which accepts each of them under tracing
(asserts and raises on static facts, print of tracers)."""

import logging
import warnings

import numpy as np

LOG = logging.getLogger("s2s.tests.kept")


def checked(x):
    assert x.ndim == 1, "need a vector"
    y = np.sin(x)
    print("y", y)
    y = y * x
    return np.sum(y**2)


def raises_static(x):
    if x.shape[0] < 2:
        raise ValueError(f"need two entries, got {x.shape[0]}")
    return np.sum(np.tanh(x) * x)


def raises_on_value(x):
    y = np.exp(x)
    if np.any(y > 1e6):
        raise ValueError(f"overflowing: {np.max(y)}")
    return np.sum(y * x)


def logs(x):
    y = np.cos(x)
    LOG.info("y is %s", y)
    logging.debug("debug %s", y)
    warnings.warn("careful")
    return np.sum(y * y)


def in_loop(x):
    s = np.zeros_like(x)
    for i in range(3):
        s = s + np.sin(x) * (i + 1)
        print("step", i, s)
    return np.sum(s * s)


def printing_callee(v):
    print("callee", v)
    return np.sin(v) * v


def calls_printer(x):
    return np.sum(printing_callee(x) ** 2)


def per_example(x):
    assert x > 0, "positive"
    print("x", x)
    return np.log(x) * x


def per_example_all(x):
    assert np.all(x > 0), "positive"
    assert x.ndim == 1, "one example is a vector"
    return np.sum(np.log(x) * x)


def vector_out(x):
    assert x.ndim == 1, "need a vector"
    print("x", x)
    return np.sin(x) * x[0]


def calls_linear_printer(x):
    # the gradient never reads printing_callee's value: only its print needs the call
    return np.sum(printing_callee(x))
