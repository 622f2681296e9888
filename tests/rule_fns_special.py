"""Functions for the scipy.special rows of the rule table (see rule_rows_special.py).

s2s sees SciPy's functions; the JAX twin (support.jax_twin rebinds the NumPy import
below to jax.numpy) sees jax.scipy.special's under the same name ``sp``, so both
differentiate the same source text.
"""

import numpy as np
import scipy.special as sp

if np.__name__ == "jax.numpy":  # this is the JAX twin
    import jax.scipy.special as sp

W23 = np.array([[0.3, -1.2, 0.7], [1.5, 0.4, -0.8]])
W3 = np.array([-0.6, 1.1, 0.25])


def f_erf_erfc(x):
    return np.sum((sp.erf(x) + sp.erfc(x) ** 2) * W23)


def f_erfinv(x):
    return np.sum(sp.erfinv(x) * W23)


def f_gammaln_digamma(x):
    return np.sum((sp.gammaln(x) + sp.digamma(x) * x) * W23)


def f_expit_logit(x):
    p = sp.expit(x)
    return np.sum((p + sp.logit(p * 0.8 + 0.1) ** 2) * W23)


def f_xlogy_xlog1py(x, y):
    return np.sum((sp.xlogy(x, y) + sp.xlog1py(x, y) ** 2) * W23)


def f_logsumexp(x):
    return np.sum(sp.logsumexp(x, axis=0) * W3) + sp.logsumexp(x * 2.0)


def f_logsumexp_keepdims(x):
    return np.sum(sp.logsumexp(x, axis=-1, keepdims=True) * x * W23)


def f_softmax(x):
    return np.sum(sp.softmax(x, axis=1) * W23) + np.sum(sp.softmax(x) ** 2)


def f_log_softmax(x):
    return np.sum(sp.log_softmax(x, axis=-1) * W23) + np.sum(sp.log_softmax(x) * W23)


def f_cross_entropy(logits, labels):
    # a classifier's loss: log-probabilities, weighted by (soft) labels
    return -np.mean(np.sum(labels * sp.log_softmax(logits, axis=1), axis=1))


# ---- issue 26.3: gamma, beta, incomplete gamma, Bessel ---------------------------------
# jax.scipy.special has no rgamma or erfcinv: the twin spells them with what it has.
if np.__name__ == "jax.numpy":
    def rgamma(x):
        return 1 / sp.gamma(x)

    def erfcinv(x):
        return -sp.ndtri(x / 2) / np.sqrt(2.0)
else:
    rgamma, erfcinv = sp.rgamma, sp.erfcinv


def f_gamma_rgamma(x):
    return np.sum((sp.gamma(x) + rgamma(x) * x) * W23)


def f_gammasgn_polygamma(x):
    return np.sum((sp.gammasgn(x - 2.5) * sp.polygamma(2, x) + sp.polygamma(1, x)) * W23)


def f_multigammaln(x):
    return np.sum(sp.multigammaln(x + 2.0, 3) * W23) + sp.multigammaln(x[0, 0] + 1.0, 2)


def f_beta_betaln(a, b):
    return np.sum((sp.beta(a, b) + sp.betaln(a, b) ** 2) * W23)


def f_gammainc_gammaincc(x):
    return np.sum((sp.gammainc(1.5, x) + sp.gammaincc(W23 + 2.0, x) ** 2) * W23)


def f_erfcinv(x):
    return np.sum(erfcinv(x) * W23)


def f_ndtr_log_ndtr(x):
    return np.sum((sp.ndtr(x) + sp.log_ndtr(3.0 * x) * x) * W23)


def f_bessel(x):
    return np.sum((sp.i0(x) + sp.i1(x) ** 2 + sp.i0e(x) * x + sp.i1e(x)) * W23)


def f_logsumexp_b(x, w):
    return np.sum(sp.logsumexp(x, axis=1, b=w) * W23[:, 0]) + sp.logsumexp(x, b=x * x)


def f_logsumexp_sign(x, w):
    """return_sign=True with weights of both signs: the sign per row, |sum| logged."""
    out, sign = sp.logsumexp(x, axis=1, b=w - 0.5, return_sign=True)
    whole, whole_sign = sp.logsumexp(x * 2.0, b=W23, return_sign=True, keepdims=True)
    return np.sum(out * sign * W23[:, 0]) + np.sum(whole * whole_sign)
