"""Rule-table entries for scipy.stats (rule_fns_stats.py), against jax.scipy.stats.

Each method is a row with every parameter drawn and broadcast against size-1 axes
(x (2, 3), loc (3,), scale (2, 1)); one with loc and scale left to their defaults;
and rows at the support's edge and in the tails.  Without SciPy there are no rows.
"""

import numpy as np

from rule_table import E2ECase, Row, const, normal, uniform

try:
    import scipy.stats  # noqa: F401
except ImportError:  # pragma: no cover - SciPy is optional
    ROWS, E2E = [], []
else:
    import jax.scipy.stats  # noqa: F401  (Row.jax paths are looked up under jax)

    import rule_fns_stats as F

    def stats(dist, method):
        return f"scipy.stats.{dist}.{method}"

    def row(dist, method, variant, args, **kw):
        """A row; where loc and scale are left out, with respect to the rest."""
        prim = scipy_prim(dist, method)
        kw.setdefault("wrt", tuple(p for p in prim.diff if prim.params.index(p) < len(args)))
        return Row(stats(dist, method), variant, args, {}, jax=stats(dist, method), **kw)

    ALL = ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf")
    CDF_LIKE = ("cdf", "logcdf", "sf", "logsf")
    LOC, SCALE = normal(3), uniform(0.5, 2.0)(2, 1)
    # dist: (methods, x's drawer, the shape parameters' drawers)
    FAMILIES = {
        "norm": (ALL, normal(2, 3), ()),
        "laplace": (("pdf", "logpdf", "cdf"), normal(2, 3), ()),
        "logistic": (("pdf", "logpdf", "cdf", "sf"), normal(2, 3), ()),
        "cauchy": (ALL, normal(2, 3), ()),
        "t": (("pdf", "logpdf"), normal(2, 3), (uniform(1.0, 8.0)(3),)),
        "expon": (ALL, uniform(0.1, 4.0)(2, 3), ()),
        "gamma": (ALL, uniform(0.1, 6.0)(2, 3), (uniform(0.5, 4.0)(3),)),
        "chi2": (ALL, uniform(0.1, 6.0)(2, 3), (uniform(1.0, 6.0)(3),)),
        "beta": (ALL, uniform(0.05, 0.95)(2, 3), (uniform(0.5, 3.0)(3),
                                                  uniform(0.5, 3.0)(2, 1))),
    }
    # the supports start at loc: draw loc below x, scale wide enough for beta's x < 1
    BOUNDED = {"expon": uniform(-0.1, 0.0)(3), "gamma": uniform(-0.1, 0.0)(3),
               "chi2": uniform(-0.1, 0.0)(3), "beta": uniform(-0.04, 0.0)(3)}
    BOUNDED_SCALE = {"beta": uniform(1.0, 1.05)(2, 1)}
    A = np.array

    def family_rows(dist, methods, x, shapes):
        loc, scale = BOUNDED.get(dist, LOC), BOUNDED_SCALE.get(dist, SCALE)
        out = []
        for m in methods:
            out.append(row(dist, m, "broadcast", (x, *shapes, loc, scale)))
            out.append(row(dist, m, "defaults", (x, *shapes)))
        return out

    def scipy_prim(dist, method):
        from s2s.primitives import PRIMITIVES, load_all

        load_all()
        return PRIMITIVES[stats(dist, method)]

    EDGES = [
        # tails: logcdf/logsf far out, where cdf/sf are tiny in the ratio pdf / cdf (at
        # -30 JAX's derivative is 1.6e-10 off, SciPy's ratio 1e-13: test_scipy_rules.py)
        row("norm", "logcdf", "left_tail", (const(A([-8.0, -3.0, 5.0])),)),
        row("norm", "logsf", "right_tail", (const(A([8.0, 3.0, -5.0])),)),
        row("norm", "pdf", "large", (const(A([12.0, -20.0, 0.0])),)),
        row("cauchy", "logpdf", "large", (const(A([1e6, -3e4, 0.0])),)),
        row("logistic", "logpdf", "large", (const(A([40.0, -40.0, 0.0])),)),
        row("t", "logpdf", "large_df", (normal(3), const(A([200.0, 1e4, 1.0])))),
        # the support's edge, and outside it (JAX: 0 outside, the one-sided value at it)
        row("expon", "logpdf", "edge", (const(A([0.0, -1.0, 2.0])),)),
        row("expon", "cdf", "edge", (const(A([0.0, -1.0, 2.0])),)),
        row("expon", "sf", "edge", (const(A([0.0, -1.0, 2.0])),)),
        row("laplace", "logpdf", "kink", (const(A([0.0, -1.0, 2.0])),)),
        row("laplace", "cdf", "kink", (const(A([0.0, -1.0, 2.0])),)),
        row("gamma", "logpdf", "edge", (const(A([0.0, -1.0, 2.0])), const(A([2.5, 2.0, 0.5])))),
        row("gamma", "cdf", "edge", (const(A([0.0, -1.0, 30.0])), const(A([2.5, 2.0, 0.5]))),
            wrt=("x",)),
        # (outside the support s2s's derivative is 0; JAX's chi2 and beta logpdf give NaN
        # below it: the rows stay inside, test_scipy_rules.py checks the zeros)
        row("chi2", "logpdf", "edge", (const(A([0.0, 0.5, 2.0])), const(A([3.0, 2.0, 0.5])))),
        row("beta", "logpdf", "edge", (const(A([1.0, 0.0, 0.5])), const(A([2.0, 2.0, 2.0])),
                                       const(A([3.0, 3.0, 3.0])))),
        row("beta", "cdf", "outside", (const(A([-0.5, 1.5, 0.5])), const(A([2.0, 2.0, 2.0])),
                                       const(A([3.0, 3.0, 3.0]))), wrt=("x",)),
    ]
    POISSON = [
        Row(stats("poisson", m), v, args, {}, jax=stats("poisson", m), wrt=("mu",))
        for m in ("pmf", "logpmf", "cdf")
        for v, args in (
            ("broadcast", (const(A([[0.0, 1.0, 4.0], [2.0, 7.0, 3.0]])),
                           uniform(0.3, 5.0)(3), const(A([0.0, 1.0, 0.0])))),
            ("defaults", (const(A([0.0, 3.0, 10.0])), uniform(0.3, 5.0)(3))),
            # k - loc < 0 or not an integer: pmf 0 (logpmf -inf), cdf 0 below 0
            ("off_support", (const(A([-1.0, 2.5, 60.0])), uniform(0.3, 5.0)(3))),
        )
    ]

    def spd(d):
        """A drawer of a (d, d) positive definite covariance."""
        def draw(r):
            a = r.normal(size=(d, d))
            return a @ a.T + d * np.eye(d)
        return draw

    MVN = [
        row("multivariate_normal", m, v, (x, mean, spd(d)))
        for m in ("logpdf", "pdf")
        for v, x, mean, d in (
            ("batch", normal(4, 3), normal(3), 3),
            ("vector", normal(3), normal(3), 3),
            ("batch_2d", normal(2, 4, 2), normal(2), 2),
            ("size_one_batch", normal(1, 3), normal(3), 3),  # (SciPy drops it; JAX not)
            ("one_dim_event", normal(4, 1), normal(1), 1),
        )
    ]

    # quantiles, where jax.scipy.stats has them (q inside (0, 1); near its ends too)
    QUANTILES = [
        r for d, ms in (("norm", ("ppf", "isf")), ("logistic", ("ppf", "isf")),
                        ("cauchy", ("ppf", "isf")), ("expon", ("ppf",)))
        for m in ms
        for r in (row(d, m, "broadcast", (uniform(0.05, 0.95)(2, 3), LOC, SCALE)),
                  row(d, m, "defaults", (uniform(0.05, 0.95)(3),)))
    ] + [row("norm", "ppf", "tails", (const(A([1e-6, 0.5, 1 - 1e-6])),))]

    ROWS = [r for d, (ms, x, sh) in FAMILIES.items() for r in family_rows(d, ms, x, sh)] \
        + EDGES + POISSON + MVN + QUANTILES

    S = stats
    E2E = [
        E2ECase(F.f_stats_norm, tuple(S("norm", m) for m in ALL)),
        E2ECase(F.f_stats_t, (S("t", "logpdf"), S("t", "pdf"))),
        E2ECase(F.f_stats_laplace_logistic,
                tuple(S("laplace", m) for m in ("pdf", "logpdf", "cdf"))
                + tuple(S("logistic", m) for m in ("pdf", "logpdf", "cdf", "sf"))),
        E2ECase(F.f_stats_cauchy, tuple(S("cauchy", m) for m in ALL)),
        E2ECase(F.f_stats_expon, tuple(S("expon", m) for m in ALL), (uniform(0.1, 4.0)(2, 3),)),
        E2ECase(F.f_stats_gamma_chi2, tuple(S(d, m) for d in ("gamma", "chi2") for m in ALL),
                (uniform(0.1, 6.0)(2, 3),)),
        E2ECase(F.f_stats_beta, tuple(S("beta", m) for m in ALL), (uniform(0.05, 0.95)(2, 3),)),
        E2ECase(F.f_stats_beta_shapes, (S("beta", "logpdf"), S("beta", "pdf")),
                (uniform(0.5, 3.0)(2, 3), uniform(0.5, 3.0)(3))),
        E2ECase(F.f_stats_gamma_shape, (S("gamma", "logpdf"), S("t", "logpdf"), S("chi2", "pdf")),
                (uniform(0.5, 3.0)(2, 3),)),
        E2ECase(F.f_stats_mvn, (S("multivariate_normal", "logpdf"),
                                S("multivariate_normal", "pdf")),
                (normal(3, 3), normal(3), normal(3, 3))),
        E2ECase(F.f_stats_quantiles, (S("norm", "ppf"), S("norm", "isf"), S("cauchy", "ppf"),
                                      S("cauchy", "isf"), S("logistic", "ppf"),
                                      S("logistic", "isf"), S("expon", "ppf")),
                (uniform(0.05, 0.95)(2, 3),)),
        E2ECase(F.f_stats_poisson, tuple(S("poisson", m) for m in ("pmf", "logpmf", "cdf")),
                (uniform(0.3, 5.0)(2, 3),)),
    ]
