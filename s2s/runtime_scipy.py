"""The emitted code's helpers for SciPy: ``scipy.special`` and ``scipy.stats``.

Part of the same ABI as :mod:`s2s.runtime`, which imports every name here (emitted code
says ``from s2s.runtime import special_erf``); they live apart so that runtime.py keeps
to its size.  Each helper is one call into SciPy, imported on first use, so importing
s2s never imports SciPy.  On the JAX backend this module's text runs with
``jax.scipy`` in SciPy's place (:mod:`s2s.backends.jax_runtime_scipy`), so a helper
calls only what both libraries have: ``rgamma`` and ``erfcinv``, missing from
``jax.scipy.special``, are spelled with functions both have.
"""

from __future__ import annotations

import numpy as np


def special_erf(x):
    """``scipy.special.erf``."""
    from scipy import special

    return special.erf(x)


def special_erfc(x):
    """``scipy.special.erfc``."""
    from scipy import special

    return special.erfc(x)


def special_erfinv(x):
    """``scipy.special.erfinv``."""
    from scipy import special

    return special.erfinv(x)


def special_gammaln(x):
    """``scipy.special.gammaln``."""
    from scipy import special

    return special.gammaln(x)


def special_digamma(x):
    """``scipy.special.digamma``."""
    from scipy import special

    return special.digamma(x)


def special_polygamma(n, x):
    """``scipy.special.polygamma``: the n-th derivative of digamma."""
    from scipy import special

    return special.polygamma(n, x)


def special_expit(x):
    """``scipy.special.expit``."""
    from scipy import special

    return special.expit(x)


def special_logit(x):
    """``scipy.special.logit``."""
    from scipy import special

    return special.logit(x)


def special_xlogy(x, y):
    """``scipy.special.xlogy``."""
    from scipy import special

    return special.xlogy(x, y)


def special_xlog1py(x, y):
    """``scipy.special.xlog1py``."""
    from scipy import special

    return special.xlog1py(x, y)


def special_logsumexp(a, axis=None, keepdims=False):
    """``scipy.special.logsumexp`` (without ``b`` and ``return_sign``)."""
    from scipy import special

    return special.logsumexp(a, axis=axis, keepdims=keepdims)


def special_softmax(x, axis=None):
    """``scipy.special.softmax``."""
    from scipy import special

    return special.softmax(x, axis=axis)


def special_log_softmax(x, axis=None):
    """``scipy.special.log_softmax``."""
    from scipy import special

    return special.log_softmax(x, axis=axis)


def special_gamma(x):
    """``scipy.special.gamma``."""
    from scipy import special

    return special.gamma(x)


def special_rgamma(x):
    """``scipy.special.rgamma``, ``1 / gamma(x)``: the sign times
    ``exp(-gammaln(x))``, 0 at the poles (jax.scipy.special has no rgamma)."""
    from scipy import special

    sign = special.gammasgn(x)
    return np.where(np.isnan(sign), 0.0, sign) * np.exp(-special.gammaln(x))


def special_gammasgn(x):
    """``scipy.special.gammasgn``: the sign of ``gamma(x)``."""
    from scipy import special

    return special.gammasgn(x)


def special_multigammaln(a, d):
    """``scipy.special.multigammaln``: ``d`` an integer."""
    from scipy import special

    return special.multigammaln(a, d)


def special_beta(a, b):
    """``scipy.special.beta``."""
    from scipy import special

    return special.beta(a, b)


def special_betaln(a, b):
    """``scipy.special.betaln``."""
    from scipy import special

    return special.betaln(a, b)


def special_gammainc(a, x):
    """``scipy.special.gammainc``: the regularized lower incomplete gamma."""
    from scipy import special

    return special.gammainc(a, x)


def special_gammaincc(a, x):
    """``scipy.special.gammaincc``: ``1 - gammainc(a, x)``."""
    from scipy import special

    return special.gammaincc(a, x)


def special_erfcinv(x):
    """``scipy.special.erfcinv``: ``-ndtri(x / 2) / sqrt(2)`` (jax.scipy.special
    has no erfcinv)."""
    from scipy import special

    return -special.ndtri(0.5 * x) / np.sqrt(2.0)


def special_i0(x):
    """``scipy.special.i0``."""
    from scipy import special

    return special.i0(x)


def special_i1(x):
    """``scipy.special.i1``."""
    from scipy import special

    return special.i1(x)


def special_i0e(x):
    """``scipy.special.i0e``: ``exp(-abs(x)) * i0(x)``."""
    from scipy import special

    return special.i0e(x)


def special_i1e(x):
    """``scipy.special.i1e``: ``exp(-abs(x)) * i1(x)``."""
    from scipy import special

    return special.i1e(x)


__all__ = [
    "special_erf",
    "special_erfc",
    "special_erfinv",
    "special_gammaln",
    "special_digamma",
    "special_polygamma",
    "special_expit",
    "special_logit",
    "special_xlogy",
    "special_xlog1py",
    "special_logsumexp",
    "special_softmax",
    "special_log_softmax",
    "special_gamma",
    "special_rgamma",
    "special_gammasgn",
    "special_multigammaln",
    "special_beta",
    "special_betaln",
    "special_gammainc",
    "special_gammaincc",
    "special_erfcinv",
    "special_i0",
    "special_i1",
    "special_i0e",
    "special_i1e",
]
