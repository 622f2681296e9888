"""Rule-table entries for scipy.special (rule_fns_special.py); JAX's equivalents are
under jax.scipy.special.  Without SciPy nothing is registered and there are no rows.
"""

import numpy as np

from rule_table import E2ECase, Row, const, normal, uniform

try:
    import scipy.special  # noqa: F401
except ImportError:  # pragma: no cover - SciPy is optional
    ROWS, E2E = [], []
else:
    import jax.numpy as jnp
    import jax.scipy.special as jss  # (Row.jax paths are looked up under jax)

    import rule_fns_special as F

    def special(name):
        return "scipy.special." + name

    def row(name, variant, args, params=None, **kw):
        """A row for scipy.special.<name>, against jax.scipy.special.<name>."""
        kw.setdefault("jax", JAX.get(name, special(name)))
        if name == "logsumexp" and len(args) < 3:  # (b= left out)
            kw.setdefault("wrt", ("a",))
        return Row(special(name), variant, args, params or {}, **kw)

    def operand(draw, shape):
        return (lambda r: float(draw()(r))) if shape is None else draw(*shape)

    UNARY = {  # name -> drawer of a valid input of a given shape
        "erf": normal, "erfc": normal, "erfinv": uniform(-0.9, 0.9),
        "gammaln": uniform(0.2, 5.0), "digamma": uniform(0.2, 5.0),
        "expit": normal, "logit": uniform(0.05, 0.95),
        "gamma": uniform(0.2, 5.0), "rgamma": uniform(0.2, 5.0),
        "erfcinv": uniform(0.1, 1.9), "i0": normal, "i1": normal, "i0e": normal,
        "i1e": normal, "ndtr": normal, "log_ndtr": normal,
    }
    # jax.scipy.special has no rgamma or erfcinv: JAX's twins spelled with what it has
    JAX = {"rgamma": lambda x: 1 / jss.gamma(x),
           "erfcinv": lambda x: -jss.ndtri(x / 2) / jnp.sqrt(2.0)}
    BINARY = {"xlogy": (normal, uniform(0.2, 3.0)),
              "xlog1py": (normal, uniform(-0.8, 3.0)),
              "beta": (uniform(0.3, 4.0), uniform(0.3, 4.0)),
              "betaln": (uniform(0.3, 4.0), uniform(0.3, 4.0))}
    # differentiable in x only (a derivative into a is refused)
    INCOMPLETE = {"gammainc": (uniform(0.3, 4.0), uniform(0.05, 6.0)),
                  "gammaincc": (uniform(0.3, 4.0), uniform(0.05, 6.0))}
    BROADCASTS = {
        "col_row": ((3, 1), (4,)), "scalar_array": ((), (2, 3)),
        "python_float": ((2, 3), None),
    }
    AXES = {"all": None, "0": 0, "neg": -1, "tuple": (0, 2), "neg_tuple": (-1, 0)}
    KEEPDIMS = {"all": False, "0": True, "neg": False, "tuple": True,
                "neg_tuple": False}
    A = np.array
    NEG_INF = A([[-np.inf, 0.5, 1.0], [2.0, -np.inf, -1.0]])
    ZEROS = np.zeros((2, 3))

    ROWS = (
        [row(n, "matrix", (d(2, 3),)) for n, d in UNARY.items()]
        + [
            row("gammaln", "negative", (uniform(-2.9, -2.1)(2, 3),)),
            row("digamma", "negative", (uniform(-2.9, -2.1)(2, 3),)),
            row("expit", "scalar", (normal(),)),
            # infinite derivatives at the domain's edges, as JAX
            row("logit", "at_edges", (const(A([0.0, 0.5, 1.0])),)),
            row("erfinv", "at_edges", (const(A([-1.0, 0.0, 1.0])),)),
        ]
        + [
            row(n, v, (operand(d1, s1), operand(d2, s2)))
            for n, (d1, d2) in {**BINARY, **INCOMPLETE}.items()
            for v, (s1, s2) in BROADCASTS.items()
        ]
        + [
            # large arguments, the poles' neighbourhood, the support's edge
            row("gamma", "large", (uniform(15.0, 25.0)(2, 3),)),
            row("gamma", "negative", (uniform(-2.9, -2.1)(2, 3),)),
            row("rgamma", "negative", (uniform(-2.9, -2.1)(2, 3),)),
            row("rgamma", "large", (uniform(15.0, 25.0)(3),)),
            row("polygamma", "order_0", (const(0), uniform(0.2, 5.0)(2, 3))),
            row("polygamma", "order_2", (const(2), uniform(0.2, 5.0)(2, 3))),
            row("polygamma", "order_3_scalar", (const(3), uniform(0.5, 2.0)())),
            row("multigammaln", "d_1", (uniform(0.6, 5.0)(2, 3), const(1))),
            row("multigammaln", "d_3", (uniform(1.1, 5.0)(2, 3), const(3))),
            row("multigammaln", "d_4_scalar", (uniform(1.6, 4.0)(), const(4))),
            # (JAX's derivatives of beta and betaln lose 1e-8 relative for large a + b, SciPy's
            # digamma differences do not (mpmath agrees): rows stay where JAX is exact;
            # large betaln is checked by finite differences in test_scipy_rules.py)
            row("beta", "large", (uniform(8.0, 12.0)(3), uniform(8.0, 12.0)(3))),
            # at x = 0: inf for a < 1, 0 for a > 1 (a = 1, where JAX gives NaN and s2s
            # the density 1, is checked by one-sided differences in test_scipy_rules.py)
            row("gammainc", "x_at_zero", (const(A([0.5, 2.5, 3.0])), const(A([0.0, 0.0, 0.0])))),
            row("gammainc", "large_x", (uniform(0.5, 3.0)(3), uniform(20.0, 40.0)(3))),
            row("gammaincc", "large_a", (uniform(30.0, 60.0)(3), uniform(30.0, 60.0)(3))),
            # infinite at 0 and 2, as erfinv(1 - x) in JAX (its ndtri's derivative is 0 there)
            row("erfcinv", "at_edges", (const(A([0.0, 1.0, 2.0])),),
                jax=lambda x: jss.erfinv(1 - x)),
            row("erfcinv", "tails", (const(A([1e-10, 1e-3, 1.999])),)),
            row("i1", "at_zero", (const(A([0.0, 0.5, -1.0])),)),
            row("i1e", "at_zero", (const(A([0.0, 0.5, -1.0])),)),
            row("i0e", "at_zero", (const(A([0.0, 0.5, -1.0])),)),
            row("i0", "large", (uniform(20.0, 40.0)(3),)),
            # far in both tails: d/dx about -x below, about 0 above (no overflow)
            row("log_ndtr", "tails", (const(A([-40.0, -8.0, 8.0, 30.0])),)),
            row("ndtr", "tails", (const(A([-40.0, -8.0, 8.0, 30.0])),)),
            row("i0e", "large", (uniform(-400.0, 400.0)(2, 3),)),
            row("i1e", "large", (uniform(-400.0, 400.0)(2, 3),)),
        ]
        + [
            # JAX's convention at x = 0: d/dx = log(y), d/dy = x / y (-inf, NaN at 0, 0)
            row("xlogy", "x_zero", (const(ZEROS), uniform(0.2, 3.0)(2, 3))),
            row("xlogy", "at_origin", (const(A([0.0, 0.0, 1.0])),
                                       const(A([0.0, 1.0, 0.0])))),
            row("xlog1py", "x_zero", (const(ZEROS), uniform(-0.8, 3.0)(2, 3))),
        ]
        + [
            row("logsumexp", f"axis_{a}{'_keepdims' if KEEPDIMS[a] else ''}",
                (normal(2, 3, 4),), {"axis": axis, "keepdims": KEEPDIMS[a]})
            for a, axis in AXES.items()
        ]
        + [
            # b=: weights, broadcast against a, with zeros, over an axis or all of a
            row("logsumexp", "b_axis_1", (normal(2, 3), const(1), uniform(0.3, 2.0)(3))),
            row("logsumexp", "b_all", (normal(2, 3), const(None), uniform(0.3, 2.0)(2, 3))),
            # (zeros in b: JAX's d/db is 0 there, masking a; exp(a - ans) is the
            # derivative, by finite differences in test_scipy_rules.py; d/da agrees)
            row("logsumexp", "b_zeros", (normal(2, 3), const(0),
                                         const(A([[1.0, 0.0, 2.0], [0.0, 0.5, 1.0]]))),
                wrt=("a",)),
            row("logsumexp", "b_keepdims", (normal(2, 3, 4), const(-1),
                                            uniform(0.3, 2.0)(3, 1)), {"keepdims": True}),
            row("logsumexp", "b_size_one_axis", (normal(1, 3), const(0),
                                                 uniform(0.3, 2.0)(1, 3))),
        ]
        + [
            row("logsumexp", "vector", (normal(5),)),
            row("logsumexp", "neg_inf_entries", (const(NEG_INF),), {"axis": 1}),
        ]
        + [
            row(n, f"axis_{a}", (normal(2, 3, 4),), {"axis": AXES[a]})
            for n, axes in (("softmax", ("all", "neg", "tuple")),
                            ("log_softmax", ("all", "0", "neg_tuple")))
            for a in axes
        ]
        + [
            row("softmax", "neg_inf_entries", (const(NEG_INF),), {"axis": 1}),
            row("log_softmax", "vector", (normal(5),)),
        ]
    )

    E2E = [
        E2ECase(F.f_erf_erfc, (special("erf"), special("erfc"))),
        E2ECase(F.f_erfinv, (special("erfinv"),), (uniform(-0.9, 0.9)(2, 3),)),
        E2ECase(F.f_gammaln_digamma, (special("gammaln"), special("digamma")),
                (uniform(0.2, 5.0)(2, 3),)),
        E2ECase(F.f_expit_logit, (special("expit"), special("logit"))),
        E2ECase(F.f_xlogy_xlog1py, (special("xlogy"), special("xlog1py")),
                (normal(2, 3), uniform(0.2, 3.0)(3))),
        E2ECase(F.f_gamma_rgamma, (special("gamma"), special("rgamma")),
                (uniform(0.3, 4.0)(2, 3),)),
        E2ECase(F.f_gammasgn_polygamma, (special("gammasgn"), special("polygamma")),
                (uniform(0.3, 4.0)(2, 3),)),
        E2ECase(F.f_multigammaln, (special("multigammaln"),), (uniform(0.3, 4.0)(2, 3),)),
        E2ECase(F.f_beta_betaln, (special("beta"), special("betaln")),
                (uniform(0.3, 4.0)(2, 3), uniform(0.3, 4.0)(3))),
        E2ECase(F.f_gammainc_gammaincc, (special("gammainc"), special("gammaincc")),
                (uniform(0.2, 5.0)(2, 3),)),
        E2ECase(F.f_erfcinv, (special("erfcinv"),), (uniform(0.1, 1.9)(2, 3),)),
        E2ECase(F.f_ndtr_log_ndtr, (special("ndtr"), special("log_ndtr"))),
        E2ECase(F.f_bessel, (special("i0"), special("i1"), special("i0e"), special("i1e"))),
        E2ECase(F.f_logsumexp, (special("logsumexp"),)),
        E2ECase(F.f_logsumexp_b, (special("logsumexp"),),
                (normal(2, 3), uniform(0.3, 2.0)(3))),
        E2ECase(F.f_logsumexp_keepdims, (special("logsumexp"),)),
        E2ECase(F.f_logsumexp_sign, (special("logsumexp_sign"),),
                (normal(2, 3), uniform(0.0, 1.0)(2, 3))),
        E2ECase(F.f_softmax, (special("softmax"),)),
        E2ECase(F.f_log_softmax, (special("log_softmax"),)),
        E2ECase(F.f_cross_entropy, (special("log_softmax"),),
                (normal(4, 3), uniform(0.0, 1.0)(4, 3))),
    ]
