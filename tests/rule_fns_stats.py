"""Functions for the scipy.stats rows of the rule table (see rule_rows_stats.py).

s2s sees SciPy's distributions; the JAX twin (support.jax_twin rebinds the NumPy
import below to jax.numpy) sees jax.scipy.stats' under the same name ``stats``.
"""

import numpy as np
from scipy import stats

if np.__name__ == "jax.numpy":  # this is the JAX twin
    import jax.scipy.stats as stats

W23 = np.array([[0.3, -1.2, 0.7], [1.5, 0.4, -0.8]])
LOC3 = np.array([-0.2, 0.1, 0.3])


def f_stats_norm(x):
    return np.sum((stats.norm.logpdf(x, loc=0.5, scale=2.0) + stats.norm.pdf(x, LOC3)
                   + stats.norm.cdf(x) + stats.norm.logcdf(x, 0.2, 1.5)
                   + stats.norm.sf(x, scale=0.7) + stats.norm.logsf(x, LOC3, 1.2)) * W23)


def f_stats_t(x):
    return np.sum((stats.t.logpdf(x, 3.0, 0.1, 1.5) + stats.t.pdf(x * 2.0, 5.0)) * W23)


def f_stats_laplace_logistic(x):
    return np.sum((stats.laplace.logpdf(x, 0.1, 1.3) + stats.laplace.pdf(x, LOC3)
                   + stats.laplace.cdf(x, scale=2.0) + stats.logistic.logpdf(x, 0.2)
                   + stats.logistic.pdf(x, 0.0, 1.5) + stats.logistic.cdf(x, LOC3)
                   + stats.logistic.sf(x, scale=0.8)) * W23)


def f_stats_cauchy(x):
    return np.sum((stats.cauchy.logpdf(x, 0.1, 1.3) + stats.cauchy.pdf(x, LOC3)
                   + stats.cauchy.cdf(x, scale=2.0) + stats.cauchy.logcdf(x, 0.2)
                   + stats.cauchy.sf(x, 0.0, 1.5) + stats.cauchy.logsf(x, LOC3)) * W23)


def f_stats_expon(x):
    # x > 0 is drawn: every point is inside the support
    return np.sum((stats.expon.logpdf(x, 0.0, 1.3) + stats.expon.pdf(x, scale=2.0)
                   + stats.expon.cdf(x) + stats.expon.logcdf(x, -0.1)
                   + stats.expon.sf(x, 0.0, 1.5) + stats.expon.logsf(x, scale=0.5)) * W23)


def f_stats_gamma_chi2(x):
    return np.sum((stats.gamma.logpdf(x, 2.5) + stats.gamma.pdf(x, 1.5, 0.0, 2.0)
                   + stats.gamma.cdf(x, 3.0) + stats.gamma.logcdf(x, 2.0, scale=0.5)
                   + stats.gamma.sf(x, 1.2) + stats.gamma.logsf(x, 0.7)
                   + stats.chi2.logpdf(x, 3.0) + stats.chi2.pdf(x, 4.0, scale=1.5)
                   + stats.chi2.cdf(x, 2.5) + stats.chi2.logcdf(x, 5.0)
                   + stats.chi2.sf(x, 1.5) + stats.chi2.logsf(x, 3.0, -0.1)) * W23)


def f_stats_beta(x):
    # x in (0, 1) is drawn
    return np.sum((stats.beta.logpdf(x, 2.5, 1.5) + stats.beta.pdf(x, 1.5, 3.0)
                   + stats.beta.cdf(x, 2.0, 2.0) + stats.beta.logcdf(x, 0.8, 1.2)
                   + stats.beta.sf(x, 3.0, 1.2) + stats.beta.logsf(x, 1.1, 2.1)) * W23)


def f_stats_beta_shapes(a, b):
    return np.sum(stats.beta.logpdf(0.3, a, b) * W23) + np.sum(stats.beta.pdf(0.6, a, b))


def f_stats_gamma_shape(a):
    return np.sum((stats.gamma.logpdf(1.5, a, 0.0, 2.0) + stats.t.logpdf(0.4, a * 3.0)
                   + stats.chi2.pdf(2.0, a * 2.0)) * W23)


def f_stats_poisson(mu):
    k = np.array([[0.0, 1.0, 4.0], [2.0, 7.0, 3.0]])
    return np.sum((stats.poisson.logpmf(k, mu) + stats.poisson.pmf(k, mu * 2.0)
                   + stats.poisson.cdf(k, mu, 1.0)) * W23)


def f_stats_mvn(x, mean, a):
    cov = a @ a.T + 3.0 * np.eye(3)  # positive definite for every drawn a
    return np.sum(stats.multivariate_normal.logpdf(x, mean, cov) * W23[0]) \
        + np.sum(stats.multivariate_normal.pdf(x[0], mean=mean, cov=cov))


def f_stats_quantiles(q):
    return np.sum((stats.norm.ppf(q, LOC3, 1.5) + stats.norm.isf(q) + stats.cauchy.ppf(q, 0.2)
                   + stats.cauchy.isf(q, scale=1.2) + stats.logistic.ppf(q, LOC3)
                   + stats.logistic.isf(q, scale=0.8) + stats.expon.ppf(q, LOC3, 2.0)) * W23)
