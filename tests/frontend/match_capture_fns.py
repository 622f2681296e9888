"""``match`` on a string with a last ``case other:`` (a capture) in a helper the
function calls (tests/frontend/test_match_capture.py); NumPy's and, through
newcomer_harness.twin, JAX's."""

import numpy as np


def activation(x, kind="softplus"):
    match kind:
        case "relu":
            y = np.maximum(x, 0.0)
        case "softplus" | "smooth":
            y = np.logaddexp(x, 0.0)
        case other:
            raise ValueError(f"unknown activation {other}")
    return np.sum(y * np.arange(1, x.shape[0] + 1))


def scaled(x, name="ab"):
    match name:
        case "square":
            y = x * x
        case _ as other:
            y = np.sin(x) * len(other)
    return np.sum(y)


def by_default(x):
    """The helper's default ``kind`` and its other spellings."""
    return activation(x) + 0.5 * activation(x, "smooth") + activation(x * x, kind="relu")


def capture_used(x):
    return scaled(x) + scaled(x, "square") + scaled(x, name="abcd")
