"""Functions reading scipy.stats distributions' mean, var, std and entropy, for
tests/test_stats_moments.py (the oracle: SciPy's own methods, and finite differences
of them)."""

import numpy as np
from scipy import stats

D = stats.gamma(2.5, 0.5, 2.0)  # frozen at module level: constants


def frozen_norm(loc, scale):
    d = stats.norm(loc, scale)
    return d.entropy() + d.mean() * d.var() + d.std()


def unfrozen(loc, scale):
    total = stats.laplace.entropy(loc, scale) + stats.logistic.var(loc, scale)
    total = total + stats.cauchy.entropy(loc, scale) + stats.expon.mean(loc, scale)
    return total + stats.expon.entropy(scale=scale) * stats.logistic.std(loc, scale)


def shapes(a, b, df):
    total = stats.gamma.entropy(a) + stats.gamma(a, scale=2.0).var()
    total = total + stats.beta(a, b).entropy() + stats.beta.mean(a, b, loc=1.0)
    total = total + stats.beta.std(a, b) * stats.t.entropy(df) + stats.t(df).var()
    return total + stats.chi2(df).entropy() + stats.chi2.std(df, scale=3.0)


def poisson_moments(mu):
    d = stats.poisson(mu)
    return d.mean() * d.var() + d.std()


def module_frozen(x):
    return x * D.entropy() + D.mean() * x**2 + D.std()


def vector_scales(scale):
    return np.sum(stats.norm.entropy(0.0, scale) * stats.gamma.std(2.0, scale=scale))


def poisson_entropy(mu):
    return stats.poisson(mu).entropy()


def loc_free(loc):
    return stats.norm(loc, 1.0).entropy() + stats.cauchy.entropy(loc, 0.5) * loc


def frozen_draws(loc, scale):
    d = stats.norm(loc, scale)
    return np.sum(d.rvs(size=3, random_state=7) * loc) + scale * np.sum(
        stats.gamma.rvs(2.0, size=2, random_state=3))


def module_frozen_draws(x):
    return np.sum(D.rvs(size=4, random_state=5) * x)


def fresh_draws(x):
    return np.sum(stats.norm(0.0, 1.0).rvs(size=2) * x)


# ---- a frozen distribution passed to a function -------------------------------------


def helper(d, x):
    return d.logpdf(x)


def helper_moments(d):
    return d.entropy() + d.mean() * d.std()


def frozen_into_helper(x, loc, scale):
    d = stats.norm(loc, scale)
    return np.sum(helper(d, x)) + helper_moments(d)


def gamma_into_helper(x, a):
    d = stats.gamma(a, scale=2.0)
    return np.sum(helper(d, x) * helper(d, x + 1.0))
