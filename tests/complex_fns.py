"""Functions of complex values for tests/test_complex.py: real losses of complex
parameters, holomorphic functions, and the complex-part forms (literals, np.imag,
np.angle, .real/.imag/.conj()).  tests/test_complex.py runs each through s2s and,
the same source, through JAX (support.jax_twin)."""

import numpy as np


def least_squares(w, a, y):
    """A complex least-squares loss: real, of a complex parameter."""
    r = a @ w - y
    return np.sum(np.abs(r) ** 2)


def fft_filter(h, x):
    """A real signal filtered by a complex frequency response h."""
    spectrum = np.fft.fft(x) * h
    out = np.fft.ifft(spectrum)
    return np.sum(np.real(out) ** 2) + 0.1 * np.sum(np.abs(h))


def parts(z):
    """The part forms: attributes, methods and functions."""
    u = z.real * z.imag + np.real(z.conj() * z) + np.imag(z * z)
    return np.sum(u + np.angle(z) - np.conj(z).imag)


def literals(x, b):
    """Complex literals of real values."""
    z = x * (0.5 - 2j) + 1j
    c = b * (1 + 2j)
    return np.sum(np.abs(z * c) ** 2) + np.real(c * c)


def built(b):
    """complex(a, b) of real scalars (JAX cannot trace it: finite differences)."""
    c = complex(b, 2.0 * b)
    return np.real(c * c) + abs(c) + complex(b).real


def statistics(z):
    """var, std and norms of a complex array are real."""
    return np.var(z) + np.std(z) + np.linalg.norm(z) + np.real(np.vdot(z, 2 * z))


def holomorphic(z):
    """A holomorphic function with a complex scalar output."""
    return np.sum(z**3 + np.sin(z) * np.exp(z) - 1 / z)


def holomorphic_vector(z):
    """A holomorphic function with a complex vector output."""
    return np.exp(z) * z + np.log(z) * z[0]


def mixed(x, z):
    """A real and a complex parameter meeting in a product."""
    return np.sum(np.abs(x * z + np.tanh(x)) ** 2)


def matrix(m, v):
    """solve, inv and det of a complex matrix, under a real loss."""
    s = np.linalg.solve(m, v)
    return np.sum(np.abs(s) ** 2) + np.abs(np.linalg.det(m)) + np.real(np.trace(np.linalg.inv(m)))


def hermitian(m):
    """cholesky, eigvalsh and slogdet of complex matrices, under a real loss."""
    a = m @ np.conj(m).T + 3 * np.eye(3)
    l = np.linalg.cholesky(a)
    w = np.linalg.eigvalsh(a)
    sign, logdet = np.linalg.slogdet(m + 2 * np.eye(3))
    weights = np.arange(1.0, 4.0)
    return np.sum(np.abs(l) ** 2 * weights) + np.sum(w**2 * weights) + logdet + np.real(
        sign * (1 + 1j))


# Rules written for real values (their derivative on complex ones is not JAX's yet):
# refused on complex values, never a wrong number
def qr_loss(a):
    q, r = np.linalg.qr(a)
    return np.real(np.sum(q * np.conj(q))) + np.real(np.sum(r))


def svd_loss(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s) + np.real(np.sum(u))


def eigh_loss(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w) + np.real(np.sum(v))


def lstsq_loss(a, b):
    x = np.linalg.lstsq(a, b, rcond=None)[0]
    return np.real(np.sum(x * np.conj(x)))


def corrcoef_loss(x):
    return np.real(np.sum(np.corrcoef(x)))
