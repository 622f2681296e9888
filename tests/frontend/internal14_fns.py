"""Functions of issue 23's internal14 pass (``test_internal14.py``): composed
transforms that raised errors from emitted code, refusals located at emitted code, and
float32 programs whose results or warnings were float64's.  The tests run each function
here and its JAX twin (``support.jax_twin``)."""

import numpy as np


def polyder_of_constant(c, t=np.linspace(-1.0, 1.0, 5)):
    dv = np.polyval(np.polyder(c), t)
    return np.sum(dv ** 2) + np.sum(np.polyval(c, t) * t)


def polyder_at(c, t):
    return np.sum(np.polyval(np.polyder(c), t) * t + np.polyval(c, t) ** 2)
