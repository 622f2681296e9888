"""Functions for the complex-part rows of the rule table (rule_rows_complex.py): real
losses through complex values made from real inputs with complex literals."""

import numpy as np


def f_imag(x):
    return np.sum(np.imag(x * (1 + 2j) + np.sin(x) * 1j) ** 2)


def f_angle(x):
    return np.sum(np.angle(x + 2j) ** 2 + np.angle(np.cos(x) - 0.5j, deg=True))


def f_imag_attribute(x):
    z = np.exp(x * 1j)
    return np.sum(z.imag * z.real + z.conj().imag)


def f_real_if_close(x):
    # the imaginary parts are exactly 0: real_if_close returns real values
    return np.sum(np.real_if_close(x * (1 + 0j)) ** 2)


def f_real_if_close_stays_complex(x):
    return np.sum(np.abs(np.real_if_close(x * (1 + 0.5j))) ** 2)


def f_complex(x):
    c = complex(x[0], x[1] * x[2])
    return abs(c * c) + (c * 2j).real
